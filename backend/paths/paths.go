// Package paths resolves every folder Shepherd uses through the XDG base
// directory rules (github.com/adrg/xdg), so that tests and users can move them
// with XDG_DATA_HOME, XDG_STATE_HOME and XDG_RUNTIME_DIR.
package paths

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/adrg/xdg"
)

const appDir = "shepherd"

// Paths are the folders of one Shepherd installation.
type Paths struct {
	Data    string // projects, records, logs
	State   string // the app's own log
	Runtime string // engine.json of the running engine
	Config  string // the app's preferences
	// ConfigHome is $XDG_CONFIG_HOME itself (autostart entries live there).
	ConfigHome string
}

// reload guards xdg.Reload, which rewrites the xdg package's variables:
// two goroutines resolving paths at once (the engine and a CLI call in the
// same process) must not race on them.
var reload sync.Mutex

// Default reads the XDG environment now (xdg.Reload), so a change of the
// variables after start-up (tests) is honoured.
func Default() Paths {
	reload.Lock()
	defer reload.Unlock()
	xdg.Reload()
	return Paths{
		Data:       filepath.Join(xdg.DataHome, appDir),
		State:      filepath.Join(xdg.StateHome, appDir),
		Runtime:    filepath.Join(xdg.RuntimeDir, appDir),
		Config:     filepath.Join(xdg.ConfigHome, appDir),
		ConfigHome: xdg.ConfigHome,
	}
}

// EngineFile is where the running engine writes {"url","token","pid"}.
func (p Paths) EngineFile() string { return filepath.Join(p.Runtime, "engine.json") }

// LockFile is held by the one engine that owns Data.
func (p Paths) LockFile() string { return filepath.Join(p.Data, "engine.lock") }

// AppLog is the app's own zerolog file.
func (p Paths) AppLog() string { return filepath.Join(p.State, "shepherd.log") }

// Ensure creates the folders with mode 0700 — all of them, so that each is
// hidden from sandboxed agents (an agent granted a folder above one that did
// not exist yet could otherwise make it, and plant what Shepherd reads).
func (p Paths) Ensure() error {
	for _, d := range []string{p.Data, p.State, p.Runtime, p.Config} {
		if d == "" {
			continue
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// EngineConsole is where an engine started by the window writes its console
// (stderr): the same lines as AppLog, plus anything it says before its log
// is open or when it fails to start.
func (p Paths) EngineConsole() string { return filepath.Join(p.State, "engine-console.log") }
