// Command window measures the window's own memory over a long busy session:
// the real built app (build/bin/shepherd, the window, a WebKitGTK web view)
// under a virtual X display of its own, attached to a headless engine that
// runs one busy project: agents writing log lines without pause, a
// Claude-like agent writing stream-json (a session that works on and on), keep-alive agents that crash and
// are restarted, idle ones, and agents the bench starts and stops in a loop
// so that events flow. The window shows the project with an agent's detail
// (its live log) open, and steps to the next agent now and then as a user
// would. Every -interval the PSS (/proc/PID/smaps_rollup) of the window's
// process and of every process it started (WebKit's web and network
// processes) is read; at the end a table and the verdict against the target.
//
//	go run ./bench/window [-app build/bin] [-duration 30m] [-interval 1m] [-agents 40]
//
// Target (issue "the window's own footprint"): flat (the last 10 minutes
// grow by less than -flat percent) and ≤ 250 MiB PSS in total.
//
// Needs Xvfb and xdotool (scripts/setup.sh --test); -app takes a folder that
// holds shepherd, shepherd-engine and shepherd-shim (default: build them).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"shepherd/backend/api"
	"shepherd/backend/cli"
	"shepherd/backend/paths"
	"shepherd/backend/store"
	"shepherd/bench/internal/benchkit"
)

// started holds every process the bench started, ended at the end by PID.
var (
	startedMu sync.Mutex
	started   []*os.Process
	cleanups  []func()
)

func track(p *os.Process) {
	startedMu.Lock()
	started = append(started, p)
	startedMu.Unlock()
}

// onExit adds a clean-up, run at the end before what is still running is ended.
func onExit(f func()) {
	startedMu.Lock()
	cleanups = append(cleanups, f)
	startedMu.Unlock()
}

// finish runs the clean-ups (last first), then ends what is still running;
// once, whoever calls it first (the end, a failure, an interrupt).
func finish() { finishOnce.Do(cleanUp) }

var (
	finishOnce  sync.Once
	interrupted atomic.Bool
)

