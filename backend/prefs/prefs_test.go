package prefs

import (
	"os"
	"strings"
	"testing"
)

func TestSaveLoadAndAutostart(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	if p, err := Load(); err != nil || p != (Prefs{}) {
		t.Fatalf("defaults: %+v %v", p, err)
	}
	exe := "/opt/My Apps/shepherd"
	if _, err := Save(Prefs{StopAgentsOnQuit: true, StartAtLogin: true}, exe); err != nil {
		t.Fatal(err)
	}
	p, err := Load()
	if err != nil || !p.StopAgentsOnQuit || !p.StartAtLogin {
		t.Fatalf("load: %+v %v", p, err)
	}
	b, err := os.ReadFile(AutostartPath())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"/opt/My Apps/shepherd" --hidden`) && !strings.Contains(string(b), "<string>--hidden</string>") {
		t.Fatalf("autostart entry:\n%s", b)
	}
	if _, err := Save(Prefs{}, exe); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(AutostartPath()); !os.IsNotExist(err) {
		t.Fatalf("autostart entry left after turning it off: %v", err)
	}
	os.WriteFile(Path(), []byte("{nope"), 0o600)
	if _, err := Load(); err == nil || !strings.Contains(err.Error(), "not valid") {
		t.Fatalf("bad file: %v", err)
	}
}
