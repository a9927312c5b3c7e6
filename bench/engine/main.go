// Command engine measures the engine with real processes and prints the
// figures of the durable-engine issue: the create and start of 100 agents
// (in this process, and through the API of a real engine, with supervisord
// side by side when it is installed), exit-detection latency, idle cost
// with 100 agents running, what their shims cost (RSS, PSS, threads), and
// stop-all of 100 agents that ignore SIGTERM.
//
//	go run ./bench/engine [-n 100] [-idle 30s] [-api=false] [-supervisord=false]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"shepherd/bench/internal/benchkit"

	"shepherd/backend/lifecycle"
	"shepherd/backend/procid"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// waiter is an Emitter that lets the bench wait for an agent's status.
type waiter struct {
	mu   sync.Mutex
	subs map[string]chan *store.Record
}

func (w *waiter) Emit(event string, data any) {
	r, ok := data.(*store.Record)
	if !ok {
		return
	}
	w.mu.Lock()
	ch := w.subs[r.ID]
	w.mu.Unlock()
	if ch != nil {
		select {
		case ch <- r:
		default:
		}
	}
}

func (w *waiter) watch(id string) chan *store.Record {
	ch := make(chan *store.Record, 64)
	w.mu.Lock()
	w.subs[id] = ch
	w.mu.Unlock()
	return ch
}

