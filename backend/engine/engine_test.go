package engine

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"shepherd/backend/api"
	"shepherd/backend/supervisor"
	"shepherd/internal/testutil"
)

// A window attached to the engine asks it where a command is: the engine's
// PATH and the engine's view of the folder, not the window's.
func TestLookPathThroughTheAPI(t *testing.T) {
	p := testutil.Isolate(t)
	l := zerolog.Nop()
	h, err := Start(context.Background(), Options{Paths: &p, Console: io.Discard, Logger: &l, ShimPath: "/nonexistent"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	dir := t.TempDir()
	tool := filepath.Join(dir, "tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	r := api.NewRemote(h.Info)
	if got, err := r.LookPath("sh", ""); err != nil || got == "" {
		t.Fatalf("sh: %q %v", got, err)
	}
	if got, err := r.LookPath("./tool", dir); err != nil || got != tool {
		t.Fatalf("./tool: %q %v, want %s", got, err, tool)
	}
	_, err = r.LookPath("no-such-command-shepherd", dir)
	if !errors.Is(err, supervisor.ErrValidation) {
		t.Fatalf("a missing command: %v", err)
	}
}
