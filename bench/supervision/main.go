// Command supervision measures, with real processes, the figures of
// supervision that never sleeps and of pause and the run queue:
//
//   - idle engine CPU and RSS with 10 projects × 10 running agents, all
//     watched (their watchdog, stale check and log poller run);
//
//   - the cost of one stale pass over 100 silent agents, the busy check
//     (descendants, CPU of the tree) included;
//
//   - event-to-client latency over the SSE stream (median, max of 100);
//
//   - the time from pause to all agents of a 20-agent project paused (no
//     tool in flight, grace 2 s);
//
//   - the time from a slot freeing to the next queued agent running (median
//     of 20);
//
//   - the queue's cost with 1,000 queued agents.
//
//     go run ./bench/supervision [-idle 30s]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	shimpkg "shepherd/backend/shim"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"shepherd/backend/api"
	"shepherd/backend/cli"
	"shepherd/backend/lifecycle"
	"shepherd/backend/paths"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

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
	ch := make(chan *store.Record, 256)
	w.mu.Lock()
	w.subs[id] = ch
	w.mu.Unlock()
	return ch
}

func (w *waiter) until(ch chan *store.Record, st lifecycle.Status) {
	for r := range ch {
		if r.Status == st {
			return
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func rssMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	check(err)
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(f[1])
			return float64(kb) / 1024
		}
	}
	return 0
}

func median(ds []time.Duration) (time.Duration, time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], ds[len(ds)-1]
}

type bench struct {
	tmp, shim string
	ctx       context.Context
}

func (b *bench) engine(name string, w supervisor.Emitter) *supervisor.Engine {
	e, err := supervisor.New(supervisor.Config{DataDir: filepath.Join(b.tmp, name), ShimPath: b.shim, Emitter: w, Logger: zerolog.Nop()})
	check(err)
	return e
}

func (b *bench) project(e *supervisor.Engine, name string) store.Project {
	dir := filepath.Join(b.tmp, "proj-"+name)
	check(os.MkdirAll(dir, 0o700))
	p, _, err := e.AddProject(dir, name)
	check(err)
	return p
}

func (b *bench) startSleepers(e *supervisor.Engine, p store.Project, n int, prefix string, spec supervisor.AgentSpec) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = prefix + strconv.Itoa(i)
		s := spec
		s.ID = ids[i]
		if s.Command == "" {
			s.Command, s.Args = "sleep", []string{"3600"}
		}
		_, err := e.CreateAgent(p.ID, s)
		check(err)
		_, err = e.StartAgent(b.ctx, p.ID, ids[i])
		check(err)
	}
	return ids
}

func main() {
	idle := flag.Duration("idle", 30*time.Second, "idle measurement")
	flag.Parse()
	if os.Getenv("SHEPHERD_BENCH_AS_CLI") == "1" {
		os.Exit(cli.Run(os.Args[1:]))
	}
	tmp, err := os.MkdirTemp("", "shepherd-bench-")
	check(err)
	defer os.RemoveAll(tmp)
	shim := filepath.Join(tmp, "shepherd-shim")
	out, err := shimpkg.BuildCommand(shim, "-trimpath", "-ldflags=-s -w").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build shim: %v\n%s", err, out)
		os.Exit(1)
	}
	b := &bench{tmp: tmp, shim: shim, ctx: context.Background()}
	fmt.Printf("Shepherd supervision bench — %s, %d CPUs\n\n", runtime.Version(), runtime.NumCPU())
	b.idle(*idle)
	b.stalePass()
	b.sseLatency()
	b.pause20()
	b.slotToStart()
	b.queue1000()
	b.sampling(*idle)
}

