// Command crashloop runs `shepherd serve` under a churn workload — agents
// created, started, stopped and removed by a few concurrent clients; agents
// that exit 0, exit 3, die by a signal; keep-alive crashers; a stubborn one
// with a grandchild — and SIGKILLs the engine at random moments (mid-stop
// and mid-write included), restarts it and selects the project, round after
// round. After every round it checks, against /proc and the records:
//
//   - no corrupt record;
//
//   - no lost agent (one whose create was acknowledged and whose remove was
//     not asked is still listed) and none back from an acknowledged remove;
//
//   - no duplicate: no agent with two live process groups, no live agent
//     process that no record knows;
//
//   - every status true: a live status ⇔ a live process group, with the
//     recorded pid and start time;
//
//   - every exit that happened while the engine was down is known, with the
//     agent's real exit code or signal.
//
//     go run ./bench/crashloop [-rounds 200] [-seed N] [-workers 3]
//
// The same code runs as a short test (crashloop_test.go) in CI.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
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
	"shepherd/backend/lifecycle"
	"shepherd/backend/procid"
	"shepherd/backend/shim"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// serveEnv makes this program run as the `shepherd` CLI (for `serve`).
const serveEnv = "SHEPHERD_CRASHLOOP_AS_CLI"

func main() {
	if os.Getenv(serveEnv) == "1" {
		os.Exit(cli.Run(os.Args[1:]))
	}
	rounds := flag.Int("rounds", 200, "rounds (engine kills)")
	seed := flag.Int64("seed", time.Now().UnixNano(), "random seed")
	workers := flag.Int("workers", 3, "concurrent API clients")
	verbose := flag.Bool("v", false, "print every round")
	flag.Parse()
	dir, err := os.MkdirTemp("", "shepherd-crashloop-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	shim, err := buildShim(dir)
	if err != nil {
		fail(err)
	}
	var log io.Writer = io.Discard
	if *verbose {
		log = os.Stdout
	}
	start := time.Now()
	tot, err := Run(context.Background(), Config{Rounds: *rounds, Seed: *seed, Workers: *workers, Dir: dir, Shim: shim, Log: log})
	fmt.Printf("crash loop: seed %d, %d rounds in %s\n", *seed, tot.Rounds, time.Since(start).Round(time.Second))
	fmt.Println(tot)
	if err != nil {
		fail(err)
	}
	if !tot.Clean() {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "crashloop:", err)
	os.Exit(1)
}

// buildShim builds shepherd-shim into dir.
func buildShim(dir string) (string, error) {
	out := filepath.Join(dir, "shepherd-shim")
	b, err := shim.BuildCommand(out).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build the shim: %v\n%s", err, b)
	}
	return out, nil
}

// Config is one crash-loop run.
type Config struct {
	Rounds  int
	Seed    int64
	Workers int
	Dir     string // scratch folder (data, project, logs)
	Shim    string
	Log     io.Writer // a line per round
	// Exe runs as the CLI when serveEnv=1 is set (default: this program).
	Exe string
}

// Totals are the figures of a run. Every count but Rounds, Ops, Kills and
// ExitsWhileDown must be 0.
type Totals struct {
	Rounds, Ops, Kills, ExitsWhileDown int

	Corrupt, Lost, Resurrected, Duplicates, Untracked, WrongStatus, UnknownExits, WrongCodes, OverCap int
	Problems                                                                                          []string
}

// Clean reports whether no invariant was broken.
func (t Totals) Clean() bool {
	return t.Corrupt+t.Lost+t.Resurrected+t.Duplicates+t.Untracked+t.WrongStatus+t.UnknownExits+t.WrongCodes+t.OverCap == 0
}

func (t Totals) String() string {
	s := fmt.Sprintf("rounds %d, engine kills %d, API calls %d, exits while the engine was down %d (all with their real code: %v)\n"+
		"corrupt records %d, lost agents %d, back after remove %d, duplicate processes %d, untracked processes %d, "+
		"statuses untrue against /proc %d, exits with unknown status %d, wrong exit codes %d, rounds over the cap of %d live %d",
		t.Rounds, t.Kills, t.Ops, t.ExitsWhileDown, t.UnknownExits+t.WrongCodes == 0,
		t.Corrupt, t.Lost, t.Resurrected, t.Duplicates, t.Untracked, t.WrongStatus, t.UnknownExits, t.WrongCodes, maxRunning, t.OverCap)
	for i, p := range t.Problems {
		if i == 20 {
			s += fmt.Sprintf("\n  … and %d more", len(t.Problems)-20)
			break
		}
		s += "\n  " + p
	}
	return s
}