func cleanUp() {
	startedMu.Lock()
	fs := cleanups
	cleanups = nil
	startedMu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	startedMu.Lock()
	defer startedMu.Unlock()
	for i := len(started) - 1; i >= 0; i-- {
		_ = started[i].Signal(syscall.SIGTERM)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range started {
		for p.Signal(syscall.Signal(0)) == nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		_ = p.Kill()
	}
	started = nil
}

func check(err error) {
	if err != nil {
		if interrupted.Load() {
			select {} // the interrupt ends the bench
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		finish()
		os.Exit(1)
	}
}

// run runs a CLI verb in this process against the engine.
func run(out any, args ...string) error { return benchkit.CLI(out, args...) }

func main() {
	// The agents' own programs: this executable run again.
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "emit-lines":
			emitLines(os.Args[2:])
			return
		case "emit-stream":
			emitStream()
			return
		case "crash-after":
			d, _ := time.ParseDuration(os.Args[2])
			fmt.Println("starting; will crash after", d)
			time.Sleep(d)
			fmt.Fprintln(os.Stderr, "panic: something went wrong (a crash the bench asked for)")
			os.Exit(2)
		}
	}

	appDir := flag.String("app", "", "folder holding shepherd, shepherd-engine and shepherd-shim (default: build them with scripts/lib.sh's build_app)")
	duration := flag.Duration("duration", 30*time.Minute, "how long the window is measured")
	interval := flag.Duration("interval", time.Minute, "time between samples")
	nAgents := flag.Int("agents", 40, "agents in the busy project (at least 10)")
	browse := flag.Duration("browse", 20*time.Second, "time between steps of the open detail to the next agent (0: one agent all along)")
	cycle := flag.Duration("cycle", 5*time.Second, "time between starts or stops of the cycled agents")
	target := flag.Float64("target", 250, "target total PSS, MiB")
	flat := flag.Float64("flat", 5, "the last 10 minutes may grow by less than this many percent")
	keep := flag.Bool("keep", false, "keep the bench's folder (the window's, the engine's and Xvfb's logs, the project) and say where")
	flag.Parse()
	if *nAgents < 10 {
		check(fmt.Errorf("-agents %d: at least 10", *nAgents))
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		interrupted.Store(true)
		fmt.Fprintln(os.Stderr, "bench: interrupted")
		finish()
		os.Exit(130)
	}()

	root, err := os.MkdirTemp("", "shepherd-bench-window-")
	check(err)
	onExit(func() {
		if *keep {
			fmt.Println("kept:", root)
		} else {
			os.RemoveAll(root)
		}
	})
	for _, v := range []string{"XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"} {
		d := filepath.Join(root, strings.ToLower(v))
		check(os.MkdirAll(d, 0o700))
		os.Setenv(v, d)
	}
	// No session bus: the app must neither use nor start one.
	os.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(root, "no-session-bus"))
	os.Setenv("NO_AT_BRIDGE", "1")
	os.Unsetenv(cli.EngineEnv)
	os.Unsetenv(cli.ShimEnv)

	if *appDir == "" {
		fmt.Println("building the app (wails build, shepherd-engine, shepherd-shim)…")
		cmd := exec.Command("bash", "-c", "source scripts/lib.sh && build_app && dirname \"$(app_bin)\"")
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		check(err)
		*appDir = strings.TrimSpace(string(out))
	}
	window := filepath.Join(*appDir, "shepherd")
	engineBin := filepath.Join(*appDir, "shepherd-engine")
	for _, f := range []string{window, engineBin, filepath.Join(*appDir, "shepherd-shim")} {
		_, err := os.Stat(f)
		check(err)
	}
	self, err := os.Executable()
	check(err)

	// The engine, a session of its own.
	console, err := os.Create(filepath.Join(root, "engine-console.log"))
	check(err)
	eng := exec.Command(engineBin, "serve")
	eng.Stdout, eng.Stderr = console, console
	eng.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	check(eng.Start())
	track(eng.Process)
	var info api.EngineInfo
	for deadline := time.Now().Add(15 * time.Second); ; {
		if info, err = api.ReadEngineInfo(paths.Default().EngineFile()); err == nil {
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
	fmt.Printf("engine: pid %d, %s\n", eng.Process.Pid, info.URL)

	// The busy project.
	dir := filepath.Join(root, "project")
	check(os.MkdirAll(dir, 0o755))
	var proj store.Project
	check(run(&proj, "add-project", dir, "--name", "busy"))
	onExit(func() {
		// The window quits its engine as it quits; else this does.
		if _, err := os.Stat(paths.Default().EngineFile()); err == nil {
			_ = run(nil, "stop-all", proj.ID)
			_ = run(nil, "quit")
		}
	})
	n := *nAgents
	nWriters, nCrashers, nCycled := n*2/5, n/10, n/8
	nIdle := n - nWriters - nCrashers - nCycled - 1
	var cycled []string
	for i := 0; i < nWriters; i++ {
		// From 1 to 8 lines a second: a build, a test run, a chatty server.
		check(run(nil, "create", proj.ID, fmt.Sprintf("writer-%02d", i), "--grace", "1", "--", self, "emit-lines", strconv.Itoa(1+i%8)))
	}
	check(run(nil, "create", proj.ID, "claude", "--profile", "claude-stream-json", "--grace", "1", "--", self, "emit-stream"))
	for i := 0; i < nCrashers; i++ {
		check(run(nil, "create", proj.ID, fmt.Sprintf("crasher-%d", i), "--keep-alive", "--grace", "1", "--", self, "crash-after", fmt.Sprintf("%ds", 5+5*i)))
	}
	for i := 0; i < nIdle; i++ {
		check(run(nil, "create", proj.ID, fmt.Sprintf("idle-%02d", i), "--grace", "1", "--", "sleep", "1000000"))
	}
	for i := 0; i < nCycled; i++ {
		id := fmt.Sprintf("cycled-%d", i)
		cycled = append(cycled, id)
		check(run(nil, "create", proj.ID, id, "--grace", "1", "--", self, "emit-lines", "2"))
	}
	var recs []store.Record
	check(run(&recs, "ls", proj.ID))
	for _, r := range recs {
		if !strings.HasPrefix(r.ID, "cycled-") {
			check(run(nil, "start", proj.ID, r.ID))
		}
	}
	fmt.Printf("project busy: %d agents (%d writing 1-8 lines/s, 1 Claude-like in stream-json, %d keep-alive crashers, %d idle, %d started and stopped in turn every %v)\n",
		len(recs), nWriters, nCrashers, nIdle, nCycled, *cycle)

	// The cycled agents: one of them started or stopped every -cycle.
	stopLoad := make(chan struct{})
	var loadDone sync.WaitGroup
	loadDone.Add(1)
	go func() {
		defer loadDone.Done()
		t := time.NewTicker(*cycle)
		defer t.Stop()
		running := map[string]bool{}
		for i := 0; ; i++ {
			select {
			case <-stopLoad:
				return
			case <-t.C:
			}
			id := cycled[i%len(cycled)]
			verb := "start"
			if running[id] {
				verb = "stop"
			}
			if err := run(nil, verb, proj.ID, id); err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
			}
			running[id] = !running[id]
		}
	}()

	// A display of our own; Xvfb tells which number it took.
	r, w, err := os.Pipe()
	check(err)
	xlog, err := os.Create(filepath.Join(root, "xvfb.log"))
	check(err)
	xvfb := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp")
	xvfb.ExtraFiles = []*os.File{w}
	xvfb.Stdout, xvfb.Stderr = xlog, xlog
	check(xvfb.Start())
	track(xvfb.Process)
	w.Close()
	num := make(chan string, 1)
	go func() {
		b := make([]byte, 16)
		k, _ := r.Read(b)
		num <- strings.TrimSpace(string(b[:k]))
	}()
	select {
	case d := <-num:
		if d == "" {
			check(fmt.Errorf("Xvfb did not start (see its log)"))
		}
		os.Setenv("DISPLAY", ":"+d)
	case <-time.After(20 * time.Second):
		check(fmt.Errorf("Xvfb did not start in 20 s"))
	}

	// The window.
	wlog, err := os.Create(filepath.Join(root, "window.log"))
	check(err)
	win := exec.Command(window)
	win.Stdout, win.Stderr = wlog, wlog
	win.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	check(win.Start())
	winPid := win.Process.Pid
	track(win.Process)
	winDone := make(chan struct{})
	go func() { _ = win.Wait(); close(winDone) }()
	// Ended before the rest: SIGTERM quits the window (and not the engine).
	onExit(func() {
		select {
		case <-winDone:
			return
		default:
		}
		kids := tree(winPid)
		_ = win.Process.Signal(syscall.SIGTERM)
		select {
		case <-winDone:
		case <-time.After(5 * time.Second):
			_ = win.Process.Kill()
			<-winDone
		}
		// WebKit's helpers end with their parent; any left are ours to end.
		for _, k := range kids[1:] {
			if p, err := os.FindProcess(k.pid); err == nil && p.Signal(syscall.Signal(0)) == nil {
				_ = p.Kill()
			}
		}
	})

	// Agents are durable: they are stopped before the window quits, which
	// quits the engine.
	onExit(func() {
		close(stopLoad)
		loadDone.Wait()
		if err := run(nil, "stop-all", proj.ID); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
	})

	title := fmt.Sprintf("Shepherd — busy · %d agents", len(recs))
	var wid string
	for deadline := time.Now().Add(90 * time.Second); wid == ""; {
		out, _ := exec.Command("xdotool", "search", "--onlyvisible", "--name", "^"+title).Output()
		if f := strings.Fields(string(out)); len(f) > 0 {
			wid = f[0]
			break
		}
		select {
		case <-winDone:
			b, _ := os.ReadFile(wlog.Name())
			check(fmt.Errorf("the window exited at start:\n%s", b))
		default:
		}
		if time.Now().After(deadline) {
			check(fmt.Errorf("no window titled %q within 90 s", title))
		}
		time.Sleep(500 * time.Millisecond)
	}
	key := func(keys ...string) {
		_ = exec.Command("xdotool", "windowfocus", "--sync", wid).Run()
		args := append([]string{"key", "--clearmodifiers"}, keys...)
		if out, err := exec.Command("xdotool", args...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "bench: xdotool %v: %v %s\n", keys, err, out)
		}
	}
	// The first agent of the list, its detail opened (↓ puts the cursor on
	// it, Enter opens it).
	key("Down")
	time.Sleep(300 * time.Millisecond)
	key("Return")
	fmt.Printf("window: pid %d on display %s, the list shown and an agent's detail opened\n", winPid, os.Getenv("DISPLAY"))

	// Browsing: the open detail steps down the list and back up.
	if *browse > 0 {
		stopBrowse := make(chan struct{})
		var browseDone sync.WaitGroup
		browseDone.Add(1)
		go func() {
			defer browseDone.Done()
			t := time.NewTicker(*browse)
			defer t.Stop()
			for i := 0; ; i++ {
				select {
				case <-stopBrowse:
					return
				case <-t.C:
				}
				if (i/(len(recs)-1))%2 == 0 {
					key("Down")
				} else {
					key("Up")
				}
			}
		}()
		onExit(func() { close(stopBrowse); browseDone.Wait() })
	}

	// Sampling.
	type sample struct {
		at                       time.Duration
		window, web, net, others float64 // PSS, MiB
		private                  float64 // the pages no other process maps, MiB
		procs                    int
	}
	var samples []sample
	take := func(at time.Duration) sample {
		s := sample{at: at}
		for _, p := range tree(winPid) {
			pss := rollupKiB(p.pid, "Pss:") / 1024
			s.private += (rollupKiB(p.pid, "Private_Clean:") + rollupKiB(p.pid, "Private_Dirty:")) / 1024
			switch {
			case p.pid == winPid:
				s.window = pss
			case strings.HasPrefix(p.comm, "WebKitWebProces"):
				s.web += pss
			case strings.HasPrefix(p.comm, "WebKitNetworkPr"):
				s.net += pss
			default:
				s.others += pss
			}
			s.procs++
		}
		return s
	}
	// PSS shares a library's pages among the processes that map them, so
	// it falls while another WebKit app runs; private is not shared.
	fmt.Printf("%6s  %10s  %10s  %10s  %10s  %10s  %10s  %s\n", "minute", "window", "web", "network", "others", "total", "private", "processes")
	print := func(s sample) {
		fmt.Printf("%6.1f  %10.1f  %10.1f  %10.1f  %10.1f  %10.1f  %10.1f  %d\n", s.at.Minutes(), s.window, s.web, s.net, s.others,
			s.window+s.web+s.net+s.others, s.private, s.procs)
	}
	start := time.Now()
	// The first sample once the detail has loaded.
	time.Sleep(5 * time.Second)
	for {
		s := take(time.Since(start))
		samples = append(samples, s)
		print(s)
		if s.at >= *duration {
			break
		}
		select {
		case <-winDone:
			b, _ := os.ReadFile(wlog.Name())
			check(fmt.Errorf("the window exited during the run:\n%s", tail(string(b), 20)))
		case <-time.After(time.Until(start.Add(time.Duration(len(samples)) * *interval))):
		}
	}

	// Verdict.
	last := samples[len(samples)-1]
	total := func(s sample) float64 { return s.window + s.web + s.net + s.others }
	ref := samples[0]
	for _, s := range samples {
		if s.at <= last.at-10*time.Minute {
			ref = s
		}
	}
	growth := (total(last) - total(ref)) / total(ref) * 100
	peak := 0.0
	for _, s := range samples {
		peak = max(peak, total(s))
	}
	verdict := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "MISSED"
	}
	fmt.Printf("after %v: total %.1f MiB PSS (window %.1f, web %.1f, network %.1f), peak %.1f; target ≤ %.0f: %s\n",
		last.at.Round(time.Second), total(last), last.window, last.web, last.net, peak, *target, verdict(total(last) <= *target))
	fmt.Printf("growth over the last %v: %+.1f%% (%.1f → %.1f MiB; private %.1f → %.1f); flat (< %.0f%%): %s\n",
		(last.at - ref.at).Round(time.Second), growth, total(ref), total(last), ref.private, last.private, *flat, verdict(growth < *flat))
	finish()
}