// 100 running agents: idle with nobody looking, then with someone looking
// (CPU and memory sampled every 2 s); the cost of one sample of all 100.
func (b *bench) sampling(d time.Duration) {
	e := b.engine("sampling", nil)
	defer func() { stopAll(e); e.Close() }()
	p := b.project(e, "sampling")
	b.startSleepers(e, p, 100, "s", supervisor.AgentSpec{Command: "/bin/sh", Args: []string{"-c", "sleep 3600 & wait"}})
	time.Sleep(12 * time.Second) // settled (see bench/engine)
	runtime.GC()
	n0, u0 := e.Samples(), cpuTime()
	time.Sleep(d)
	fmt.Printf("100 running agents, nobody looking, %s: CPU %s (%.3f%%), %d samples taken\n",
		d, (cpuTime() - u0).Round(time.Millisecond), 100*(cpuTime()-u0).Seconds()/d.Seconds(), e.Samples()-n0)
	check(e.Look(p.ID, d+5*time.Second))
	n0, u0 = e.Samples(), cpuTime()
	time.Sleep(d)
	fmt.Printf("100 running agents, the window looking (sampled every %s), %s: CPU %s (%.3f%%), %d samples taken\n",
		supervisor.StatsInterval, d, (cpuTime() - u0).Round(time.Millisecond), 100*(cpuTime()-u0).Seconds()/d.Seconds(), e.Samples()-n0)
	var ws, cs []time.Duration
	for i := 0; i < 10; i++ {
		t0, c0 := time.Now(), cpuTime()
		check(e.SampleNow(p.ID))
		ws, cs = append(ws, time.Since(t0)), append(cs, cpuTime()-c0)
	}
	w, _ := median(ws)
	c, _ := median(cs)
	fmt.Printf("one sample of 100 agents (their process trees from /proc), median of 10: %s wall, %s CPU\n",
		w.Round(10*time.Microsecond), c.Round(10*time.Microsecond))
}

// 10 projects × 10 running agents, every project watched: idle CPU, RSS.
func (b *bench) idle(d time.Duration) {
	e := b.engine("idle", nil)
	defer func() { stopAll(e); e.Close() }()
	for i := 0; i < 10; i++ {
		p := b.project(e, "idle"+strconv.Itoa(i))
		b.startSleepers(e, p, 10, "a", supervisor.AgentSpec{StaleCheck: store.Ptr(true)})
	}
	runtime.GC()
	u0 := cpuTime()
	time.Sleep(d)
	cpu := cpuTime() - u0
	fmt.Printf("idle engine, 10 projects × 10 running agents, all watched, over %s: CPU %s (%.3f%% of one core), RSS %.1f MiB\n",
		d, cpu.Round(time.Millisecond), 100*cpu.Seconds()/d.Seconds(), rssMiB())
}

// One stale pass over 100 silent agents, each looked at for signs of work.
func (b *bench) stalePass() {
	e := b.engine("stale", nil)
	defer func() { stopAll(e); e.Close() }()
	p := b.project(e, "stale")
	s, _ := e.GetSettings(p.ID)
	s.StaleThresholdSec = 86400 // silent, never stale: the pass looks, recovers nothing
	_, err := e.PutSettings(p.ID, s)
	check(err)
	b.startSleepers(e, p, 100, "s", supervisor.AgentSpec{Command: "/bin/sh", Args: []string{"-c", "sleep 3600 & wait"}, StaleCheck: store.Ptr(true)})
	// Silent for longer than the working window: the real clock has to pass it.
	time.Sleep(61 * time.Second)
	var ds []time.Duration
	for i := 0; i < 5; i++ {
		u0, t0 := cpuTime(), time.Now()
		check(e.StaleCheckNow(p.ID))
		ds = append(ds, time.Since(t0))
		if i == 4 {
			fmt.Printf("one stale pass over 100 silent agents (busy check: descendants and CPU of each tree): %s wall, %s CPU\n",
				time.Since(t0).Round(10*time.Microsecond), (cpuTime() - u0).Round(10*time.Microsecond))
		}
	}
	med, mx := median(ds)
	fmt.Printf("  (5 passes: median %s, max %s)\n", med.Round(10*time.Microsecond), mx.Round(10*time.Microsecond))
	recs, _ := e.ListAgents(p.ID)
	silent := 0
	for _, r := range recs {
		if r.Activity != nil && r.Activity.State == store.ActivitySilent {
			silent++
		}
	}
	fmt.Printf("  agents shown silent: %d of %d\n", silent, len(recs))
}

