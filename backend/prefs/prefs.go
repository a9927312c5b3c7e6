// Package prefs keeps the app-wide preferences (not a project's settings) in
// $XDG_CONFIG_HOME/shepherd/prefs.json, and carries out the ones that live
// outside Shepherd: starting at login.
package prefs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"shepherd/backend/paths"
	"shepherd/backend/store"
)

// Prefs are the app's own preferences.
type Prefs struct {
	// StopAgentsOnQuit stops every running agent when Shepherd quits (the
	// app menu, `shepherd quit`). Off by default: agents are durable and
	// outlive the app.
	StopAgentsOnQuit bool `json:"stopAgentsOnQuit"`
	// StartAtLogin starts Shepherd, hidden, when the user logs in (an XDG
	// autostart entry on Linux, a LaunchAgent on macOS).
	StartAtLogin bool `json:"startAtLogin"`
}

// Path is where the preferences are kept.
func Path() string {
	return filepath.Join(paths.Default().Config, "prefs.json")
}

// Load reads the preferences; none saved yet (or unreadable) is the
// defaults, and an unreadable file is said in the error.
func Load() (Prefs, error) {
	var p Prefs
	b, err := os.ReadFile(Path())
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return Prefs{}, fmt.Errorf("%s is not valid: %w", Path(), err)
	}
	return p, nil
}

// Save writes the preferences and applies StartAtLogin (exe is the program
// to start at login).
func Save(p Prefs, exe string) (Prefs, error) {
	if err := SetStartAtLogin(p.StartAtLogin, exe); err != nil {
		return Prefs{}, fmt.Errorf("start at login: %w", err)
	}
	if err := store.WriteJSON(Path(), p); err != nil {
		return Prefs{}, fmt.Errorf("cannot save the preferences: %w", err)
	}
	return p, nil
}