type proc struct {
	pid  int
	comm string
}

// tree is pid and every process below it (by PPID), pid first.
func tree(pid int) []proc {
	parent := map[int]int{}
	comm := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		s := string(b)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		f := strings.Fields(s[closing+1:])
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[p] = pp
		comm[p] = s[open+1 : closing]
	}
	out := []proc{{pid, comm[pid]}}
	for i := 0; i < len(out); i++ {
		for p, pp := range parent {
			if pp == out[i].pid {
				out = append(out, proc{p, comm[p]})
			}
		}
	}
	return out
}

// rollupKiB reads a "Key: N kB" line of /proc/PID/smaps_rollup.
func rollupKiB(pid int, key string) float64 { return benchkit.ProcKiB(pid, "smaps_rollup", key) }

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// emitLines writes args[0] lines a second, forever, as a busy agent's log.
func emitLines(args []string) {
	rate := 1
	if len(args) > 0 {
		rate, _ = strconv.Atoi(args[0])
	}
	rate = max(rate, 1)
	steps := []string{"compiling", "linking", "running tests in", "checking", "downloading", "formatting"}
	t := time.NewTicker(time.Second / time.Duration(rate))
	for i := 0; ; i++ {
		<-t.C
		fmt.Printf("%s %s package/%03d/module_%d.go … ok (%d ms)\n", time.Now().Format("15:04:05.000"),
			steps[i%len(steps)], i%997, i%13, 10+i%400)
		if i%50 == 49 {
			fmt.Fprintf(os.Stderr, "warning: step %d took longer than usual\n", i)
		}
	}
}

