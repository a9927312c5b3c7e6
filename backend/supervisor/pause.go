package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/backend/proc"
	"shepherd/backend/store"
)

// Pause and resume (SPEC "Pause and resume", seed 002): "not now" without
// losing work. A project is paused while the file pause_signal exists in its
// data folder — the seed's signal file, which a script may create or
// remove, and which the window, the CLI and the API create and remove too —
// so the pause survives an engine restart. Its text is the pause note. The
// engine looks for it every second.

// pauseSignalFile is the seed's signal file, in the project's data folder.
const pauseSignalFile = "pause_signal"

// maxNote bounds the pause note read from the file.
const maxNote = 1 << 10

// pauseState is a project's pause, under p.mu.
type pauseState struct {
	paused  bool
	at      time.Time
	note    string
	problem string  // the file could not be read (a folder, no permission): paused all the same
	seen    fileSig // what the watcher saw last
}

type fileSig struct {
	exists bool
	mod    time.Time
	size   int64
	mode   fs.FileMode
}

func (e *Engine) pauseSignalPath(projectID string) string {
	return filepath.Join(e.st.ProjectDir(projectID), pauseSignalFile)
}

// readPauseSignal looks at the signal file: whether it is there, its note,
// and what is wrong with it if it cannot be read.
func readPauseSignal(path string) (sig fileSig, note, problem string) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fileSig{}, "", ""
	}
	if err != nil {
		return fileSig{exists: true}, "", fmt.Sprintf("%s cannot be read (%v); the project is paused until it is removed", path, err)
	}
	sig = fileSig{exists: true, mod: fi.ModTime(), size: fi.Size(), mode: fi.Mode()}
	if !fi.Mode().IsRegular() {
		return sig, "", fmt.Sprintf("%s is not a regular file (%s); the project is paused until it is removed", path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return sig, "", fmt.Sprintf("%s cannot be read (%v); the project is paused until it is removed", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxNote))
	if err != nil {
		return sig, "", fmt.Sprintf("%s cannot be read (%v); the project is paused until it is removed", path, err)
	}
	return sig, strings.TrimSpace(strings.ToValidUTF8(string(b), "")), ""
}

// startPauseWatcher looks at every loaded project's signal file once a
// second (engine clock), for as long as the engine runs.
func (e *Engine) startPauseWatcher() {
	e.mu.Lock()
	if e.pausing {
		e.mu.Unlock()
		return
	}
	e.pausing = true
	e.mu.Unlock()
	e.armPauseWatcher()
}

func (e *Engine) armPauseWatcher() {
	e.after(e.ctx, time.Second, func() {
		e.mu.Lock()
		ps := make([]*project, 0, len(e.projects))
		for _, p := range e.projects {
			ps = append(ps, p)
		}
		e.mu.Unlock()
		for _, p := range ps {
			p.mu.Lock()
			loaded := p.loaded
			p.mu.Unlock()
			if loaded {
				e.checkPauseSignal(p)
				e.checkDaily(p, false) // a new day lifts a daily budget's hold
			}
		}
		e.armPauseWatcher()
	})
}

// ownPauseWrite counts the engine's own write of p's signal file as under
// way (+1) or over (-1).
func (p *project) ownPauseWrite(d int) {
	p.mu.Lock()
	p.pauseWrites += d
	p.mu.Unlock()
}

// checkPauseSignal acts on a change of the project's signal file: created,
// the project pauses (its running agents are paused in the background);
// removed, it resumes.
func (e *Engine) checkPauseSignal(p *project) {
	sig, note, problem := readPauseSignal(e.pauseSignalPath(p.info.ID))
	p.mu.Lock()
	if sig == p.pause.seen || p.pauseWrites > 0 {
		p.mu.Unlock()
		return
	}
	p.pause.seen = sig
	was := p.pause.paused
	newProblem := problem != "" && problem != p.pause.problem
	if sig.exists {
		p.pause.paused, p.pause.note, p.pause.problem = true, note, problem
		if !was {
			p.pause.at = e.clock.Now().UTC()
		}
	}
	p.mu.Unlock()
	if newProblem {
		e.log.Warn().Str("project", p.info.ID).Msg(problem)
		e.notify(notify.Notification{Level: notify.Warning, Kind: notify.KindPaused, Title: "Project paused",
			ProjectID: p.info.ID, Native: e.settingsOf(p.info.ID).NotifyNative, Message: problem})
	}
	switch {
	case sig.exists && !was:
		e.projectPaused(p, "pause_signal created")
		e.goTask(func() { e.pauseRunning(e.ctx, p, false) })
	case !sig.exists && was:
		e.unpauseProject(p, "pause_signal removed")
	}
}