// Event-to-client latency over GET /v1/events: 100 events emitted on the
// engine's bus, each carrying its send time.
func (b *bench) sseLatency() {
	dir := filepath.Join(b.tmp, "sse")
	p := paths.Paths{Data: filepath.Join(dir, "data"), State: filepath.Join(dir, "state"), Runtime: filepath.Join(dir, "run")}
	h, err := cli.Start(b.ctx, cli.ServeOptions{Paths: &p, ShimPath: b.shim, Logger: nopLogger()})
	check(err)
	defer h.Close()
	c := api.NewClient(h.Info)
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	lat := make(chan time.Duration, 200)
	ready := make(chan struct{})
	go c.Stream(ctx, api.StreamIn{}, func(ev api.StreamEvent) error {
		if ev.Name == "hello" {
			close(ready)
			return nil
		}
		var d struct {
			Sent int64 `json:"sent"`
		}
		if json.Unmarshal(ev.Data, &d) == nil && d.Sent > 0 {
			lat <- time.Since(time.Unix(0, d.Sent))
		}
		return nil
	})
	<-ready
	var ds []time.Duration
	for i := 0; i < 100; i++ {
		h.Bus.Emit("notify", map[string]any{"sent": time.Now().UnixNano(), "title": "bench"})
		ds = append(ds, <-lat)
		time.Sleep(5 * time.Millisecond)
	}
	med, mx := median(ds)
	fmt.Printf("event to client over SSE, 100 events: median %s, max %s\n", med.Round(time.Microsecond), mx.Round(time.Microsecond))

	// 100 idle stream clients: what they cost the engine.
	var wg sync.WaitGroup
	connected := make(chan struct{}, 100)
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := api.NewClient(h.Info)
			_ = c.Stream(ctx, api.StreamIn{}, func(ev api.StreamEvent) error {
				if ev.Name == "hello" {
					connected <- struct{}{}
				}
				return nil
			})
		}()
	}
	for i := 0; i < 100; i++ {
		<-connected
	}
	runtime.GC()
	u0 := cpuTime()
	time.Sleep(10 * time.Second)
	fmt.Printf("100 idle stream clients (bench process: engine and clients): CPU %s over 10 s, %d subscribers\n",
		(cpuTime() - u0).Round(time.Millisecond), h.Bus.Subscribers())
	cancel()
	wg.Wait()
}

// Pause a 20-agent project (no tool in flight, grace 2 s).
func (b *bench) pause20() {
	e := b.engine("pause", nil)
	defer func() { stopAll(e); e.Close() }()
	p := b.project(e, "pause")
	b.startSleepers(e, p, 20, "p", supervisor.AgentSpec{GraceSec: 2})
	t0 := time.Now()
	res, err := e.PauseProject(b.ctx, p.ID, "bench", false)
	check(err)
	d := time.Since(t0)
	paused := 0
	for _, r := range res {
		if r.Error == "" && r.Record != nil && r.Record.Status == lifecycle.Paused {
			paused++
		}
	}
	fmt.Printf("pause of a 20-agent project (no tool in flight, grace 2 s): all paused in %s (%d of %d)\n",
		d.Round(time.Millisecond), paused, len(res))
	check(e.UnpauseProject(b.ctx, p.ID))
}

