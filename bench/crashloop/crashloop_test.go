package main

import (
	"context"
	"os"
	"testing"
	"time"

	"shepherd/backend/cli"
)

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		os.Exit(cli.Run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// The short form of the crash loop, for CI: 20 rounds of churn, each ended
// by an engine SIGKILL, with every invariant checked after each restart.
// `go run ./bench/crashloop` runs 200.
func TestCrashLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash loop takes a while")
	}
	dir := t.TempDir()
	shim, err := buildShim(dir)
	if err != nil {
		t.Fatal(err)
	}
	seed := time.Now().UnixNano()
	tot, err := Run(context.Background(), Config{Rounds: 20, Seed: seed, Workers: 3, Dir: dir, Shim: shim, Exe: os.Args[0]})
	t.Logf("seed %d\n%s", seed, tot)
	if err != nil {
		t.Fatal(err)
	}
	if tot.Rounds != 20 || tot.Kills != 20 || tot.Ops == 0 {
		t.Fatalf("the loop did not run: %+v", tot)
	}
	if !tot.Clean() {
		t.Fatalf("invariants broken (seed %d):\n%s", seed, tot)
	}
}
