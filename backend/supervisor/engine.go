// Package supervisor is the engine: the in-memory registry of agents (the
// truth while it runs), the operations of SPEC (create, start, stop, stop
// all, remove), the one function that applies a state transition, exit
// detection, timeouts, and the load-time sync that makes every record true
// again after the engine was away.
package supervisor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/notify"
	"shepherd/backend/procid"
	"shepherd/backend/store"
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
	// LogPoll is how often the log of a running claude-stream-json agent is
	// read for its session id and result line. 0: 500 ms.
	LogPoll time.Duration
}

// Engine supervises the agents of every loaded project.
type Engine struct {
	cfg    Config
	st     *store.Store
	clock  clockwork.Clock
	log    zerolog.Logger
	bootID string

	ctx    context.Context // cancelled by Close: stops watching, never agents
	cancel context.CancelFunc

	mu       sync.Mutex
	projects map[string]*project
	selected string

	watchers sync.WaitGroup // exit watchers, waited for by Close

	// groupAlive tells whether a process group still has a member: with
	// exact, a live one (zombies aside); else any, in one system call.
	// Tests replace it to stand for a group that survives SIGKILL, which
	// no real process here can be made to do.
	groupAlive func(pgid int, exact bool) bool
}

type project struct {
	info store.Project

	mu       sync.Mutex
	loaded   bool
	agents   map[string]*agent
	corrupt  []CorruptRecord
	settings Settings
	monitor  *monitor // the watchdog and stale tickers while selected
	// unreported holds what loads found that no select has reported yet.
	unreported map[string]AgentOutcome
}

type agent struct {
	mu  sync.Mutex // held by every operation on this agent
	rec *store.Record
	run *run // the live run this engine watches, nil if none

	recovering   bool            // one recovery at a time
	restartTimer clockwork.Timer // a pending keep-alive restart
}

// run is one live process of an agent.
type run struct {
	pid       int
	startTime int64
	shimPID   int
	exited    chan struct{} // closed once the exit was seen and handled
	exit      *store.ExitStatus
	timer     clockwork.Timer
	stopDone  chan struct{} // non-nil while a stop is under way; closed at its end
	stopErr   error

	// The shim's status pipe, for runs this engine started; nil for a
	// re-attached run, which is watched through its pid instead.
	status     *bufio.Reader
	statusFile *os.File

	// forced, when set, is how the run's end is recorded instead of by its
	// exit code (the engine ended it: result line, stale recovery).
	forced *outcome

	// Live log reading of claude-stream-json runs (activity.go).
	scanMu      sync.Mutex
	scanner     *loganalysis.Scanner
	logOff      int64
	result      *loganalysis.Claude
	resultTimer clockwork.Timer
	stable      clockwork.Timer // resets the keep-alive backoff after a stable run
}

// outcome is a final status the engine decided for a run.
type outcome struct {
	status lifecycle.Status
	reason lifecycle.ExitReason
	msg    string
}

// New opens the data folder and returns an engine. Projects are loaded (and
// their agents synced) on first use.
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
	if cfg.ShimPath == "" {
		return nil, errors.New("no shim executable configured")
	}
	boot, err := procid.BootID()
	if err != nil {
		return nil, fmt.Errorf("read boot identity: %w", err)
	}
	e := &Engine{cfg: cfg, st: st, clock: cfg.Clock, log: cfg.Logger, bootID: boot,
		projects: map[string]*project{}, groupAlive: groupAlive}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	ps, err := st.LoadProjects()
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		e.projects[p.ID] = &project{info: p, agents: map[string]*agent{}}
	}
	return e, nil
}

// Close stops watching and stops the timers, and returns once no watcher
// will write again. Agents keep running: they are durable, and the next
// engine re-attaches them.
func (e *Engine) Close() {
	e.cancel()
	defer e.watchers.Wait()
	e.mu.Lock()
	ps := make([]*project, 0, len(e.projects))
	for _, p := range e.projects {
		ps = append(ps, p)
	}
	e.mu.Unlock()
	for _, p := range ps {
		e.stopMonitor(p)
		for _, a := range p.list() {
			a.mu.Lock()
			if a.run != nil {
				stopTimers(a.run)
			}
			if a.restartTimer != nil {
				a.restartTimer.Stop()
			}
			a.mu.Unlock()
		}
	}
}

