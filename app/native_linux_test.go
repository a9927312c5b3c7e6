package app

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"shepherd/backend/notify"
)

// dbusDaemons counts the dbus-daemon processes on the machine.
func dbusDaemons() int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err == nil && strings.TrimSpace(string(b)) == "dbus-daemon" {
			n++
		}
	}
	return n
}

// With no session bus the real notifier (real beeep behind it) leaves no
// stray dbus-daemon behind, however many notifications it is given.
func TestNoStrayDbusDaemonWithoutSessionBus(t *testing.T) {
	// Without dbus-launch no client can start a daemon, and the test would
	// pass whatever the notifier did; scripts/setup.sh --test installs it.
	if _, err := exec.LookPath("dbus-launch"); err != nil {
		t.Fatal("dbus-launch (Debian dbus-x11) is needed to test this: run scripts/setup.sh --test")
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	os.Unsetenv("DBUS_SESSION_BUS_ADDRESS")
	before := dbusDaemons()
	n := newNativeNotifier(nopLogger)
	for range 3 {
		n.Notify(notify.Notification{Title: "Agent failed", Message: "boom", Native: true})
	}
	time.Sleep(300 * time.Millisecond)
	if after := dbusDaemons(); after > before {
		t.Fatalf("%d dbus-daemon processes after notifying, %d before", after, before)
	}
}