// maxRunning is the project's cap: never more agents live at once.
const maxRunning = 4

// kinds of agent, by the prefix of their id.
var kinds = []struct {
	name      string
	script    string
	keepAlive bool
	weight    int
}{
	{"exit0", "sleep 0.%d; exit 0", false, 3},
	{"exit3", "sleep 0.%d; exit 3", false, 3},
	{"sig", "sleep 0.%d; kill -KILL $$", false, 2},
	{"long", "exec sleep 300 # %d", false, 2},
	{"crash", "sleep 0.%d; exit 1", true, 1},
	{"stub", `trap "" TERM; sh -c 'trap "" TERM; exec sleep 300' & echo %d; while :; do sleep 1; done`, false, 1},
}

// expected is the exit an agent of kind gives when it ends by itself.
func expected(kind string) (code *int, sig string) {
	c := func(n int) *int { return &n }
	switch kind {
	case "exit0":
		return c(0), ""
	case "exit3":
		return c(3), ""
	case "crash":
		return c(1), ""
	case "sig":
		return nil, "SIGKILL"
	}
	return nil, ""
}

func kindOf(id string) string { k, _, _ := strings.Cut(id, "-"); return k }

// engine is one `shepherd serve` process.
type engine struct {
	cmd    *exec.Cmd
	client *api.Client
	done   chan struct{}
}

type loop struct {
	cfg     Config
	rnd     *rand.Rand
	rndMu   sync.Mutex
	env     []string
	engFile string
	project store.Project
	tot     Totals

	mu      sync.Mutex
	created map[string]bool // create acknowledged
	removed map[string]bool // remove acknowledged
	unsure  map[string]bool // a create or remove whose answer was lost with the engine
	// signalled: a stop or pause whose answer was lost with the engine. A
	// stop signals the agent's group first and writes its record after (so
	// that it works on a full disk): an engine killed in between leaves an
	// agent ended by SIGTERM (or SIGKILL after the grace) that the next
	// engine finds ended while it was down.
	signalled map[string]bool
	nextID    int
	exitSeen  map[string]bool // exits while down already counted
}

func (l *loop) intn(n int) int {
	l.rndMu.Lock()
	defer l.rndMu.Unlock()
	return l.rnd.Intn(n)
}

// Run runs the crash loop and returns its totals; an error is a failure of
// the harness itself (the engine would not start), not a broken invariant.
func Run(ctx context.Context, cfg Config) (Totals, error) {
	if cfg.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return Totals{}, err
		}
		cfg.Exe = exe
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 3
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	l := &loop{cfg: cfg, rnd: rand.New(rand.NewSource(cfg.Seed)), created: map[string]bool{}, removed: map[string]bool{},
		unsure: map[string]bool{}, signalled: map[string]bool{}, exitSeen: map[string]bool{}}
	data := filepath.Join(cfg.Dir, "data")
	l.env = append(os.Environ(), serveEnv+"=1", cli.ShimEnv+"="+cfg.Shim,
		"XDG_DATA_HOME="+data, "XDG_STATE_HOME="+filepath.Join(cfg.Dir, "state"),
		"XDG_RUNTIME_DIR="+filepath.Join(cfg.Dir, "run"), "XDG_CONFIG_HOME="+filepath.Join(cfg.Dir, "config"))
	l.engFile = filepath.Join(cfg.Dir, "run", "shepherd", "engine.json")
	projDir := filepath.Join(cfg.Dir, "project")
	if err := os.MkdirAll(projDir, 0o700); err != nil {
		return l.tot, err
	}
	defer l.cleanup()

	eng, err := l.startEngine(ctx)
	if err != nil {
		return l.tot, err
	}
	if _, err := eng.client.JSON(ctx, "POST", "/v1/projects", api.ProjectInput{Path: projDir, Name: "churn"}, &l.project); err != nil {
		eng.kill()
		return l.tot, fmt.Errorf("add project: %w", err)
	}
	if _, err := eng.client.JSON(ctx, "PUT", "/v1/projects/"+l.project.ID+"/settings", map[string]int{"maxRunning": maxRunning}, nil); err != nil {
		eng.kill()
		return l.tot, fmt.Errorf("settings: %w", err)
	}
	for round := 1; round <= cfg.Rounds; round++ {
		l.churn(ctx, eng) // ends with the engine SIGKILLed mid-work
		l.tot.Kills++
		// Down for a while, so that agents end while no engine watches.
		time.Sleep(time.Duration(l.intn(1200)) * time.Millisecond)
		if eng, err = l.startEngine(ctx); err != nil {
			return l.tot, fmt.Errorf("round %d: %w", round, err)
		}
		before := len(l.tot.Problems)
		if err := l.verify(ctx, eng, round); err != nil {
			eng.kill()
			return l.tot, fmt.Errorf("round %d: %w", round, err)
		}
		l.tot.Rounds++
		fmt.Fprintf(cfg.Log, "round %d: %d problems\n", round, len(l.tot.Problems)-before)
	}
	eng.kill()
	return l.tot, nil
}