// emitStream writes what Claude Code's stream-json output holds (claude -p
// --verbose --output-format stream-json) for a session that works without
// end: text, a tool call and its result, about one message a second, never
// the result line that ends a run.
func emitStream() {
	line := func(v map[string]any) {
		b, _ := json.Marshal(v)
		fmt.Println(string(b))
	}
	const session = "bench-session"
	line(map[string]any{"type": "system", "subtype": "init", "session_id": session, "cwd": ".", "model": "bench"})
	tools := []string{"Read", "Edit", "Bash", "Grep"}
	for i := 0; ; i++ {
		id := fmt.Sprintf("toolu_%d", i)
		line(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{
			"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("Step %d: looking at package/%03d next; the error handling there needs a second look.", i, i%997)}},
			"usage":   map[string]any{"input_tokens": 100 + i%50, "output_tokens": 20 + i%30}}})
		time.Sleep(400 * time.Millisecond)
		line(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{
			"content": []any{map[string]any{"type": "tool_use", "id": id, "name": tools[i%len(tools)],
				"input": map[string]any{"command": fmt.Sprintf("go test ./package/%03d/...", i%997)}}}}})
		time.Sleep(400 * time.Millisecond)
		line(map[string]any{"type": "user", "session_id": session, "message": map[string]any{
			"content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": strings.Repeat("ok  \tpackage/module\t0.01s\n", 1+i%5)}}}})
		time.Sleep(400 * time.Millisecond)
	}
}
