package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"shepherd/backend/lifecycle"
	"shepherd/backend/procid"
)

// BenchmarkStartSandboxed measures what the sandbox adds to a start: the
// time from StartAgent to a running agent, sandboxed without @network (the
// shim started in the box's namespaces; the box's mount namespace, mounts,
// dropped capabilities and Landlock on the agent's thread) and not, and the
// shim's RSS. Each round starts a plain agent and a sandboxed one, one after
// the other, so that both meet the same machine: what is reported is the
// median of each, and the median of what each round's sandboxed start took
// more than its plain one. A third start in each round is a coding agent's
// box: @write: a repository (2,000 files, a nested repository, a
// node_modules) and a Claude Code folder of 20 entries, whose git dirs and
// configuration are found (the nested one by the scan) and bound
// read-only: ms-added-repo is what it takes more than the plain start.
//
//	go test ./backend/supervisor -run '^$' -bench StartSandboxed -benchtime 50x
func BenchmarkStartSandboxed(b *testing.B) {
	h := newBenchHarness(b)
	none := []string{}
	home, repo := b.TempDir(), b.TempDir()
	b.Setenv("HOME", home)
	benchTree(b, repo, home)
	coding := []string{"@write:" + repo, "@write:" + home + "/.claude"}
	start := func(id string, perms *[]string) (time.Duration, int) {
		b.StopTimer()
		if _, err := h.e.CreateAgent(h.project.ID, AgentSpec{ID: id, Command: "/bin/sleep", Args: []string{"60"}, GraceSec: 1, Permissions: perms}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		r, err := h.e.StartAgent(context.Background(), h.project.ID, id)
		if err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		if r.Status != lifecycle.Running {
			b.Fatalf("status %s", r.Status)
		}
		b.StopTimer()
		kb := vmRSS(r.ShimPID)
		if _, err := h.e.StopAgent(context.Background(), h.project.ID, id, nil); err != nil {
			b.Fatal(err)
		}
		// The next start meets a machine this one's end no longer busies.
		for deadline := time.Now().Add(5 * time.Second); procid.Alive(r.ShimPID) && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		b.StartTimer()
		return d, kb
	}
	var plain, boxed, added, addedRepo []time.Duration
	var rss []int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, _ := start(fmt.Sprintf("p%d", i), nil)
		s, kb := start(fmt.Sprintf("s%d", i), &none)
		r, _ := start(fmt.Sprintf("r%d", i), &coding)
		plain, boxed, added, addedRepo = append(plain, p), append(boxed, s), append(added, s-p), append(addedRepo, r-p)
		if kb > 0 {
			rss = append(rss, kb)
		}
	}
	b.StopTimer()
	b.ReportMetric(medianMs(plain), "ms-plain")
	b.ReportMetric(medianMs(boxed), "ms-sandboxed")
	b.ReportMetric(medianMs(added), "ms-added")
	b.ReportMetric(medianMs(addedRepo), "ms-added-repo")
	if len(rss) > 0 {
		sort.Ints(rss)
		b.ReportMetric(float64(rss[len(rss)/2])/1024, "MiB-shim-rss")
	}
}

// benchTree makes a repository of 2,000 files in 200 folders, with a
// nested repository and a node_modules of 500 folders, and a Claude Code
// folder in home with the entries a used one has.
func benchTree(b *testing.B, repo, home string) {
	b.Helper()
	write := func(p string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write(repo + "/.git/config")
	write(repo + "/.git/hooks/pre-commit.sample")
	write(repo + "/vendored/lib/.git/config")
	for d := 0; d < 200; d++ {
		for f := 0; f < 10; f++ {
			write(fmt.Sprintf("%s/src/pkg%d/sub%d/f%d.go", repo, d/20, d, f))
		}
	}
	for d := 0; d < 500; d++ {
		write(fmt.Sprintf("%s/node_modules/m%d/index.js", repo, d))
	}
	for _, e := range []string{"settings.json", ".credentials.json", "history.jsonl", "CLAUDE.md", ".claude.json",
		"projects/p/s.jsonl", "sessions/s", "todos/t", "statsig/s", "shell-snapshots/s", "plugins/p", "commands/c.md",
		"agents/a.md", "skills/s/SKILL.md", "hooks/h.sh", "ide/1.lock", "debug/d", "file-history/f", "plans/p", "backups/b"} {
		write(home + "/.claude/" + e)
	}
}

// medianMs is the median of ds in milliseconds.
func medianMs(ds []time.Duration) float64 {
	ds = append([]time.Duration(nil), ds...)
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return float64(ds[len(ds)/2].Microseconds()) / 1000
}

// vmRSS is a process's resident set in KiB (0 when unknown).
func vmRSS(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

type benchHarness struct {
	e       *Engine
	project struct{ ID string }
}

func newBenchHarness(b *testing.B) *benchHarness {
	b.Helper()
	e, err := New(Config{DataDir: b.TempDir(), ShimPath: shimPath, Logger: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		e.Close()
		for _, r := range e.AllAgents() {
			if r.PID > 0 {
				_ = syscall.Kill(-r.PID, syscall.SIGKILL)
			}
		}
	})
	p, _, err := e.AddProject(b.TempDir(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	h := &benchHarness{e: e}
	h.project.ID = p.ID
	return h
}