func main() {
	n := flag.Int("n", 100, "agents")
	idle := flag.Duration("idle", 30*time.Second, "idle measurement")
	settle := flag.Duration("settle", 12*time.Second, "wait before the idle measurement")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the in-process creates and starts here")
	viaAPI := flag.Bool("api", true, "also create and start through the API of a real engine (shepherd-engine serve)")
	withSupervisord := flag.Bool("supervisord", true, "also start as many programs under supervisord, when it is installed")
	engineBin := flag.String("engine", "", "shepherd-engine for -api (default: build it)")
	shimBin := flag.String("shim", "", "shepherd-shim (default: build it)")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "shepherd-bench-")
	check(err)
	defer os.RemoveAll(tmp)
	check(benchkit.Isolate(tmp))
	eng, shim, err := benchkit.Build(tmp, *engineBin, *shimBin)
	check(err)
	fmt.Printf("Shepherd engine bench — %d agents, %s, %d CPUs\n\n", *n, runtime.Version(), runtime.NumCPU())
	if *viaAPI {
		apiStarts(*n, eng, shim, tmp)
	}
	if *withSupervisord {
		supervisordStarts(*n, tmp)
	}
	w := &waiter{subs: map[string]chan *store.Record{}}
	e, err := supervisor.New(supervisor.Config{DataDir: filepath.Join(tmp, "data"), ShimPath: shim, Emitter: w, Logger: zerolog.Nop()})
	check(err)
	defer e.Close()
	projDir := filepath.Join(tmp, "project")
	check(os.Mkdir(projDir, 0o700))
	p, _, err := e.AddProject(projDir, "bench")
	check(err)
	ctx := context.Background()

	// 1. Create and start n agents until all are running.
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		check(err)
		check(pprof.StartCPUProfile(f))
	}
	t0 := time.Now()
	ids := make([]string, *n)
	var creates, starts []time.Duration
	for i := range *n {
		ids[i] = "long-" + strconv.Itoa(i)
		t := time.Now()
		_, err := e.CreateAgent(p.ID, supervisor.AgentSpec{ID: ids[i], Command: "sleep", Args: []string{"3600"}})
		check(err)
		creates = append(creates, time.Since(t))
		t = time.Now()
		_, err = e.StartAgent(ctx, p.ID, ids[i])
		check(err)
		starts = append(starts, time.Since(t))
	}
	total := time.Since(t0)
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	fmt.Printf("in this process: create+start %d agents until all running: %s (%.1f ms per agent); create median %s, start median %s (max %s)\n",
		*n, total.Round(time.Millisecond), float64(total.Microseconds())/1000/float64(*n),
		median(creates).Round(10*time.Microsecond), median(starts).Round(10*time.Microsecond), slices.Max(starts).Round(10*time.Microsecond))

	// 2. What a shim costs: RSS, PSS and threads, averaged over every
	// agent's, once they have settled.
	time.Sleep(2 * time.Second)
	var shims []int
	for _, id := range ids {
		r, err := e.GetAgent(p.ID, id)
		check(err)
		shims = append(shims, r.ShimPID)
	}
	fmt.Println(benchkit.ShimFigures(shims))

	// 3. Idle cost with n agents running, once they have settled: for its
	// first 10 s an agent's log is looked at every tick, then (quiet) every
	// tenth. The watchdog and stale checks of the project run throughout.
	time.Sleep(*settle)
	runtime.GC()
	u0 := cpuTime()
	time.Sleep(*idle)
	cpu := cpuTime() - u0
	fmt.Printf("engine idle over %s with %d running: CPU %s (%.3f%%), RSS %.1f MiB\n",
		*idle, *n, cpu.Round(time.Millisecond), 100*cpu.Seconds()/idle.Seconds(), float64(rssKiB(os.Getpid()))/1024)

	// 4. Exit-detection latency: SIGKILL an agent, wait for the record.
	var lat []time.Duration
	for i := 0; i < 20 && i < *n; i++ {
		r, err := e.GetAgent(p.ID, ids[i])
		check(err)
		ch := w.watch(r.ID)
		start := time.Now()
		check(syscall.Kill(r.PID, syscall.SIGKILL))
		for rec := range ch {
			if rec.Status == lifecycle.Failed {
				if d := h(e, p.ID, r.ID); d != lifecycle.Failed {
					panic("record not failed on disk")
				}
				lat = append(lat, time.Since(start))
				break
			}
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Printf("exit detection (kill -9 → record written), %d runs: median %s, max %s\n",
		len(lat), lat[len(lat)/2].Round(10*time.Microsecond), lat[len(lat)-1].Round(10*time.Microsecond))
	_, err = e.StopAll(ctx, p.ID)
	check(err)

	// 5. stop-all of n stubborn agents (ignore SIGTERM, with a grandchild), grace 2 s.
	var pgids []int
	for i := range *n {
		id := "stubborn-" + strconv.Itoa(i)
		_, err := e.CreateAgent(p.ID, supervisor.AgentSpec{ID: id, Command: "/bin/sh", GraceSec: 2,
			Args: []string{"-c", `trap "" TERM; sleep 3600 & wait`}})
		check(err)
		r, err := e.StartAgent(ctx, p.ID, id)
		check(err)
		pgids = append(pgids, r.PID)
	}
	time.Sleep(500 * time.Millisecond) // let every shell start its grandchild
	t0 = time.Now()
	res, err := e.StopAll(ctx, p.ID)
	check(err)
	took := time.Since(t0)
	failed := 0
	for _, r := range res {
		if r.Error != "" {
			failed++
		}
	}
	survivors := 0
	for _, g := range pgids {
		if procid.GroupAlive(g) {
			survivors++
		}
	}
	fmt.Printf("stop-all of %d stubborn agents, grace 2 s: %s, %d errors, %d surviving groups\n",
		len(res), took.Round(time.Millisecond), failed, survivors)
	phases(e, p.ID, t0)
}

// phases prints when the last agent reached each status of the stop, from
// events.jsonl, relative to the stop-all call.
func phases(e *supervisor.Engine, projectID string, t0 time.Time) {
	b, err := os.ReadFile(e.Store().EventsPath(projectID))
	check(err)
	last := map[string]time.Duration{}
	for _, l := range strings.Split(string(b), "\n") {
		var ev store.Event
		if json.Unmarshal([]byte(l), &ev) != nil || ev.Time.Before(t0) || !strings.HasPrefix(ev.AgentID, "stubborn-") {
			continue
		}
		if d := ev.Time.Sub(t0); d > last[ev.To] {
			last[ev.To] = d
		}
	}
	fmt.Printf("  last agent in stopping at +%s, killing at +%s, stopped at +%s\n",
		last["stopping"].Round(time.Millisecond), last["killing"].Round(time.Millisecond), last["stopped"].Round(time.Millisecond))
}

func h(e *supervisor.Engine, p, id string) lifecycle.Status {
	b, err := os.ReadFile(filepath.Join(e.Store().AgentDir(p, id), "record.json"))
	check(err)
	r, err := store.ParseRecord(b)
	check(err)
	return r.Status
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssKiB reads VmRSS of pid from /proc (Linux).
func rssKiB(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			v, _ := strconv.Atoi(strings.Fields(l)[1])
			return v
		}
	}
	return -1
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// apiStarts creates and starts n agents through the API of a real engine,
// a process of its own (what a client sees: the CLI, the window), and
// prints the medians, the total and the engine's CPU for it.
func apiStarts(n int, engineBin, shim, tmp string) {
	console, err := os.Create(filepath.Join(tmp, "engine-console.log"))
	check(err)
	defer console.Close()
	eng, err := benchkit.StartEngine(engineBin, shim, console)
	check(err)
	defer eng.Quit()
	r := eng.Remote()
	dir := filepath.Join(tmp, "api-project")
	check(os.Mkdir(dir, 0o700))
	p, _, err := r.AddProject(dir, "api")
	check(err)
	ctx := context.Background()
	var creates, starts []time.Duration
	cpu0 := benchkit.CPUNs(eng.Pid)
	t0 := time.Now()
	for i := range n {
		id := "api-" + strconv.Itoa(i)
		t := time.Now()
		_, err := r.CreateAgent(p.ID, supervisor.AgentSpec{ID: id, Command: "sleep", Args: []string{"3600"}})
		check(err)
		creates = append(creates, time.Since(t))
		t = time.Now()
		_, err = r.StartAgent(ctx, p.ID, id)
		check(err)
		starts = append(starts, time.Since(t))
	}
	total := time.Since(t0)
	cpu := time.Duration(benchkit.CPUNs(eng.Pid) - cpu0)
	fmt.Printf("through the API (shepherd-engine serve): create+start %d agents until all running: %s; create median %s, start median %s (max %s); engine CPU %s\n",
		n, total.Round(time.Millisecond), median(creates).Round(10*time.Microsecond), median(starts).Round(10*time.Microsecond),
		slices.Max(starts).Round(10*time.Microsecond), cpu.Round(time.Millisecond))
	_, err = r.StopAll(ctx, p.ID)
	check(err)
}

func cpuOf(pid int) int64 { return benchkit.CPUNs(pid) }
