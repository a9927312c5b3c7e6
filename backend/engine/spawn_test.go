package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"shepherd/internal/testutil"
)

// An engine that cannot start says why, with what it wrote.
func TestStartEngineFails(t *testing.T) {
	p := testutil.Isolate(t)
	bin := filepath.Join(t.TempDir(), "shepherd-engine")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho cannot open the data folder >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := StartEngine(ctx, bin, p)
	if !errors.Is(err, ErrEngineDidNotStart) || !strings.Contains(err.Error(), "cannot open the data folder") ||
		!strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("err = %v", err)
	}
}

// The engine is started without the window's own variables, and with the rest.
func TestEnvironWithout(t *testing.T) {
	t.Setenv("SHEPHERD_TEST_WINDOW_ONLY", "1")
	t.Setenv("SHEPHERD_TEST_KEPT", "a=b")
	env := environWithout([]string{"SHEPHERD_TEST_WINDOW_ONLY"})
	if slices.Contains(env, "SHEPHERD_TEST_WINDOW_ONLY=1") {
		t.Error("SHEPHERD_TEST_WINDOW_ONLY passed on")
	}
	if !slices.Contains(env, "SHEPHERD_TEST_KEPT=a=b") {
		t.Error("SHEPHERD_TEST_KEPT=a=b not passed on")
	}
	if len(env) != len(os.Environ())-1 {
		t.Errorf("%d variables, want %d", len(env), len(os.Environ())-1)
	}
}
