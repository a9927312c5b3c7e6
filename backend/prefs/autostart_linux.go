package prefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"shepherd/backend/paths"
	"shepherd/backend/store"
)

// AutostartPath is the XDG autostart entry that starts Shepherd at login.
func AutostartPath() string {
	return filepath.Join(paths.Default().ConfigHome, "autostart", "shepherd.desktop")
}

// SetStartAtLogin writes (on) or removes (off) the autostart entry, which
// runs exe --hidden.
func SetStartAtLogin(on bool, exe string) error {
	path := AutostartPath()
	if !on {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if exe == "" || strings.ContainsAny(exe, "\n") {
		return fmt.Errorf("no usable path of the program to start (%q)", exe)
	}
	entry := "[Desktop Entry]\nType=Application\nName=Shepherd\n" +
		"Comment=Supervises your AI coding agents\n" +
		"Exec=" + desktopQuote(exe) + " --hidden\n" +
		"Terminal=false\nX-GNOME-Autostart-enabled=true\n"
	return store.WriteFile(path, []byte(entry), 0o644)
}

// desktopQuote quotes a path for an Exec key (the Desktop Entry spec's
// quoting: double quotes, with ", `, $ and \ escaped).
func desktopQuote(s string) string {
	if !strings.ContainsAny(s, " \t\"'`$\\") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "`", "\\`", `$`, `\$`)
	return `"` + r.Replace(s) + `"`
}