// maxRunning 1: the running agent is killed; how soon the queued one runs.
func (b *bench) slotToStart() {
	w := &waiter{subs: map[string]chan *store.Record{}}
	e := b.engine("slot", w)
	defer func() { stopAll(e); e.Close() }()
	p := b.project(e, "slot")
	s, _ := e.GetSettings(p.ID)
	s.MaxRunning = 1
	_, err := e.PutSettings(p.ID, s)
	check(err)
	var ds []time.Duration
	prev := b.startSleepers(e, p, 1, "q", supervisor.AgentSpec{})[0]
	for i := 1; i <= 20; i++ {
		next := "q" + strconv.Itoa(i)
		_, err := e.CreateAgent(p.ID, supervisor.AgentSpec{ID: next, Command: "sleep", Args: []string{"3600"}})
		check(err)
		ch := w.watch(next)
		r, err := e.StartAgent(b.ctx, p.ID, next)
		check(err)
		if r.Status != lifecycle.Queued {
			check(fmt.Errorf("%s is %s, want queued", next, r.Status))
		}
		cur, err := e.GetAgent(p.ID, prev)
		check(err)
		t0 := time.Now()
		check(syscall.Kill(-cur.PID, syscall.SIGKILL))
		w.until(ch, lifecycle.Running)
		ds = append(ds, time.Since(t0))
		prev = next
	}
	med, mx := median(ds)
	fmt.Printf("slot freed (kill -9 of the running agent) → next queued agent running, 20 runs: median %s, max %s\n",
		med.Round(10*time.Microsecond), mx.Round(10*time.Microsecond))
}

// 1,000 queued agents: enqueue, list, release one.
func (b *bench) queue1000() {
	w := &waiter{subs: map[string]chan *store.Record{}}
	e := b.engine("queue", w)
	defer func() { stopAll(e); e.Close() }()
	p := b.project(e, "queue")
	s, _ := e.GetSettings(p.ID)
	s.MaxRunning = 1
	_, err := e.PutSettings(p.ID, s)
	check(err)
	first := b.startSleepers(e, p, 1, "head", supervisor.AgentSpec{})[0]
	for i := 0; i < 1000; i++ {
		_, err := e.CreateAgent(p.ID, supervisor.AgentSpec{ID: "w" + strconv.Itoa(i), Command: "sleep", Args: []string{"3600"}})
		check(err)
	}
	runtime.GC()
	rss0 := rssMiB()
	t0, c0 := time.Now(), cpuTime()
	for i := 0; i < 1000; i++ {
		_, err := e.StartAgent(b.ctx, p.ID, "w"+strconv.Itoa(i))
		check(err)
	}
	enq, enqCPU := time.Since(t0), cpuTime()-c0
	t0 = time.Now()
	recs, err := e.ListAgents(p.ID)
	check(err)
	list := time.Since(t0)
	last := recs[len(recs)-1]
	runtime.GC()
	fmt.Printf("1,000 queued agents: enqueue %s (%.2f ms each, %s CPU, mostly the record writes); list with positions %s (last at %d); RSS +%.1f MiB\n",
		enq.Round(time.Millisecond), float64(enq.Microseconds())/1000/1000, enqCPU.Round(time.Millisecond), list.Round(time.Microsecond),
		last.QueuePosition, rssMiB()-rss0)
	ch := w.watch("w0")
	cur, err := e.GetAgent(p.ID, first)
	check(err)
	t0 = time.Now()
	check(syscall.Kill(-cur.PID, syscall.SIGKILL))
	w.until(ch, lifecycle.Running)
	fmt.Printf("  a slot freed with 1,000 queued → the first running: %s\n", time.Since(t0).Round(10*time.Microsecond))
	u0 := cpuTime()
	time.Sleep(5 * time.Second)
	fmt.Printf("  idle with 1,000 queued: CPU %s over 5 s\n", (cpuTime() - u0).Round(time.Millisecond))
}

func stopAll(e *supervisor.Engine) {
	for _, p := range e.Projects() {
		_ = e.UnpauseProject(context.Background(), p.ID)
		_, _ = e.StopAll(context.Background(), p.ID)
	}
}

func nopLogger() *zerolog.Logger {
	l := zerolog.Nop()
	return &l
}