// projectPaused records the project's pause in its events and pushes it.
func (e *Engine) projectPaused(p *project, why string) {
	v := e.view(p)
	e.appendEvent(p.info.ID, store.Event{Time: e.clock.Now().UTC(), Event: "project:paused", Reason: why,
		Data: map[string]any{"note": v.PauseNote}})
	e.log.Info().Str("project", p.info.ID).Str("why", why).Str("note", v.PauseNote).Msg("project paused")
	e.emit(EventProjectState, v)
}

// PauseProject pauses a project: nothing of it starts (starts and resumes
// wait in its queue), and its running agents are paused — each at a safe
// point unless now. It creates the signal file with the note, so the pause
// survives a restart, and returns once every agent is paused.
func (e *Engine) PauseProject(ctx context.Context, projectID, note string, now bool) ([]StopResult, error) {
	p, err := e.project(projectID)
	if err != nil {
		return nil, err
	}
	note = strings.TrimSpace(note)
	if len(note) > maxNote {
		return nil, newErr(ErrValidation, "the pause note is %d bytes long; at most %d", len(note), maxNote)
	}
	// The pause holds in memory at once; its signal file (what makes it
	// survive a restart) is written now, or on the disk's retry when the
	// disk is full (a pause must work then too).
	p.mu.Lock()
	was := p.pause.paused
	p.pause.paused, p.pause.note, p.pause.problem = true, note, ""
	if !was {
		p.pause.at = e.clock.Now().UTC()
	}
	p.mu.Unlock()
	if err := e.writePauseSignal(p, note); err != nil {
		e.log.Error().Err(err).Str("project", projectID).Msg("cannot write the pause signal file; the project is paused, and the file is written when it can be")
		e.pauseUnwritten(p, note, err)
	} else {
		e.pauseWritten(p)
	}
	e.projectPaused(p, "pause")
	return e.pauseRunning(ctx, p, now), nil
}

// pauseRunning pauses every running agent of p at once.
func (e *Engine) pauseRunning(ctx context.Context, p *project, now bool) []StopResult {
	var todo []*agent
	for _, a := range p.list() {
		a.mu.Lock()
		if a.rec.Status == lifecycle.Running && a.run != nil {
			todo = append(todo, a)
		}
		a.mu.Unlock()
	}
	res := make([]StopResult, len(todo))
	var wg sync.WaitGroup
	for i, a := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := e.pauseAgent(ctx, a, now, "", true)
			res[i] = StopResult{AgentID: a.id(), Record: r}
			if err != nil {
				res[i].Error = err.Error()
			}
		}()
	}
	wg.Wait()
	return res
}

func (a *agent) id() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rec.ID
}

// UnpauseProject resumes a project: its agents paused with it go through
// the queue in the order they were paused, and its queue is released. It
// removes the signal file.
func (e *Engine) UnpauseProject(ctx context.Context, projectID string) error {
	p, err := e.project(projectID)
	if err != nil {
		return err
	}
	path := e.pauseSignalPath(projectID)
	p.ownPauseWrite(+1)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		p.ownPauseWrite(-1)
		// A folder, or no permission: the file is the truth, so say so.
		return newErr(ErrValidation, "cannot remove %s: %v (remove it by hand to resume the project)", path, err)
	}
	p.mu.Lock()
	p.pauseWrites--
	p.pause.seen = fileSig{}
	p.mu.Unlock()
	e.pauseWritten(p) // a file still to write is not wanted any more
	e.unpauseProject(p, "unpause")
	return nil
}

