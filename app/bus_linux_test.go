package app

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// A session bus is an address, or a socket at $XDG_RUNTIME_DIR/bus; the
// address PrepareSessionBus sets where there is none counts as none (so
// notifications stay off instead of launching a bus).
func TestSessionBusAddress(t *testing.T) {
	withSocket := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(withSocket, "bus"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tc := range []struct {
		name, addr, runtime, want string
	}{
		{"an address", "unix:path=/run/user/1/bus", "", "unix:path=/run/user/1/bus"},
		{"the socket in the runtime folder", "", withSocket, "unix:path=" + filepath.Join(withSocket, "bus")},
		{"nothing", "", t.TempDir(), ""},
		{"no runtime folder", "", "", ""},
		{"the no-bus address", noBusAddress, withSocket, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"DBUS_SESSION_BUS_ADDRESS": tc.addr, "XDG_RUNTIME_DIR": tc.runtime}
			if got := sessionBusAddress(func(k string) string { return env[k] }); got != tc.want {
				t.Fatalf("sessionBusAddress = %q, want %q", got, tc.want)
			}
		})
	}
}

// With no bus at all, PrepareSessionBus points GLib, godbus and beeep at no
// bus and turns the accessibility bridge off; with one, it changes nothing.
func TestPrepareSessionBus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("NO_AT_BRIDGE", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	PrepareSessionBus()
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != noBusAddress || os.Getenv("NO_AT_BRIDGE") != "1" {
		t.Fatalf("no bus: address %q, NO_AT_BRIDGE %q", a, os.Getenv("NO_AT_BRIDGE"))
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1/bus")
	t.Setenv("NO_AT_BRIDGE", "")
	PrepareSessionBus()
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != "unix:path=/run/user/1/bus" || os.Getenv("NO_AT_BRIDGE") != "" {
		t.Fatalf("a bus: address %q, NO_AT_BRIDGE %q", a, os.Getenv("NO_AT_BRIDGE"))
	}
}
