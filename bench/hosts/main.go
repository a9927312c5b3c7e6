// Command hosts measures agents on other machines as the window sees them
// (SPEC "Hosts"): a local engine (`shepherd-engine serve`, a process of its
// own) with H hosts, each an SSH server in this process with an engine
// bootstrapped behind it and N agents running there, beside N local agents.
// It reports
//
//   - how soon an agent's exit reaches a client of the local engine's event
//     stream (what the window listens to): a local agent's (agent:state) and
//     a host's agent's (host:event, through its engine, its SSH connection
//     and the local engine), median and max, and the difference of medians
//     (SPEC target: remote ≤ local + 50 ms);
//
//   - the local engine's idle cost of the connected hosts: CPU, wakeups,
//     RSS and threads over an idle window before the hosts were added and
//     again with them connected (their agents running there), and the
//     events that came meanwhile.
//
//     go run ./bench/hosts [-hosts 3] [-agents 100] [-exits 40] [-idle 30s]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"

	"shepherd/backend/api"
	"shepherd/backend/hosts/hoststest"
	"shepherd/backend/hosts/manager"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
	"shepherd/bench/internal/benchkit"
)

func main() {
	nHosts := flag.Int("hosts", 3, "hosts")
	nAgents := flag.Int("agents", 100, "agents per host (and locally)")
	nExits := flag.Int("exits", 40, "exits timed, local and remote each")
	idle := flag.Duration("idle", 30*time.Second, "idle window measured, without and with the hosts")
	settle := flag.Duration("settle", 90*time.Second, "wait after the hosts' agents started, before their idle window (their first minute's activity checks)")
	flag.Parse()
	if err := run(*nHosts, *nAgents, *nExits, *idle, *settle); err != nil {
		fmt.Fprintln(os.Stderr, "hosts:", err)
		os.Exit(1)
	}
}

// agent is one agent the bench ends by writing to its fifo.
type agent struct {
	host, project, id, fifo string
}