func (e *Engine) unpauseProject(p *project, why string) {
	p.mu.Lock()
	was := p.pause.paused
	p.pause.paused, p.pause.note, p.pause.problem = false, "", ""
	p.mu.Unlock()
	if !was {
		return
	}
	e.appendEvent(p.info.ID, store.Event{Time: e.clock.Now().UTC(), Event: "project:unpaused", Reason: why})
	e.log.Info().Str("project", p.info.ID).Str("why", why).Msg("project unpaused")
	e.emit(EventProjectState, e.view(p))
	e.unpauseWhere(p, func(r *store.Record) bool { return r.PausedWithProject })
}

// unpauseWhere resumes the paused agents of p that match, in the order they
// were paused (each checked again under its lock before it is resumed), and
// releases the queue.
func (e *Engine) unpauseWhere(p *project, match func(r *store.Record) bool) {
	type paused struct {
		a  *agent
		at time.Time
	}
	var todo []paused
	for _, a := range p.list() {
		a.mu.Lock()
		if a.rec.Status == lifecycle.Paused && a.rec.PausedAt != nil && match(a.rec) {
			todo = append(todo, paused{a, *a.rec.PausedAt})
		}
		a.mu.Unlock()
	}
	sort.SliceStable(todo, func(i, j int) bool { return todo[i].at.Before(todo[j].at) })
	for _, t := range todo {
		t.a.mu.Lock()
		if t.a.rec.Status == lifecycle.Paused && match(t.a.rec) {
			_ = e.unpauseLocked(t.a)
		}
		t.a.mu.Unlock()
	}
	e.kickQueue(p)
}

// PauseAgent pauses one agent: a running one at a safe point (unless now)
// and then stopped — SIGINT, SIGTERM, SIGKILL after its grace — with its
// session kept; a queued one leaves the queue. Either becomes paused.
func (e *Engine) PauseAgent(ctx context.Context, projectID, agentID string, now bool, note string) (*store.Record, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	if len(note) > maxNote {
		return nil, newErr(ErrValidation, "the pause note is %d bytes long; at most %d", len(note), maxNote)
	}
	return e.pauseAgent(ctx, a, now, strings.TrimSpace(note), false)
}

func (e *Engine) pauseAgent(ctx context.Context, a *agent, now bool, note string, withProject bool) (*store.Record, error) {
	return e.pauseAgentAs(ctx, a, now, note, withProject, "")
}

// pauseAgentAs pauses a, for a budget when budget names one (budget.go).
func (e *Engine) pauseAgentAs(ctx context.Context, a *agent, now bool, note string, withProject bool, budget string) (*store.Record, error) {
	a.mu.Lock()
	if withProject && note == "" {
		note = e.view(a.p).PauseNote
	}
	pausedMut := func(r *store.Record) {
		at := e.clock.Now().UTC()
		r.PausedAt, r.PauseNote, r.PausedWithProject = &at, note, withProject
		r.BudgetPause = budget
		if budget != "" {
			r.AcknowledgedAt = nil // a new question for the user
		}
		r.Desired = lifecycle.DesiredStopped
		r.QueueSeq, r.QueuedAction, r.QueuedFrom = 0, "", ""
		r.Error = ""
	}
	switch {
	case a.rec.Status == lifecycle.Queued:
		defer a.mu.Unlock()
		err := e.applyNow(a, step{to: lifecycle.Paused, reason: "pause", mut: func(r *store.Record) {
			r.ExitReason = lifecycle.ReasonPaused
			pausedMut(r)
		}})
		if err != nil {
			return nil, err
		}
		a.p.dequeue(a)
		p := a.p
		e.goTask(func() { e.emitQueue(p) })
		return e.snapshot(a), nil
	case a.rec.Status != lifecycle.Running || a.run == nil:
		st := a.rec.Status
		a.mu.Unlock()
		if st == lifecycle.Paused {
			return nil, newErr(ErrNotRunning, "Process '%s' is already paused", a.rec.ID)
		}
		return nil, errNotRunning(a.rec.ID)
	}
	rn := a.run
	if rn.stopDone != nil {
		done := rn.stopDone
		a.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		return e.snapshot(a), rn.stopErr
	}
	grace := secs(a.rec.GraceSec)
	safe := secs(e.settingsOf(a.rec.ProjectID).SafePointWaitSec)
	waitTool := !now && store.Structured(a.rec.Profile)
	a.mu.Unlock()
	if waitTool {
		e.waitSafePoint(ctx, a, rn, grace+safe)
	}
	a.mu.Lock()
	if a.run != rn || a.rec.Status != lifecycle.Running || a.gone() {
		// It ended meanwhile (its tool was its last step, say): nothing to pause.
		defer a.mu.Unlock()
		return e.snapshot(a), nil
	}
	done, err := e.beginStop(a, rn, "pause", syscall.SIGINT)
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	half := grace / 2
	e.finishPlan(a, rn, done, stopPlan{
		steps:  []proc.Step{{Signal: syscall.SIGINT, Wait: half}, {Signal: syscall.SIGTERM, Wait: grace - half}},
		to:     lifecycle.Paused,
		reason: lifecycle.ReasonPaused,
		mut:    pausedMut,
	})
	a.mu.Lock()
	defer a.mu.Unlock()
	if rn.stopErr == nil && e.ctx.Err() != nil && a.rec.Status.Live() {
		return e.snapshot(a), errClosing()
	}
	return e.snapshot(a), rn.stopErr
}