// startEngine runs `serve` and waits until its API answers.
func (l *loop) startEngine(ctx context.Context) (*engine, error) {
	_ = os.Remove(l.engFile) // a killed engine leaves it behind
	cmd := exec.Command(l.cfg.Exe, "serve")
	cmd.Env = l.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	e := &engine{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(e.done) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if info, err := api.ReadEngineInfo(l.engFile); err == nil && info.PID == cmd.Process.Pid {
			e.client = api.NewClient(info)
			if _, err := e.client.Do(ctx, "GET", "/v1/engine", nil); err == nil {
				return e, nil
			}
		}
		select {
		case <-e.done:
			return nil, fmt.Errorf("engine exited at start: %s", stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			e.kill()
			return nil, fmt.Errorf("engine did not answer within 20 s: %s", stderr.String())
		}
	}
}

// kill SIGKILLs the engine (only the engine: its agents live in sessions of
// their own) and waits for it.
func (e *engine) kill() {
	_ = e.cmd.Process.Signal(syscall.SIGKILL)
	<-e.done
}

// churn runs the workers against eng until a random moment, then returns
// with the requests under way cut short (the engine is killed right after).
func (l *loop) churn(ctx context.Context, eng *engine) {
	d := time.Duration(50+l.intn(650)) * time.Millisecond
	cctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := 0; w < l.cfg.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for cctx.Err() == nil {
				l.op(cctx, eng.client)
			}
		}()
	}
	t := time.NewTimer(d)
	<-t.C
	// Kill while requests are under way: cancel the workers only after.
	go func() { eng.kill() }()
	<-eng.done
	cancel()
	wg.Wait()
}

func (l *loop) path(id string) string {
	return "/v1/projects/" + l.project.ID + "/agents/" + id
}