func run(nHosts, nAgents, nExits int, idle, settle time.Duration) error {
	dir, err := os.MkdirTemp("", "shepherd-bench-hosts-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	local := filepath.Join(dir, "local")
	if err := benchkit.Isolate(local); err != nil {
		return err
	}
	// The local engine's ~/.ssh: its key, and known_hosts filled by the adds
	// (Go's caches stay where they are: they follow HOME otherwise).
	for _, v := range []string{"GOMODCACHE", "GOCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			return fmt.Errorf("go env %s: %w", v, err)
		}
		os.Setenv(v, strings.TrimSpace(string(out)))
	}
	os.Setenv("HOME", local)
	os.Unsetenv("SSH_AUTH_SOCK")
	pub, err := hoststest.ClientKey(local)
	if err != nil {
		return err
	}

	fmt.Println("building the engine and the shim")
	bin, shim, err := benchkit.Build(dir, "", "")
	if err != nil {
		return err
	}
	// The engines for hosts: the same static build (this machine's platform).
	builds := filepath.Join(dir, "engines")
	plat := filepath.Join(builds, runtime.GOOS+"-"+runtime.GOARCH)
	if err := os.MkdirAll(plat, 0o755); err != nil {
		return err
	}
	for _, f := range [][2]string{{bin, "shepherd-engine"}, {shim, "shepherd-shim"}} {
		if err := copyFile(f[0], filepath.Join(plat, f[1])); err != nil {
			return err
		}
	}
	os.Setenv(manager.BuildsEnv, builds)

	console, _ := os.Create(filepath.Join(dir, "engine.log"))
	eng, err := benchkit.StartEngine(bin, shim, console)
	if err != nil {
		return err
	}
	defer eng.Quit()
	c := eng.Remote().Client()
	ctx := context.Background()
	stream := newWatcher(ctx, c)

	// The idle baseline: the engine alone (its local agents come after the
	// idle windows, so that neither window holds what their age brings).
	stream.seen()
	base := measureIdle(eng.Pid, idle)
	fmt.Printf("idle %v, no hosts:            %s; events on the local stream meanwhile: %v\n", idle, base, stream.seen())

	// Hosts.
	var servers []*hoststest.Server
	defer func() {
		for _, s := range servers {
			s.Stop()
		}
	}()
	var remotes []agent
	var enginePIDs []int
	for i := 0; i < nHosts; i++ {
		name := fmt.Sprintf("h%d", i)
		home := filepath.Join(dir, name)
		runDir := filepath.Join(home, "run")
		if err := os.MkdirAll(runDir, 0o700); err != nil {
			return err
		}
		srv := hoststest.New(pub)
		servers = append(servers, srv)
		srv.Dir = home
		srv.Env = []string{"HOME=" + home, "XDG_RUNTIME_DIR=" + runDir, "PATH=" + os.Getenv("PATH")}
		t := time.Now()
		h, err := api.Call(ctx, c, api.AddHost, api.AddHostIn{Body: api.AddHostInput{Name: name, URL: "ssh://me@" + srv.Addr,
			AcceptKey: ssh.FingerprintSHA256(srv.HostKey.PublicKey())}})
		if err != nil {
			return fmt.Errorf("add host %s: %w", name, err)
		}
		enginePIDs = append(enginePIDs, h.Body.PID)
		fmt.Printf("host %s added in %v (bootstrap: install, start its engine)\n", name, time.Since(t).Round(time.Millisecond))
		as, err := startAgents(ctx, c.OnHost(name), name, filepath.Join(home, "proj"), nAgents)
		if err != nil {
			return err
		}
		remotes = append(remotes, as...)
	}
	defer func() {
		for _, pid := range enginePIDs {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}()
	fmt.Printf("%d hosts × %d agents running there\n", nHosts, nAgents)
	c.HTTP.CloseIdleConnections()
	time.Sleep(settle)
	stream.seen()
	with := measureIdle(eng.Pid, idle)
	fmt.Printf("idle %v, %d hosts connected: %s; events on the local stream meanwhile: %v\n", idle, nHosts, with, stream.seen())
	fmt.Printf("idle cost of %d connected hosts on the local engine: %+.4f CPU-s/min, %+.0f wakeups/min, %+.1f MiB RSS, %+d threads\n",
		nHosts, with.cpuPerMin-base.cpuPerMin, with.wakeupsPerMin-base.wakeupsPerMin, with.rssMiB-base.rssMiB, with.threads-base.threads)

	locals, err := startAgents(ctx, c, "", filepath.Join(dir, "local-proj"), nAgents)
	if err != nil {
		return err
	}
	fmt.Printf("%d local agents running\n", len(locals))

	// Exits, one at a time: a local one, then a host's (round robin).
	var lat [2][]time.Duration
	nExits = min(nExits, len(locals), len(remotes))
	for i := 0; i < nExits; i++ {
		for k, a := range []agent{locals[i%len(locals)], remotes[i%len(remotes)]} {
			d, err := stream.timeExit(a)
			if err != nil {
				return err
			}
			lat[k] = append(lat[k], d)
		}
	}
	med := func(ds []time.Duration) time.Duration {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	lm, rm := med(lat[0]), med(lat[1])
	fmt.Printf("exit seen on the local engine's event stream, %d each: local median %v (max %v), a host's median %v (max %v); remote − local: %v (target ≤ 50ms)\n",
		nExits, lm.Round(100*time.Microsecond), lat[0][len(lat[0])-1].Round(100*time.Microsecond),
		rm.Round(100*time.Microsecond), lat[1][len(lat[1])-1].Round(100*time.Microsecond), (rm - lm).Round(100*time.Microsecond))
	for _, a := range append(locals, remotes...) {
		_ = writeFifo(a.fifo) // the rest end too
	}
	return nil
}

// startAgents adds a project at dir through c and starts n agents there,
// each waiting to read a line from its fifo.
func startAgents(ctx context.Context, c *api.Client, host, dir string, n int) ([]agent, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p, err := api.Call(ctx, c, api.AddProject, api.AddProjectIn{Body: api.ProjectInput{Path: dir}})
	if err != nil {
		return nil, fmt.Errorf("add project on %q: %w", host, err)
	}
	var out []agent
	for i := 0; i < n; i++ {
		a := agent{host: host, project: p.Body.ID, id: fmt.Sprintf("a%d", i), fifo: filepath.Join(dir, fmt.Sprintf("a%d.fifo", i))}
		if err := syscall.Mkfifo(a.fifo, 0o600); err != nil {
			return nil, err
		}
		spec := supervisor.AgentSpec{ID: a.id, Command: "sh", Args: []string{"-c", "read x < '" + a.fifo + "'"}}
		if _, err := api.Call(ctx, c, api.CreateAgent, api.CreateAgentIn{Project: a.project, Body: spec}); err != nil {
			return nil, err
		}
		if _, err := api.Call(ctx, c, api.StartAgent, api.AgentIn{Project: a.project, Agent: a.id}); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	// Running (their shell has the fifo open for reading) before any is timed.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		recs, err := api.Call(ctx, c, api.ListAgents, api.ListAgentsIn{Project: out[0].project})
		if err != nil {
			return nil, err
		}
		running := 0
		for _, r := range recs.Body {
			if r.Status == "running" {
				running++
			}
		}
		if running == n {
			return out, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d of %d agents running on %q", running, n, host)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// writeFifo ends the agent reading it.
func writeFifo(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("x\n")
	f.Close()
	return err
}

// watcher follows the local engine's event stream, as a window does.
type watcher struct {
	mu     sync.Mutex
	ended  map[string]chan time.Time // host/project/agent → when its end was seen
	counts map[string]int            // events received, by name (a host's by theirs)
}

// seen returns the events counted so far, by name, and starts again.
func (w *watcher) seen() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.counts
	w.counts = map[string]int{}
	return c
}

func newWatcher(ctx context.Context, c *api.Client) *watcher {
	w := &watcher{ended: map[string]chan time.Time{}, counts: map[string]int{}}
	go func() {
		_ = c.Stream(ctx, api.StreamIn{}, func(ev api.StreamEvent) error {
			at := time.Now()
			host, name, data := "", ev.Name, ev.Data
			if ev.Name == api.EventHostEvent {
				var he struct {
					Host  string          `json:"host"`
					Event string          `json:"event"`
					Data  json.RawMessage `json:"data"`
				}
				if json.Unmarshal(ev.Data, &he) != nil {
					return nil
				}
				host, name, data = he.Host, he.Event, he.Data
			}
			w.mu.Lock()
			w.counts[strings.TrimPrefix(host+":", ":")+name]++
			w.mu.Unlock()
			if name != "agent:state" {
				return nil
			}
			var r store.Record
			if json.Unmarshal(data, &r) != nil || !r.Status.Terminal() {
				return nil
			}
			select {
			case w.chanOf(host + "/" + r.ProjectID + "/" + r.ID) <- at:
			default:
			}
			return nil
		})
	}()
	return w
}

func (w *watcher) chanOf(key string) chan time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := w.ended[key]
	if ch == nil {
		ch = make(chan time.Time, 1)
		w.ended[key] = ch
	}
	return ch
}

// timeExit ends a and waits for its end on the stream.
func (w *watcher) timeExit(a agent) (time.Duration, error) {
	ch := w.chanOf(a.host + "/" + a.project + "/" + a.id)
	t0 := time.Now()
	if err := writeFifo(a.fifo); err != nil {
		return 0, fmt.Errorf("end %s/%s: %w", a.host, a.id, err)
	}
	select {
	case at := <-ch:
		return at.Sub(t0), nil
	case <-time.After(30 * time.Second):
		return 0, errors.New("the end of " + a.host + "/" + a.id + " was not seen in 30 s")
	}
}

// figures are a process's idle cost over a window.
type figures struct {
	cpuPerMin, wakeupsPerMin, rssMiB float64
	threads                          int
}

func (f figures) String() string {
	return fmt.Sprintf("CPU %.4f CPU-s/min, %.0f wakeups/min, RSS %.1f MiB, %d threads", f.cpuPerMin, f.wakeupsPerMin, f.rssMiB, f.threads)
}

func measureIdle(pid int, d time.Duration) figures {
	time.Sleep(5 * time.Second) // what the last calls left settles
	cpu0, sw0, t0 := benchkit.CPUNs(pid), switches(pid), time.Now()
	time.Sleep(d)
	cpu1, sw1 := benchkit.CPUNs(pid), switches(pid)
	m := time.Since(t0).Minutes()
	return figures{cpuPerMin: float64(cpu1-cpu0) / 1e9 / m, wakeupsPerMin: float64(sw1-sw0) / m,
		rssMiB: benchkit.ProcKiB(pid, "status", "VmRSS:") / 1024, threads: benchkit.Threads(pid)}
}

// switches counts the context switches of every thread of pid.
func switches(pid int) int64 {
	var total int64
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && (k == "voluntary_ctxt_switches" || k == "nonvoluntary_ctxt_switches") {
				var n int64
				fmt.Sscan(strings.TrimSpace(v), &n)
				total += n
			}
		}
	}
	return total
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
