package supervisor

import (
	"context"
	"fmt"
	"os"
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
// more than its plain one.
//
//	go test ./backend/supervisor -run '^$' -bench StartSandboxed -benchtime 50x
func BenchmarkStartSandboxed(b *testing.B) {
	h := newBenchHarness(b)
	none := []string{}
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
	var plain, boxed, added []time.Duration
	var rss []int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, _ := start(fmt.Sprintf("p%d", i), nil)
		s, kb := start(fmt.Sprintf("s%d", i), &none)
		plain, boxed, added = append(plain, p), append(boxed, s), append(added, s-p)
		if kb > 0 {
			rss = append(rss, kb)
		}
	}
	b.StopTimer()
	b.ReportMetric(medianMs(plain), "ms-plain")
	b.ReportMetric(medianMs(boxed), "ms-sandboxed")
	b.ReportMetric(medianMs(added), "ms-added")
	if len(rss) > 0 {
		sort.Ints(rss)
		b.ReportMetric(float64(rss[len(rss)/2])/1024, "MiB-shim-rss")
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
