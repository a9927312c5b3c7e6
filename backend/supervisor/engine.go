// Package supervisor is the engine: the in-memory registry of agents (the
// truth while it runs), the operations of SPEC (create, start, stop, stop
// all, remove, resume), the one function that applies a state transition,
// and the three layers of monitoring (exits, timeouts, the watchdog and the
// stale check) with recovery. The process itself is handled by package proc.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"shepherd/backend/filewatch"
	"shepherd/backend/notify"
	"shepherd/backend/proc"
	"shepherd/backend/procid"
	"shepherd/backend/sandbox"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/budget"
	"shepherd/backend/supervisor/needsyou"
	"shepherd/backend/supervisor/queue"
	"shepherd/backend/supervisor/stats"
	"shepherd/backend/supervisor/worktrees"
)

// Config configures an Engine.
type Config struct {
	DataDir  string          // $XDG_DATA_HOME/shepherd
	ShimPath string          // the shepherd-shim executable
	Emitter  Emitter         // may be nil
	Logger   zerolog.Logger  // the app's logger
	Clock    clockwork.Clock // nil: the real clock
	// KillConfirm bounds the wait for a group to vanish after SIGKILL before
	// a stop is reported as ProcessStopFailed. 0: 5 s.
	KillConfirm time.Duration
	// Notifier gets failures, resume limits and other notices (may be nil;
	// they are pushed as "notify" events either way).
	Notifier notify.Notifier
	// NotifyWindow: at most one notification per agent per window, the rest
	// coalesced into one at its end (0: one minute; negative: no coalescing).
	NotifyWindow time.Duration
	// LogPoll is how often the logs of running agents are looked at for
	// growth (activity), session ids and result lines. 0: 500 ms.
	LogPoll time.Duration
	// WatchFiles: logs and pause signal files are watched through the
	// kernel's file-change notification instead of polled (watchfiles.go).
	// The real engine turns it on; tests that drive the clock by hand poll.
	WatchFiles bool
	// AfterPasses, if set, is called after each wakeup of the watchdog
	// passes and stale checks (the engine's idle heartbeat), on the timer's
	// goroutine: the engine process returns memory to the system there.
	AfterPasses func()
	// Recoveries bounds how many recoveries (stale kills, orphans) run at
	// once. 0: 4.
	Recoveries int
	// SandboxProbe says what of the sandbox this machine can enforce (nil:
	// find out by starting the shim in the namespaces a sandboxed agent
	// gets). Tests inject one to play a machine without support.
	SandboxProbe func() sandbox.Support
	// Private are Shepherd's own folders (data, state, config, runtime: the
	// records, the logs, the API token): hidden from every sandboxed agent,
	// and never granted. DataDir is always one of them.
	Private []string
	// WorktreeDir is where agents' worktrees go (empty: a folder
	// "shepherd-worktrees" beside DataDir).
	WorktreeDir string
	// LowSpaceBytes: under this much free space in the data folder's file
	// system the engine raises its low-space alert (0: the lesser of 512
	// MiB and 5 % of the file system; disk.go).
	LowSpaceBytes uint64
	// StatFS reads the free and total bytes of the file system a path is
	// on (nil: statfs). Tests play a full disk with it.
	StatFS func(path string) (free, total uint64, err error)
}

// Engine supervises the agents of every loaded project.
//
// Locks are taken in one order only: agent.mu, then project.mu, then
// Engine.mu (and run.scanMu, store's own lock as leaves). Code that holds
// a lower lock never takes a higher one. Nothing that waits on a process —
// a grace, a kill confirmation — runs under agent.mu: a stop marks the run
// as being stopped under the lock, then waits without it.
type Engine struct {
	cfg    Config
	st     *store.Store
	runner *proc.Runner
	clock  clockwork.Clock
	toasts *notify.Coalescer // one notification per agent per NotifyWindow
	log    zerolog.Logger
	bootID string

	ctx    context.Context // cancelled by Close: stops watching, never agents
	cancel context.CancelFunc
	tasks  tasks

	recoverySlots chan struct{}        // bounds the recoveries under way
	busy          atomic.Int64         // recoveries and notifications under way
	stats         *stats.Sampler       // the CPU and memory sampler (package stats)
	budget        *budget.Budgets      // the budgets (package budget)
	needs         *needsyou.Needs      // waits, acknowledgments (package needsyou)
	wt            *worktrees.Worktrees // agents' worktrees (package worktrees)
	queues        *queue.Queues        // run queues and pauses (package queue)
	hooks         []any                // the features hung on the lifecycle (hooks.go)
	mon           monitors             // every project's watchdog and stale check (monitor.go)

	timerMu sync.Mutex
	armed   map[*armed]struct{} // timers not yet run or stopped

	mu       sync.Mutex
	projects map[string]*project
	selected string
	// closedSum is what LoadAll found (WhileClosed).
	closedSum *WhileClosed
	live      map[*run]*agent // every run being watched, for the log poller
	poller    clockwork.Timer
	polling   bool               // the log poller runs
	pausing   bool               // the pause watcher's timer runs
	files     *filewatch.Watcher // with WatchFiles; nil: poll

	sbOnce sync.Once
	sb     sandbox.Support

	privOnce sync.Once
	priv     []string
	apiURL   string // where the API listens (guarded by mu), told to agents

	disk     diskState    // the data folder's free space, and writes that wait for it (disk.go)
	ans      answersState // agents' questions and kept rules (answers.go)
	usage    usageState   // agents waiting for a usage limit's reset (usage.go)
	hooksOut webhookState // notifications to webhook channels (webhooks.go)

	testHooks testHooks
}