// op does one random API call and records what its answer proves.
func (l *loop) op(ctx context.Context, c *api.Client) {
	l.mu.Lock()
	var ids []string
	for id := range l.created {
		if !l.removed[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	l.tot.Ops++
	l.mu.Unlock()
	n := l.intn(100)
	switch {
	case n < 1:
		_, _ = c.Do(ctx, "POST", "/v1/projects/"+l.project.ID+"/pause", map[string]any{"now": l.intn(2) == 0})
		return
	case n < 7:
		_, _ = c.Do(ctx, "POST", "/v1/projects/"+l.project.ID+"/unpause", nil)
		return
	case n < 12 && len(ids) > 0:
		id := ids[l.intn(len(ids))]
		l.signal(id, func() error {
			_, err := c.Do(ctx, "POST", l.path(id)+"/pause", map[string]any{"now": true})
			return err
		})
		return
	case n < 17 && len(ids) > 0:
		_, _ = c.Do(ctx, "POST", l.path(ids[l.intn(len(ids))])+"/unpause", nil)
		return
	case n < 35 || len(ids) < 3:
		if len(ids) > 14 {
			return
		}
		l.create(ctx, c)
	case n < 55:
		id := ids[l.intn(len(ids))]
		_, _ = c.Do(ctx, "POST", l.path(id)+"/start", nil)
	case n < 75:
		id := ids[l.intn(len(ids))]
		l.signal(id, func() error {
			_, err := c.Do(ctx, "POST", l.path(id)+"/stop", map[string]int{"graceSec": 1})
			return err
		})
	default:
		id := ids[l.intn(len(ids))]
		l.mu.Lock()
		l.unsure[id] = true
		l.mu.Unlock()
		_, err := c.Do(ctx, "DELETE", l.path(id)+"?force=true&deleteLog=true", nil)
		l.mu.Lock()
		var ae *api.Error
		switch {
		case err == nil:
			l.removed[id] = true
			delete(l.unsure, id)
		case errors.As(err, &ae):
			delete(l.unsure, id) // refused: nothing changed
		}
		l.mu.Unlock()
	}
}

// signal makes a call that signals agent id (a stop, a pause): one whose
// answer is lost with the engine may have signalled it.
func (l *loop) signal(id string, call func() error) {
	err := call()
	var ae *api.Error
	if err != nil && !errors.As(err, &ae) {
		l.mu.Lock()
		l.signalled[id] = true
		l.mu.Unlock()
	}
}

func (l *loop) isSignalled(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.signalled[id]
}

func (l *loop) create(ctx context.Context, c *api.Client) {
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	pick := l.intn(total)
	k := kinds[0]
	for _, kk := range kinds {
		if pick < kk.weight {
			k = kk
			break
		}
		pick -= kk.weight
	}
	l.mu.Lock()
	l.nextID++
	id := fmt.Sprintf("%s-%d", k.name, l.nextID)
	l.unsure[id] = true
	l.mu.Unlock()
	spec := supervisor.AgentSpec{ID: id, Command: "/bin/sh", Args: []string{"-c", fmt.Sprintf(k.script, 1+l.intn(9))},
		KeepAlive: k.keepAlive, GraceSec: 1}
	_, err := c.Do(ctx, "POST", "/v1/projects/"+l.project.ID+"/agents", spec)
	l.mu.Lock()
	defer l.mu.Unlock()
	var ae *api.Error
	switch {
	case err == nil:
		l.created[id] = true
		delete(l.unsure, id)
	case errors.As(err, &ae):
		delete(l.unsure, id)
	}
	if err == nil && l.intn(2) == 0 {
		l.mu.Unlock()
		_, _ = c.Do(ctx, "POST", l.path(id)+"/start", nil)
		l.mu.Lock()
	}
}

// proc is one live process of the workload, found in /proc.
type procInfo struct {
	pid, pgid int
	agent     string
}

// scan lists the live agent processes of the project (shims left out).
func (l *loop) scan() []procInfo {
	ents, _ := os.ReadDir("/proc")
	var out []procInfo
	want := "SHEPHERD_PROJECT_ID=" + l.project.ID
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(env, []byte(want)) {
			continue
		}
		if comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm"); strings.TrimSpace(string(comm)) == "shepherd-shim" {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		f := strings.Fields(string(stat[i+2:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		pgid, _ := strconv.Atoi(f[2])
		agent := ""
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte("SHEPHERD_AGENT_ID=")); ok {
				agent = string(v)
			}
		}
		out = append(out, procInfo{pid: pid, pgid: pgid, agent: agent})
	}
	return out
}

