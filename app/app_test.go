package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shepherd/backend/instance"
)

func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, v := range []string{"XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"} {
		t.Setenv(v, filepath.Join(dir, strings.ToLower(v)))
	}
	return dir
}

func TestVersion(t *testing.T) {
	if got := New("1.2.3").Version(); got != "1.2.3" {
		t.Fatalf("Version() = %q, want %q", got, "1.2.3")
	}
}

// The window embeds the same engine and API as `shepherd serve`: start-up
// starts it and writes engine.json; a second app on the same data folder is
// told why it has no engine; shutdown removes engine.json.
func TestStartupEmbedsEngine(t *testing.T) {
	dir := isolate(t)
	a := New("test")
	ctx := context.WithValue(context.Background(), struct{}{}, "wails")
	OnStartup(a)(ctx)
	if a.wailsContext() != ctx {
		t.Fatal("startup did not keep the context")
	}
	st, err := a.Engine()
	if err != nil || !strings.HasPrefix(st.URL, "http://127.0.0.1:") || st.PID != os.Getpid() {
		t.Fatalf("Engine() = %+v, %v", st, err)
	}
	engineFile := filepath.Join(dir, "xdg_runtime_dir", "shepherd", "engine.json")
	if _, err := os.Stat(engineFile); err != nil {
		t.Fatalf("engine.json: %v", err)
	}

	b := New("test")
	OnStartup(b)(ctx)
	if _, err := b.Engine(); !errors.Is(err, instance.ErrLocked) {
		t.Fatalf("second app: %v, want the engine lock's error", err)
	}
	OnShutdown(b)(ctx)

	OnShutdown(a)(ctx)
	if _, err := os.Stat(engineFile); !os.IsNotExist(err) {
		t.Fatalf("engine.json left after shutdown: %v", err)
	}
	if _, err := a.Engine(); err == nil {
		t.Fatal("Engine() after shutdown reports a running engine")
	}
}

func TestFocusBeforeStartupIsSafe(t *testing.T) {
	Focus(New("test"))
}
