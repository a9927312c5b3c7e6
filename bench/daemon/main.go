// Command daemon measures the real headless engine (shepherd-engine serve,
// built without cgo, a process of its own) as a daemon: with 10 projects ×
// 10 running agents and nothing happening, its CPU and memory over an idle
// minute; then how soon it sees a log that grows (the activity the stale
// check and the window go by), after silence.
//
//	go run ./bench/daemon [-projects 10] [-agents 10] [-idle 60s] [-samples 10]
//
// Targets (issue "an engine that is a real daemon"): RSS ≤ 20 MiB, CPU ≤
// 0.02 CPU-s/min idle; a log that grows seen within 100 ms.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"shepherd/backend/api"
	"shepherd/backend/cli"
	"shepherd/backend/paths"
	"shepherd/backend/store"
	"shepherd/bench/internal/benchkit"
)

// engineProc is ended when the bench fails.
var engineProc *os.Process

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		if engineProc != nil {
			_ = engineProc.Kill()
		}
		os.Exit(1)
	}
}

// run runs a CLI verb in this process against the engine (benchkit.CLI).
func run(out any, args ...string) { check(benchkit.CLI(out, args...)) }

func main() {
	nProjects := flag.Int("projects", 10, "projects")
	nAgents := flag.Int("agents", 10, "running agents per project")
	idle := flag.Duration("idle", 60*time.Second, "how long the idle engine is measured")
	settle := flag.Duration("settle", 75*time.Second, "wait after the last start before measuring (past the working window, so every agent shows silent: nothing happens)")
	samples := flag.Int("samples", 10, "log-growth latency samples")
	engineBin := flag.String("engine", "", "shepherd-engine to run (default: build it)")
	flag.Parse()

	root, err := os.MkdirTemp("", "shepherd-bench-daemon-")
	check(err)
	defer os.RemoveAll(root)
	for _, v := range []string{"XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"} {
		d := filepath.Join(root, strings.ToLower(v))
		check(os.MkdirAll(d, 0o700))
		os.Setenv(v, d)
	}
	bin := filepath.Join(root, "bin")
	builds := [][2]string{{filepath.Join(bin, "shepherd-shim"), "./backend/shim/cmd/shepherd-shim"}}
	if *engineBin == "" {
		*engineBin = filepath.Join(bin, "shepherd-engine")
		builds = append(builds, [2]string{*engineBin, "./backend/cli/cmd/shepherd-engine"})
	}
	for _, b := range builds {
		cmd := exec.Command("go", "build", "-o", b[0], b[1])
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			check(fmt.Errorf("build %s: %v\n%s", b[1], err, out))
		}
	}
	os.Setenv(cli.ShimEnv, filepath.Join(bin, "shepherd-shim"))

	console, err := os.Create(filepath.Join(root, "engine-console.log"))
	check(err)
	eng := exec.Command(*engineBin, "serve")
	eng.Stdout, eng.Stderr = console, console
	eng.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	check(eng.Start())
	pid := eng.Process.Pid
	engineProc = eng.Process
	done := make(chan struct{})
	go func() { _ = eng.Wait(); close(done) }()
	p := paths.Default()
	var info api.EngineInfo
	for deadline := time.Now().Add(15 * time.Second); ; {
		if info, err = api.ReadEngineInfo(p.EngineFile()); err == nil {
			if _, err = api.Call(context.Background(), api.NewClient(info), api.GetEngine, api.NoInput{}); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(console.Name())
			check(fmt.Errorf("the engine did not answer: %v\n%s", err, b))
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Printf("engine: %s serve, pid %d, %s\n", *engineBin, pid, info.URL)
	defer func() {
		for i := 0; i <= *nProjects; i++ {
			var stdout, stderr bytes.Buffer
			cli.Main(context.Background(), []string{"stop-all", fmt.Sprintf("p%d", i)}, &stdout, &stderr)
		}
		run(nil, "quit")
		<-done
	}()

	start := time.Now()
	for i := 0; i < *nProjects; i++ {
		dir := filepath.Join(root, "projects", fmt.Sprintf("p%d", i))
		check(os.MkdirAll(dir, 0o755))
		var proj store.Project
		run(&proj, "add-project", dir, "--name", fmt.Sprintf("p%d", i))
		for j := 0; j < *nAgents; j++ {
			id := fmt.Sprintf("a%d", j)
			run(nil, "create", proj.ID, id, "--", "sleep", "1000000")
			run(nil, "start", proj.ID, id)
		}
	}
	fmt.Printf("started %d agents in %d projects in %v; settling %v\n", *nProjects**nAgents, *nProjects,
		time.Since(start).Round(time.Millisecond), *settle)
	time.Sleep(*settle)

	// Idle: CPU (the sum of every thread's run time, in ns) and wakeups
	// (context switches) over the window, memory at its end.
	cpu0, sw0 := cpuNs(pid), switches(pid)
	t0 := time.Now()
	time.Sleep(*idle)
	cpu1, sw1 := cpuNs(pid), switches(pid)
	el := time.Since(t0)
	perMin := float64(cpu1-cpu0) / 1e9 / el.Minutes()
	fmt.Printf("idle %v with %d running agents: CPU %.4f CPU-s/min (target ≤ 0.02), %.0f wakeups/min, RSS %.1f MiB (target ≤ 20; anonymous %.1f, file %.1f), PSS %.1f MiB, %d threads\n",
		el.Round(time.Second), *nProjects**nAgents, perMin, float64(sw1-sw0)/el.Minutes(),
		benchkit.ProcKiB(pid, "status", "VmRSS:")/1024, benchkit.ProcKiB(pid, "status", "RssAnon:")/1024, benchkit.ProcKiB(pid, "status", "RssFile:")/1024,
		benchkit.ProcKiB(pid, "smaps_rollup", "Pss:")/1024, threads(pid))
	shimFigures()

	// Log growth: one more agent in a project of its own whose silence is
	// shown after a second; after each silence a line is appended to its log
	// and the time until the engine shows it working again is measured.
	dir := filepath.Join(root, "projects", "probe")
	check(os.MkdirAll(dir, 0o755))
	var proj store.Project
	run(&proj, "add-project", dir, "--name", fmt.Sprintf("p%d", *nProjects))
	run(nil, "settings", proj.ID, "--staleCheckIntervalSec", "1", "--staleThresholdSec", "2")
	run(nil, "create", proj.ID, "probe", "--", "sleep", "1000000")
	var rec store.Record
	run(&rec, "start", proj.ID, "probe")

	type state struct {
		ID       string          `json:"id"`
		Activity *store.Activity `json:"activity"`
	}
	var mu sync.Mutex
	var current string
	changed := make(chan string, 64)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go api.NewClient(info).Stream(ctx, api.StreamIn{Project: proj.ID}, func(ev api.StreamEvent) error {
		if ev.Name != "agent:state" {
			return nil
		}
		var s state
		if json.Unmarshal(ev.Data, &s) != nil || s.ID != "probe" || s.Activity == nil {
			return nil
		}
		mu.Lock()
		current = s.Activity.State
		mu.Unlock()
		select {
		case changed <- s.Activity.State:
		default:
		}
		return nil
	})
	f, err := os.OpenFile(rec.LogPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	check(err)
	defer f.Close()
	var lat []time.Duration
	for i := 0; i < *samples; i++ {
		// Wait for the silence to be shown.
		for deadline := time.Now().Add(10 * time.Second); ; {
			mu.Lock()
			s := current
			mu.Unlock()
			if s != "" && s != store.ActivityWorking {
				break
			}
			if time.Now().After(deadline) {
				check(fmt.Errorf("the probe never showed silent (%q)", s))
			}
			time.Sleep(20 * time.Millisecond)
		}
		for len(changed) > 0 {
			<-changed
		}
		t := time.Now()
		_, err := fmt.Fprintf(f, "line %d\n", i)
		check(err)
		for got := ""; got != store.ActivityWorking; {
			select {
			case got = <-changed:
			case <-time.After(30 * time.Second):
				check(fmt.Errorf("the log's growth was not seen in 30 s"))
			}
		}
		lat = append(lat, time.Since(t))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		fmt.Printf("log growth seen (silent → working on the event stream), %d samples: median %v, max %v (target ≤ 100ms)\n",
			len(lat), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
	}
}

// cpuNs is the CPU time of every thread of pid so far, in nanoseconds
// (/proc/PID/task/*/schedstat: exact, where /proc/PID/stat counts ticks).
func cpuNs(pid int) int64 {
	var total int64
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			total += n
		}
	}
	return total
}

// switches counts the context switches of every thread of pid: each is a
// wakeup (or a preemption).
func switches(pid int) int64 {
	var total int64
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "voluntary_ctxt_switches:") || strings.HasPrefix(line, "nonvoluntary_ctxt_switches:") {
				n, _ := strconv.ParseInt(strings.TrimSpace(line[strings.IndexByte(line, ':')+1:]), 10, 64)
				total += n
			}
		}
	}
	return total
}

func threads(pid int) int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	return len(tasks)
}

// shimFigures prints what the agents' shims cost, each: RSS and PSS
// (/proc/PID/smaps_rollup), averaged over every running agent's shim.
func shimFigures() {
	var recs []store.Record
	run(&recs, "ps")
	n, rss, pss := 0, 0.0, 0.0
	for _, r := range recs {
		if r.ShimPID <= 0 || !r.Status.Live() {
			continue
		}
		n++
		rss += benchkit.ProcKiB(r.ShimPID, "status", "VmRSS:")
		pss += benchkit.ProcKiB(r.ShimPID, "smaps_rollup", "Pss:")
	}
	if n == 0 {
		return
	}
	fmt.Printf("shims: %d, each RSS %.2f MiB, PSS %.2f MiB (averages)\n", n, rss/float64(n)/1024, pss/float64(n)/1024)
}
