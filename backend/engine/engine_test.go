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
	c := api.NewClient(h.Info)
	lookup := func(command, cwd string) (string, error) {
		a, err := api.Call(context.Background(), c, api.LookupCommand, api.LookupIn{Command: command, Cwd: cwd})
		if err != nil {
			return "", err
		}
		return a.Body.Path, nil
	}
	if got, err := lookup("sh", ""); err != nil || got == "" {
		t.Fatalf("sh: %q %v", got, err)
	}
	if got, err := lookup("./tool", dir); err != nil || got != tool {
		t.Fatalf("./tool: %q %v, want %s", got, err, tool)
	}
	for _, missing := range []string{"no-such-command-shepherd", ""} {
		_, err = lookup(missing, dir)
		var ae *api.Error
		if !errors.Is(err, supervisor.ErrValidation) || !errors.As(err, &ae) || ae.Status != 400 {
			t.Fatalf("a missing command %q: %v", missing, err)
		}
	}
}