// verify selects the project on the new engine and checks every invariant.
// What depends on processes that are ending at that very moment (a
// keep-alive crasher restarting) is looked at again for a few seconds before
// it counts.
func (l *loop) verify(ctx context.Context, eng *engine, round int) error {
	var sum supervisor.SyncSummary
	if _, err := eng.client.JSON(ctx, "POST", "/v1/projects/"+l.project.ID+"/select", nil, &sum); err != nil {
		return fmt.Errorf("select: %w", err)
	}
	problem := func(format string, a ...any) {
		l.tot.Problems = append(l.tot.Problems, fmt.Sprintf("round %d: ", round)+fmt.Sprintf(format, a...))
	}
	for _, c := range sum.Corrupt {
		l.tot.Corrupt++
		problem("corrupt record of %s: %s", c.AgentID, c.Problem)
	}
	var recs []*store.Record
	if _, err := eng.client.JSON(ctx, "GET", "/v1/projects/"+l.project.ID+"/agents", nil, &recs); err != nil {
		return fmt.Errorf("list: %w", err)
	}
	byID := map[string]*store.Record{}
	for _, r := range recs {
		byID[r.ID] = r
	}
	l.mu.Lock()
	for id := range l.created {
		if !l.removed[id] && !l.unsure[id] && byID[id] == nil {
			l.tot.Lost++
			problem("agent %s was created and never removed, and is gone", id)
		}
	}
	for id := range l.removed {
		if byID[id] != nil {
			l.tot.Resurrected++
			problem("agent %s is listed after its remove was acknowledged", id)
		}
	}
	// What is listed is what exists, whatever the fate of unsure calls.
	for id := range l.unsure {
		if byID[id] != nil {
			l.created[id] = true
			delete(l.removed, id)
		} else {
			l.removed[id] = true
		}
		delete(l.unsure, id)
	}
	for _, r := range recs {
		l.created[r.ID] = true
	}
	l.mu.Unlock()

	// Exits while the engine was down: known, with the real code.
	for _, r := range recs {
		if r.ExitReason != lifecycle.ReasonExitedWhileAppClosed || l.exitSeen[r.ID+r.StoppedAt.String()] {
			continue
		}
		l.exitSeen[r.ID+r.StoppedAt.String()] = true
		l.tot.ExitsWhileDown++
		if r.ExitCode == nil && r.Signal == "" {
			l.tot.UnknownExits++
			problem("agent %s ended while the engine was down, exit unknown (%s: %s)", r.ID, r.Status, r.Error)
			continue
		}
		code, sig := expected(kindOf(r.ID))
		switch {
		case l.isSignalled(r.ID) && (r.Signal == "SIGTERM" || r.Signal == "SIGKILL"):
			// a stop or pause the lost engine had begun
		case code != nil && (r.ExitCode == nil || *r.ExitCode != *code):
			l.tot.WrongCodes++
			problem("agent %s: exit code %v signal %q, want %d", r.ID, r.ExitCode, r.Signal, *code)
		case sig != "" && r.Signal != sig:
			l.tot.WrongCodes++
			problem("agent %s: signal %q code %v, want %s", r.ID, r.Signal, r.ExitCode, sig)
		}
	}
	l.mu.Lock()
	clear(l.signalled) // this engine's calls: the next round's are its own
	l.mu.Unlock()

	// The cap: never more live agents than maxRunning, by their records and
	// by their processes.
	live := 0
	for _, r := range recs {
		if r.Status.Live() {
			live++
		}
	}
	groups := map[string]bool{}
	for _, p := range l.scan() {
		groups[p.agent] = true
	}
	if live > maxRunning || len(groups) > maxRunning {
		l.tot.OverCap++
		problem("%d agents live by their records and %d with live processes, over the cap of %d", live, len(groups), maxRunning)
	}

	// Processes against records: converge within a few seconds.
	var last []string
	var dup, untracked, wrong int
	for try := 0; try < 30; try++ {
		if try > 0 {
			time.Sleep(100 * time.Millisecond)
			if _, err := eng.client.JSON(ctx, "GET", "/v1/projects/"+l.project.ID+"/agents", nil, &recs); err != nil {
				return fmt.Errorf("list: %w", err)
			}
			byID = map[string]*store.Record{}
			for _, r := range recs {
				byID[r.ID] = r
			}
		}
		last, dup, untracked, wrong = nil, 0, 0, 0
		groups := map[string]map[int]bool{}
		for _, p := range l.scan() {
			if groups[p.agent] == nil {
				groups[p.agent] = map[int]bool{}
			}
			groups[p.agent][p.pgid] = true
		}
		for id, gs := range groups {
			r := byID[id]
			switch {
			case r == nil:
				untracked++
				last = append(last, fmt.Sprintf("live process group(s) %v of agent %s, which no record knows", keys(gs), id))
			case len(gs) > 1:
				dup++
				last = append(last, fmt.Sprintf("agent %s has %d live process groups %v", id, len(gs), keys(gs)))
			case !r.Status.Live():
				wrong++
				last = append(last, fmt.Sprintf("agent %s is %s but its group %v is alive", id, r.Status, keys(gs)))
			}
		}
		for _, r := range recs {
			if !r.Status.Live() || r.Status == lifecycle.Spawning {
				continue
			}
			if c := procid.Compare(r.PID, r.ProcessStartTime); c != procid.Same {
				wrong++
				last = append(last, fmt.Sprintf("agent %s is %s with pid %d, which is %s", r.ID, r.Status, r.PID, c))
			}
		}
		if len(last) == 0 {
			break
		}
	}
	l.tot.Duplicates += dup
	l.tot.Untracked += untracked
	l.tot.WrongStatus += wrong
	for _, p := range last {
		problem("%s", p)
	}
	return nil
}

func keys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// cleanup ends every agent process group the run left (ours: found by the
// project's id in their environment) and their shims.
func (l *loop) cleanup() {
	for _, p := range l.scan() {
		_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	}
	// Shims end once their agents are gone; wait a moment for them, so the
	// scratch folder can be removed.
	for i := 0; i < 100 && l.shimsLeft() > 0; i++ {
		time.Sleep(20 * time.Millisecond)
	}
}

func (l *loop) shimsLeft() int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm"); strings.TrimSpace(string(comm)) != "shepherd-shim" {
			continue
		}
		f, err := os.Open("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
			if i := bytes.IndexByte(data, 0); i >= 0 {
				return i + 1, data[:i], nil
			}
			if atEOF && len(data) > 0 {
				return len(data), data, nil
			}
			return 0, nil, nil
		})
		for sc.Scan() {
			if sc.Text() == "SHEPHERD_PROJECT_ID="+l.project.ID {
				n++
			}
		}
		f.Close()
	}
	return n
}
