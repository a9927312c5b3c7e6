package app

import (
	"os"
	"path/filepath"
)

// noBusAddress is a session bus address that is none: GLib, godbus and
// beeep fail to connect to it at once instead of auto-launching a bus.
const noBusAddress = "disabled:"

// PrepareSessionBus runs before GTK starts. Where there is no session bus
// (no DBUS_SESSION_BUS_ADDRESS and no $XDG_RUNTIME_DIR/bus: ssh -X, a bare
// X server), GLib (GTK, WebKit) and godbus (Wails' single-instance lock)
// would each launch a dbus-daemon, and GTK an accessibility bus, that all
// outlive the app. An address that is no bus, and no accessibility bridge,
// stop that; notifications then say once that they are off.
func PrepareSessionBus() {
	if sessionBusAddress(os.Getenv) != "" {
		return
	}
	os.Setenv("DBUS_SESSION_BUS_ADDRESS", noBusAddress)
	os.Setenv("NO_AT_BRIDGE", "1")
}

// sessionBusAddress is where the session bus is, "" when there is none.
func sessionBusAddress(getenv func(string) string) string {
	if a := getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" {
		if a == noBusAddress {
			return ""
		}
		return a
	}
	if rt := getenv("XDG_RUNTIME_DIR"); rt != "" {
		sock := filepath.Join(rt, "bus")
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return "unix:path=" + sock
		}
	}
	return ""
}