// testHooks let tests stop the engine at a chosen point of a path that is
// otherwise a matter of timing. All nil outside tests.
type testHooks struct {
	afterStaleKill func(agentID string)   // stale recovery: group killed and recorded, not yet resumed
	loading        func(projectID string) // a project's load has begun
	closing        func()                 // Close is about to wait for the engine's tasks
}

// tasks tracks every goroutine and timer callback of the engine, so that
// Close can wait for the last of them, and refuses new ones once closing.
type tasks struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// enter registers a task; false once the engine is closing.
func (t *tasks) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	return true
}

func (t *tasks) leave() { t.wg.Done() }

func (t *tasks) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.wg.Wait()
}

// goTask runs f in a tracked goroutine; false (f not run) once closing.
func (e *Engine) goTask(f func()) bool {
	if !e.tasks.enter() {
		return false
	}
	go func() {
		defer e.tasks.leave()
		f()
	}()
	return true
}

// after runs f after d on the engine's clock, as a tracked task, unless the
// engine is closing or life has ended by then. Every such timer is known
// until it has run or been stopped, which is what lets settle tell that
// everything due by now has happened.
func (e *Engine) after(life context.Context, d time.Duration, f func()) clockwork.Timer {
	a := &armed{due: e.clock.Now().Add(d)}
	e.timerMu.Lock()
	e.armed[a] = struct{}{}
	e.timerMu.Unlock()
	t := e.clock.AfterFunc(d, func() {
		defer e.disarm(a)
		if !e.tasks.enter() {
			return
		}
		defer e.tasks.leave()
		if life.Err() == nil {
			f()
		}
	})
	return &engineTimer{Timer: t, e: e, a: a}
}

type armed struct{ due time.Time }

func (e *Engine) disarm(a *armed) {
	e.timerMu.Lock()
	delete(e.armed, a)
	e.timerMu.Unlock()
}

// engineTimer forgets its armed entry when stopped before it fired.
type engineTimer struct {
	clockwork.Timer
	e *Engine
	a *armed
}

func (t *engineTimer) Stop() bool {
	ok := t.Timer.Stop()
	if ok {
		t.e.disarm(t.a)
	}
	return ok
}

// transient runs f as a tracked goroutine counted as work under way (a
// recovery, a notification), for settle.
func (e *Engine) transient(f func()) bool {
	e.busy.Add(1)
	ok := e.goTask(func() {
		defer e.busy.Add(-1)
		f()
	})
	if !ok {
		e.busy.Add(-1)
	}
	return ok
}

// settle waits until every timer due by the clock's now has run and no
// recovery or notification is under way: after moving a fake clock, what
// was going to happen has happened. Tests use it instead of sleeping.
func (e *Engine) settle(ctx context.Context) error {
	for {
		now := e.clock.Now()
		due := 0
		e.timerMu.Lock()
		for a := range e.armed {
			if !a.due.After(now) {
				due++
			}
		}
		e.timerMu.Unlock()
		if due == 0 && e.busy.Load() == 0 {
			return nil
		}
		t := time.NewTimer(time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("engine not settled: %d timers due, %d tasks under way", due, e.busy.Load())
		case <-t.C:
		}
	}
}