func stopTimers(rn *run) {
	for _, t := range []clockwork.Timer{rn.timer, rn.resultTimer, rn.stable} {
		if t != nil {
			t.Stop()
		}
	}
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
	e.log.Info().Str("project", n.ProjectID).Str("agent", n.AgentID).Str("kind", n.Kind).Str("level", n.Level).
		Msg(n.Message)
	e.emit(EventNotify, n)
	if e.cfg.Notifier != nil {
		// A native notifier may block on the desktop's bus: never while an
		// agent's lock is held.
		go e.cfg.Notifier.Notify(n)
	}
}

// list returns the project's agents in the order of their ids.
func (p *project) list() []*agent {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := make([]string, 0, len(p.agents))
	for id := range p.agents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]*agent, len(ids))
	for i, id := range ids {
		out[i] = p.agents[id]
	}
	return out
}

// snapshot is the record as callers see it: a copy, with lastActivityAt
// taken from the log's last growth.
func (e *Engine) snapshot(a *agent) *store.Record {
	r := a.rec.Clone()
	if fi, err := os.Stat(r.LogPath); err == nil {
		mt := fi.ModTime().UTC()
		if r.LastActivityAt == nil || mt.After(*r.LastActivityAt) {
			r.LastActivityAt = &mt
		}
	}
	return r
}

// step is one transition: the status to move to, why, and the fields
// that change with it.
type step struct {
	to     lifecycle.Status
	reason string
	mut    func(r *store.Record)
}

// apply is the one function that changes an agent's status: it checks the
// transition table, writes the record, appends the event, logs and emits.
// a.mu must be held. A refused transition changes nothing.
func (e *Engine) apply(a *agent, to lifecycle.Status, reason string, mut func(r *store.Record)) error {
	return e.applySteps(a, step{to, reason, mut})
}

// applySteps applies transitions that happened together (SIGKILL, then the
// group gone a moment later) with one write of the final record: every step
// is checked against the table first, and each is appended, logged and
// emitted after the write, so nothing is ever reported before it is on disk.
func (e *Engine) applySteps(a *agent, steps ...step) error {
	recs := make([]*store.Record, len(steps))
	cur := a.rec
	for i, st := range steps {
		if err := lifecycle.Check(cur.Status, st.to); err != nil {
			e.log.Warn().Str("project", cur.ProjectID).Str("agent", cur.ID).
				Str("from", string(cur.Status)).Str("to", string(st.to)).Str("reason", st.reason).Msg("transition refused")
			return newErr(ErrTransition, "Process '%s': %v", cur.ID, err)
		}
		next := cur.Clone()
		next.Status = st.to
		if st.mut != nil {
			st.mut(next)
		}
		recs[i], cur = next, next
	}
	if err := e.st.SaveRecord(cur); err != nil {
		e.log.Error().Err(err).Str("agent", cur.ID).Msg("cannot write record")
		return fmt.Errorf("write record of '%s': %w", cur.ID, err)
	}
	from := a.rec.Status
	for i, next := range recs {
		a.rec = next
		to, reason := steps[i].to, steps[i].reason
		ev := store.Event{Time: e.clock.Now().UTC(), Event: "transition", AgentID: next.ID,
			From: string(from), To: string(to), Reason: reason}
		if next.ExitReason != "" && to.Terminal() {
			ev.Data = map[string]any{"exitReason": next.ExitReason}
			if next.ExitCode != nil {
				ev.Data["exitCode"] = *next.ExitCode
			}
			if next.Signal != "" {
				ev.Data["signal"] = next.Signal
			}
		}
		e.appendEvent(next.ProjectID, ev)
		e.log.Info().Str("project", next.ProjectID).Str("agent", next.ID).
			Str("from", string(from)).Str("to", string(to)).Str("reason", reason).Int("pid", next.PID).Msg("transition")
		e.emit(EventAgentState, e.snapshot(a))
		from = to
	}
	return nil
}

// update writes a change of fields that is not a change of status.
func (e *Engine) update(a *agent, mut func(r *store.Record)) error {
	next := a.rec.Clone()
	mut(next)
	if err := e.st.SaveRecord(next); err != nil {
		return fmt.Errorf("write record of '%s': %w", next.ID, err)
	}
	a.rec = next
	e.emit(EventAgentState, e.snapshot(a))
	return nil
}

func (e *Engine) appendEvent(projectID string, ev store.Event) {
	if err := e.st.AppendEvent(projectID, ev); err != nil {
		e.log.Error().Err(err).Str("project", projectID).Str("event", ev.Event).Msg("cannot append event")
	}
}

