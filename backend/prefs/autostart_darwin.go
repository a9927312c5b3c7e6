package prefs

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"shepherd/backend/store"
)

// AutostartPath is the LaunchAgent that starts Shepherd at login.
func AutostartPath() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, "Library", "LaunchAgents", "dev.shepherd.app.plist")
}

// SetStartAtLogin writes (on) or removes (off) the LaunchAgent, which runs
// exe --hidden at login.
func SetStartAtLogin(on bool, exe string) error {
	path := AutostartPath()
	if !on {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if exe == "" {
		return fmt.Errorf("no path of the program to start")
	}
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(exe))
	plist := `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key><string>dev.shepherd.app</string>
	<key>ProgramArguments</key>
	<array><string>` + b.String() + `</string><string>--hidden</string></array>
	<key>RunAtLoad</key><true/>
	<key>ProcessType</key><string>Interactive</string>
</dict>
</plist>
`
	return store.WriteFile(path, []byte(plist), 0o644)
}