// New opens the data folder and returns an engine. Projects are loaded (and
// their agents synced) by LoadAll or on first use.
func New(cfg Config) (*Engine, error) {
	st, err := store.Open(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.KillConfirm == 0 {
		cfg.KillConfirm = 5 * time.Second
	}
	if cfg.LogPoll == 0 {
		cfg.LogPoll = 500 * time.Millisecond
	}
	if cfg.Recoveries <= 0 {
		cfg.Recoveries = 4
	}
	if cfg.ShimPath == "" {
		return nil, errors.New("no shim executable configured")
	}
	boot, err := procid.BootID()
	if err != nil {
		return nil, fmt.Errorf("read boot identity: %w", err)
	}
	e := &Engine{cfg: cfg, st: st, clock: cfg.Clock, log: cfg.Logger, bootID: boot,
		runner:        &proc.Runner{Shim: cfg.ShimPath, Clock: cfg.Clock, KillConfirm: cfg.KillConfirm},
		recoverySlots: make(chan struct{}, cfg.Recoveries),
		projects:      map[string]*project{}, live: map[*run]*agent{}, armed: map[*armed]struct{}{}}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.stats = stats.New(core{e})
	e.budget = budget.New(core{e}, cfg.Logger)
	e.needs = needsyou.New(core{e}, cfg.Logger)
	e.wt = worktrees.New(e.ctx, core{e}, cfg.Logger, worktreeRoot(cfg))
	e.queues = queue.New(core{e}, cfg.Logger)
	// The lifecycle hooks, in the order they are called (hooks.go): the
	// hooks a Claude Code run gets go before its budget's limits.
	e.hooks = []any{e.needs, e.budget, e.wt}
	window := cfg.NotifyWindow
	if window == 0 {
		window = time.Minute
	}
	e.toasts = notify.NewCoalescer(cfg.Clock, window, e.deliver)
	ps, err := st.LoadProjects()
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		e.projects[p.ID] = newProject(p)
	}
	if !e.startFileWatch() {
		e.startPoller()
		e.startPauseWatcher()
	}
	return e, nil
}

// Close stops watching and every timer, and returns once no goroutine of
// the engine is left and none will write again. Agents keep running: they
// are durable, and the next engine re-attaches them. A stop under way is
// left for the next engine to finish (the record says so).
func (e *Engine) Close() {
	e.cancel()
	e.toasts.Stop()
	e.mu.Lock()
	ps := make([]*project, 0, len(e.projects))
	for _, p := range e.projects {
		ps = append(ps, p)
	}
	if e.poller != nil {
		e.poller.Stop()
	}
	e.mu.Unlock()
	for _, p := range ps {
		e.stopMonitor(p)
		for _, a := range p.list() {
			a.mu.Lock()
			// A start under way is let finish (its shim's hello is bounded):
			// its agent runs on, recorded, for the next engine.
			e.awaitStart(context.Background(), a)
			a.end()
			if a.run != nil {
				a.run.stopTimers()
			}
			e.cancelRestart(a)
			a.mu.Unlock()
		}
	}
	if e.files != nil {
		if err := e.files.Close(); err != nil { // no call starts after; one under way is a task
			e.log.Warn().Err(err).Msg("cannot close the file watch")
		}
	}
	if h := e.testHooks.closing; h != nil {
		h()
	}
	e.tasks.close()
	e.runner.Close() // after the tasks: none starts a shim any more
	e.closeWebhooks()
}

// Store exposes the on-disk store (read-only use by callers such as tests).
func (e *Engine) Store() *store.Store { return e.st }

// BootID is the identity of the boot this engine runs in.
func (e *Engine) BootID() string { return e.bootID }

func (e *Engine) emit(event string, data any) {
	if e.cfg.Emitter != nil {
		e.cfg.Emitter.Emit(event, data)
	}
}

// notify pushes a notification to the UI (toast) and the Notifier (native),
// and logs it.
func (e *Engine) notify(n notify.Notification) {
	if n.ProjectID != "" && n.ProjectName == "" {
		n.ProjectName = e.projectName(n.ProjectID)
	}
	e.log.Info().Str("project", n.ProjectID).Str("agent", n.AgentID).Str("kind", n.Kind).Str("level", n.Level).
		Msg(n.Message)
	e.toasts.Notify(n)
	e.sendWebhooks(n)
}

// deliver shows a notification (after the storm coalescer): a toast in the
// windows, and a native one when a Notifier is set.
func (e *Engine) deliver(n notify.Notification) {
	e.emit(EventNotify, n)
	if e.cfg.Notifier != nil {
		// A native notifier may block on the desktop's bus: never while an
		// agent's lock is held, and never past Close.
		e.transient(func() { e.cfg.Notifier.Notify(n) })
	}
}

// projectName is a project's name as the user gave it (its id when it has
// none or is unknown): what messages call it.
func (e *Engine) projectName(id string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.projects[id]; p != nil && p.info.Name != "" {
		return p.info.Name
	}
	return id
}
