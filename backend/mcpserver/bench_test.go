package mcpserver_test

import (
	"fmt"
	"sort"
	"testing"
	"time"
)

// BenchmarkToolLatency is what an agent waits for a tool call, over the
// SDK's client and the engine's API: create+start, get_process, and
// read_log of 1,000 lines. Median and max over b.N calls each.
//
//	go test ./backend/mcpserver -run '^$' -bench ToolLatency -benchtime 100x
func BenchmarkToolLatency(b *testing.B) {
	en := start(b)
	// A process whose log already holds 1,000 lines.
	en.ok("create_process", map[string]any{"id": "lines", "command": "/bin/sh",
		"args": []string{"-c", `i=0; while [ $i -lt 1000 ]; do echo "line $i of the log"; i=$((i+1)); done`}})
	en.ok("start_process", map[string]any{"id": "lines"})
	en.ok("wait_for_log", map[string]any{"id": "lines", "pattern": "line 999 of", "timeout_ms": 10000})

	measure := func(name string, f func(i int)) {
		b.Run(name, func(b *testing.B) {
			d := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				f(i)
				d = append(d, time.Since(t0))
			}
			sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
			b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(d[len(d)-1].Microseconds())/1000, "ms-max")
		})
	}
	run := 0
	measure("create+start", func(i int) {
		run++
		id := fmt.Sprintf("p%d", run)
		en.ok("create_process", map[string]any{"id": id, "command": "/bin/sleep", "args": []string{"60"}})
		en.ok("start_process", map[string]any{"id": id})
	})
	measure("get_process", func(int) { en.ok("get_process", map[string]any{"id": "lines"}) })
	measure("read_log-1000", func(int) {
		out := en.ok("read_log", map[string]any{"id": "lines", "tail": 1000})
		if n := len(out["lines"].([]any)); n != 1000 {
			b.Fatalf("read_log gave %d lines", n)
		}
	})
}