// waitSafePoint lets a tool call in flight finish before a pause, so the
// session keeps its result: until no tool is in flight, the run ends, or
// limit (engine clock) has passed. The log is looked at every 100 ms.
func (e *Engine) waitSafePoint(ctx context.Context, a *agent, rn *run, limit time.Duration) {
	deadline := e.clock.NewTimer(limit)
	defer deadline.Stop()
	logged := false
	for {
		e.pollRun(a, rn)
		tool, _, busy := rn.inFlight()
		if !busy {
			return
		}
		if !logged {
			logged = true
			a.mu.Lock()
			e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "pause:safe-point", AgentID: a.rec.ID,
				Reason: "waiting for the tool call in flight to finish", Data: map[string]any{"tool": tool, "limitSec": int(limit.Seconds())}})
			a.mu.Unlock()
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-deadline.Chan():
			t.Stop()
			return
		case <-rn.p.Done():
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		case <-e.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// UnpauseAgent resumes a paused agent: with its resume arguments and
// session id when it is resumable, else with its args (through the queue).
func (e *Engine) UnpauseAgent(ctx context.Context, projectID, agentID string) (*store.Record, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rec.Status != lifecycle.Paused {
		return nil, newErr(ErrNotPaused, "Process '%s' is not paused (it is %s)", agentID, a.rec.Status)
	}
	if err := budgetAnswer(ctx, a, "unpause"); err != nil {
		return nil, err
	}
	if err := e.unpauseLocked(a); err != nil {
		return e.snapshot(a), err
	}
	return e.snapshot(a), nil
}

// unpauseLocked starts (or queues) a paused agent again. One that fails to
// start stays paused, with the error and a notification; it is not retried
// by itself. a.mu is held.
func (e *Engine) unpauseLocked(a *agent) error {
	err := e.launch(a, actUnpause)
	if err != nil && a.rec.Status == lifecycle.Paused {
		e.notify(notify.Notification{Level: notify.Error, Kind: notify.KindFailed, Title: "Resume failed",
			ProjectID: a.rec.ProjectID, AgentID: a.rec.ID, Native: e.settingsOf(a.rec.ProjectID).NotifyNative,
			Message: fmt.Sprintf("Agent %s could not be resumed and stays paused: %v", a.rec.ID, err)})
	}
	return err
}

// expirePaused fails an agent paused for longer than pausedExpiryDays; its
// session id and log are kept. a.mu is held.
func (e *Engine) expirePaused(a *agent, s Settings) {
	r := a.rec
	if r.Status != lifecycle.Paused || r.PausedAt == nil || a.gone() {
		return
	}
	limit := time.Duration(s.PausedExpiryDays) * 24 * time.Hour
	if e.clock.Since(*r.PausedAt) < limit {
		return
	}
	_ = e.apply(a, lifecycle.Failed, "expired", func(n *store.Record) {
		n.ExitReason = lifecycle.ReasonExpired
		n.Error = fmt.Sprintf("Paused for more than %d days; no longer resumed with its project", s.PausedExpiryDays)
		n.PausedWithProject = false
	})
}

// ProjectView is a project with its state: the pause and the run queue.
type ProjectView struct {
	store.Project
	Paused       bool       `json:"paused"`
	PausedAt     *time.Time `json:"pausedAt,omitempty"`
	PauseNote    string     `json:"pauseNote,omitempty"`
	PauseProblem string     `json:"pauseProblem,omitempty"`
	Live         int        `json:"live"`
	Queued       int        `json:"queued"`
	MaxRunning   int        `json:"maxRunning"`
	Loaded       bool       `json:"loaded"`
	// FolderMissing: the project's folder is gone (moved, deleted, an
	// unmounted disk). Its agents are still supervised by their records; the
	// project is flagged, never dropped.
	FolderMissing string `json:"folderMissing,omitempty"`
	// What its agents' runs cost: the user's own agents' (all their runs,
	// and today's cost, which the daily budget counts), and what agents
	// created by agents reported (claims, counted against their creators'
	// trees only).
	Totals        *store.RunFigures `json:"totals,omitempty"`
	CostToday     float64           `json:"costToday"`
	ClaimedTotals *store.RunFigures `json:"claimedTotals,omitempty"`
	// The daily budget (0: none) and whether today's cost reached it: its
	// running agents were paused and its starts wait (budget.go).
	DailyBudgetUsd float64 `json:"dailyBudgetUsd,omitempty"`
	BudgetHeld     bool    `json:"budgetHeld,omitempty"`
	// Its agents, those running and those in Needs you (the engine's
	// reason on their records); in lists and answers, not in project:state.
	Agents    int `json:"agents,omitempty"`
	Running   int `json:"running,omitempty"`
	Attention int `json:"attention,omitempty"`
}

func (e *Engine) view(p *project) ProjectView {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := ProjectView{Project: p.info, Paused: p.pause.paused, PauseNote: p.pause.note, PauseProblem: p.pause.problem,
		Live: p.live, Queued: len(p.queue), MaxRunning: p.settings.MaxRunning, Loaded: p.loaded}
	if p.pause.paused {
		at := p.pause.at
		v.PausedAt = &at
	}
	if err := checkDir(p.info.Path); err != nil {
		v.FolderMissing = err.Error()
	}
	v.CostToday = p.costTodayLocked(e.clock.Now())
	v.DailyBudgetUsd, v.BudgetHeld = p.settings.DailyBudgetUsd, p.daily.held
	return v
}

func (p *project) costTodayLocked(now time.Time) float64 {
	if p.costDay != now.Local().Format("2006-01-02") {
		return 0
	}
	return p.costToday
}

// withTotals adds the sum of its agents' figures to a project's view: the
// user's own agents' in Totals, the claims of agents created by agents in
// ClaimedTotals; and their counts.
func (e *Engine) withTotals(p *project, v ProjectView) ProjectView {
	for _, r := range e.records(p) {
		v.Agents++
		if r.Status.Live() {
			v.Running++
		}
		if r.Attention != "" {
			v.Attention++
		}
		if t := r.Totals; t != nil {
			if r.Parent == "" {
				v.Totals = v.Totals.Add(*t)
			} else {
				v.ClaimedTotals = v.ClaimedTotals.Add(*t)
			}
		}
	}
	return v
}

// ProjectViews lists the known projects with their state, oldest first.
func (e *Engine) ProjectViews() []ProjectView {
	var out []ProjectView
	for _, info := range e.Projects() {
		e.mu.Lock()
		p := e.projects[info.ID]
		e.mu.Unlock()
		if p != nil {
			out = append(out, e.withTotals(p, e.view(p)))
		}
	}
	return out
}

// ProjectState is one project with its state.
func (e *Engine) ProjectState(projectID string) (ProjectView, error) {
	p, err := e.project(projectID)
	if err != nil {
		return ProjectView{}, err
	}
	return e.withTotals(p, e.view(p)), nil
}
