package supervisor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shepherd/backend/lifecycle"
	"shepherd/backend/presets"
	"shepherd/backend/sandbox"
)

func TestBoxLimitSettings(t *testing.T) {
	d := DefaultSettings()
	if d.BoxMaxProcesses != sandbox.DefaultProcesses || d.BoxShmMiB != sandbox.DefaultShmMiB || d.BoxMemoryMiB != sandbox.DefaultMemoryMiB() {
		t.Fatalf("defaults %+v", d)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(*Settings){
		func(s *Settings) { s.BoxMaxProcesses = 10 },
		func(s *Settings) { s.BoxMaxProcesses = -1 },
		func(s *Settings) { s.BoxMemoryMiB = 100 },
		func(s *Settings) { s.BoxShmMiB = 1 << 30 },
	} {
		s := DefaultSettings()
		bad(&s)
		if err := s.Validate(); !errors.Is(err, ErrValidation) || !strings.Contains(err.Error(), "0 (no limit)") {
			t.Errorf("%+v: %v", s, err)
		}
	}
	none := DefaultSettings()
	none.BoxMaxProcesses, none.BoxMemoryMiB, none.BoxShmMiB = 0, 0, 0
	if err := none.Validate(); err != nil {
		t.Fatal(err)
	}
	if l := none.BoxLimits(); l != (sandbox.Limits{}) {
		t.Fatalf("%+v", l)
	}
}

// A preset's folder is made only for a request that passed every check:
// an agent that cannot grant it gets PermissionDenied and nothing is made.
func TestPresetFolderMadeOnlyAfterChecks(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	h := newHarness(t)
	h.create(AgentSpec{ID: "boxed", Command: "/bin/true", Permissions: perms()})
	_, err := h.e.CreateAgent(h.project.ID, AgentSpec{ID: "child", Command: "claude", Profile: presets.Claude.Profile,
		Caller: &AgentRef{ProjectID: h.project.ID, AgentID: "boxed"}})
	wantKind(t, err, ErrPermissionDenied, "cannot grant @write:"+home+"/.claude")
	if _, err := os.Stat(home + "/.claude"); err == nil {
		t.Fatal("~/.claude was made for a refused request")
	}
	r, err := h.e.CreateAgent(h.project.ID, AgentSpec{ID: "mine", Command: "claude", Profile: presets.Claude.Profile, Permissions: perms()})
	if err != nil || r.Sandbox == nil || len(r.Sandbox.WriteDirs) != 1 || r.Sandbox.WriteDirs[0] != home+"/.claude" ||
		r.Env["CLAUDE_CONFIG_DIR"] != home+"/.claude" {
		t.Fatalf("the user's: %+v %v", r, err)
	}
}

// The configuration a box must not write is made at its start, not at its
// creation, and not for a start refused; then it is read-only in the box
// while the grant around it stays writable.
func TestBoxConfigMadeAtStartAndKept(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	noLandlock := func(c *Config) {
		c.SandboxProbe = func() sandbox.Support {
			return sandbox.Support{OS: "linux", LandlockError: "test: no Landlock here", NetNS: true}
		}
	}
	h0 := newHarness(t, noLandlock)
	h0.create(AgentSpec{ID: "refused", Command: "/bin/true", Permissions: perms("@write:" + home)})
	_, err := h0.e.StartAgent(context.Background(), h0.project.ID, "refused")
	wantKind(t, err, ErrSandboxUnavailable, "Landlock")
	if _, err := os.Stat(home + "/.claude"); err == nil {
		t.Fatal("configuration made for a start that was refused")
	}

	h := newHarness(t)
	requireSandbox(t, h)
	settings := filepath.Join(home, ".claude", "settings.json")
	h.create(AgentSpec{ID: "w", Command: "/bin/sh", Permissions: perms("@write:" + home),
		Args: []string{"-c", "echo '{\"hooks\":1}' > " + settings + " && echo WROTE-SETTINGS; echo ok > " + home + "/.claude/mine && echo WROTE-STATE"}})
	if _, err := os.Stat(settings); err == nil {
		t.Fatal("made at creation")
	}
	h.start("w")
	r := h.waitStatus("w", lifecycle.Completed)
	b, _ := os.ReadFile(r.LogPath)
	if strings.Contains(string(b), "WROTE-SETTINGS") || !strings.Contains(string(b), "WROTE-STATE") {
		t.Fatalf("log:\n%s", b)
	}
	if got, _ := os.ReadFile(settings); string(got) != "{}\n" {
		t.Fatalf("settings.json: %q", got)
	}
}