// Projects lists the known projects.
func (e *Engine) Projects() []store.Project {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]store.Project, 0, len(e.projects))
	for _, p := range e.projects {
		out = append(out, p.info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

// AddProject registers a folder. The id is stable for the path; adding the
// same path again returns the existing project and created=false.
func (e *Engine) AddProject(path, name string) (store.Project, bool, error) {
	if path == "" {
		return store.Project{}, false, newErr(ErrValidation, "project path is empty")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return store.Project{}, false, newErr(ErrValidation, "project path %q: %v", path, err)
	}
	if err := checkDir(abs); err != nil {
		return store.Project{}, false, newErr(ErrValidation, "project folder %s", err)
	}
	id := store.ProjectID(abs)
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.projects[id]; ok {
		return p.info, false, nil
	}
	if name == "" {
		name = filepath.Base(abs)
	}
	info := store.Project{ID: id, Name: name, Path: abs, CreatedAt: e.clock.Now().UTC()}
	all := []store.Project{info}
	for _, p := range e.projects {
		all = append(all, p.info)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].CreatedAt.Before(all[j].CreatedAt) })
	if err := os.MkdirAll(e.st.ProjectDir(id), 0o700); err != nil {
		return store.Project{}, false, err
	}
	if err := e.st.SaveProjects(all); err != nil {
		return store.Project{}, false, err
	}
	e.projects[id] = &project{info: info, agents: map[string]*agent{}}
	e.log.Info().Str("project", id).Str("path", abs).Msg("project added")
	return info, true, nil
}

// checkDir explains why path is not a usable folder, or returns nil.
func checkDir(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s does not exist", path)
		}
		return fmt.Errorf("%s cannot be read: %v", path, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s cannot be read: %v", path, err)
	}
	f.Close()
	return nil
}

// project returns a known project, loading (and syncing) it on first use.
func (e *Engine) project(id string) (*project, error) {
	e.mu.Lock()
	p, ok := e.projects[id]
	e.mu.Unlock()
	if !ok {
		return nil, newErr(ErrProjectNotFound, "Project '%s' not found", id)
	}
	p.mu.Lock()
	loaded := p.loaded
	p.mu.Unlock()
	if !loaded {
		if _, err := e.load(p, false); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (e *Engine) agent(projectID, agentID string) (*project, *agent, error) {
	p, err := e.project(projectID)
	if err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	a, ok := p.agents[agentID]
	p.mu.Unlock()
	if !ok {
		return nil, nil, errNotFound(agentID)
	}
	return p, a, nil
}

// ListAgents returns the records of a project, oldest first.
func (e *Engine) ListAgents(projectID string) ([]*store.Record, error) {
	p, err := e.project(projectID)
	if err != nil {
		return nil, err
	}
	return e.records(p), nil
}

func (e *Engine) records(p *project) []*store.Record {
	as := p.list()
	out := make([]*store.Record, 0, len(as))
	for _, a := range as {
		a.mu.Lock()
		out = append(out, e.snapshot(a))
		a.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// GetAgent returns one record.
func (e *Engine) GetAgent(projectID, agentID string) (*store.Record, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return e.snapshot(a), nil
}

// AllAgents returns the records of every loaded project (the dashboard).
func (e *Engine) AllAgents() []*store.Record {
	e.mu.Lock()
	ps := make([]*project, 0, len(e.projects))
	for _, p := range e.projects {
		ps = append(ps, p)
	}
	e.mu.Unlock()
	sort.Slice(ps, func(i, j int) bool { return ps[i].info.CreatedAt.Before(ps[j].info.CreatedAt) })
	var out []*store.Record
	for _, p := range ps {
		p.mu.Lock()
		loaded := p.loaded
		p.mu.Unlock()
		if loaded {
			out = append(out, e.records(p)...)
		}
	}
	return out
}

// EventsPath is the project's events.jsonl.
func (e *Engine) EventsPath(projectID string) (string, error) {
	if _, err := e.project(projectID); err != nil {
		return "", err
	}
	return e.st.EventsPath(projectID), nil
}

// Selected is the id of the selected project ("" if none).
func (e *Engine) Selected() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.selected
}

func groupAlive(pgid int, exact bool) bool {
	if exact {
		return procid.GroupAlive(pgid)
	}
	return procid.GroupExists(pgid)
}
