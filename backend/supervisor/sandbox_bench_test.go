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
)

// BenchmarkStartSandboxed measures what the sandbox adds to a start: the
// time from StartAgent to a running agent, sandboxed without @network (the
// shim started in the box's namespaces, the box's mount and network
// namespaces, mounts, dropped capabilities and Landlock on the agent's
// thread) and not, and the shim's RSS.
//
//	go test ./backend/supervisor -run '^$' -bench StartSandboxed -benchtime 50x
func BenchmarkStartSandboxed(b *testing.B) {
	for _, boxed := range []bool{false, true} {
		name := "unsandboxed"
		if boxed {
			name = "sandboxed"
		}
		b.Run(name, func(b *testing.B) {
			h := newBenchHarness(b)
			var p *[]string
			if boxed {
				none := []string{}
				p = &none
			}
			durs := make([]time.Duration, 0, b.N)
			var rss []int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id := fmt.Sprintf("a%d", i)
				b.StopTimer()
				if _, err := h.e.CreateAgent(h.project.ID, AgentSpec{ID: id, Command: "/bin/sleep", Args: []string{"60"}, GraceSec: 1, Permissions: p}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				t0 := time.Now()
				r, err := h.e.StartAgent(context.Background(), h.project.ID, id)
				if err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(t0))
				if r.Status != lifecycle.Running {
					b.Fatalf("status %s", r.Status)
				}
				b.StopTimer()
				if kb := vmRSS(r.ShimPID); kb > 0 {
					rss = append(rss, kb)
				}
				if _, err := h.e.StopAgent(context.Background(), h.project.ID, id, nil); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.StopTimer()
			sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
			b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(durs[len(durs)-1].Microseconds())/1000, "ms-max")
			if len(rss) > 0 {
				sort.Ints(rss)
				b.ReportMetric(float64(rss[len(rss)/2])/1024, "MiB-shim-rss")
			}
		})
	}
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
