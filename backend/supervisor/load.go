package supervisor

import (
	"context"
	"sort"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/hook"
)

// A project is loaded once (ensureLoaded): its records read and every agent
// synced with reality (sync.go), and what the load found kept for the
// window.

// SelectProject makes a project the one the window shows. It loads the
// project if that was not done yet, checks its live agents against reality
// again, and reports what the load and the check found that no select has
// reported yet (project:synced). Every loaded project is watched whether or
// not it is selected.
func (e *Engine) SelectProject(ctx context.Context, id string) (*SyncSummary, error) {
	e.mu.Lock()
	p, ok := e.projects[id]
	e.mu.Unlock()
	if !ok {
		return nil, errProjectNotFound(id)
	}
	if _, err := e.ensureLoaded(p); err != nil {
		return nil, err
	}
	sum := e.check(p, true)
	e.mu.Lock()
	e.selected = id
	e.mu.Unlock()
	e.emit(EventProjectSynced, sum)
	return sum, nil
}

// LoadAll loads every known project: its records are checked against
// reality and its agents watched. The app and `serve` call it at start so
// that no project's agents go unwatched until the user opens it.
//
// What the loads found — agents that ended while no engine watched them,
// re-attached, recovered, started — is kept as one summary for every
// project (WhileClosed), which a window shows on its first screen.
//
// It runs as one of the engine's tasks: Close waits for it (it stops
// between two projects, and a load under way ends soon when its waits for
// shims are cancelled), so nothing of a load happens after Close.
func (e *Engine) LoadAll() {
	if !e.tasks.enter() {
		return
	}
	defer e.tasks.leave()
	var sums []SyncSummary
	for _, info := range e.Projects() {
		if e.ctx.Err() != nil {
			return
		}
		p, err := e.project(info.ID)
		if err != nil {
			e.log.Error().Err(err).Str("project", info.ID).Msg("cannot load project")
			continue
		}
		if sum := p.whileClosed(); sum != nil {
			sums = append(sums, *sum)
		}
	}
	if e.ctx.Err() != nil {
		return
	}
	w := &WhileClosed{At: e.clock.Now().UTC(), Projects: sums}
	if w.Projects == nil {
		w.Projects = []SyncSummary{}
	}
	e.mu.Lock()
	e.closedSum = w
	e.mu.Unlock()
	e.emit(EventWhileClosed, w)
	e.checkDisk()
}

// WhileClosed is what the engine found at its start, for every project (nil
// until LoadAll has run).
func (e *Engine) WhileClosed() *WhileClosed {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closedSum
}

// whileClosed is what the project's load found that is worth saying (not
// the agents that simply were not running), nil if nothing.
func (p *project) whileClosed() *SyncSummary {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.unreported) == 0 {
		return nil
	}
	sum := &SyncSummary{ProjectID: p.info.ID, Counts: map[string]int{}}
	for _, out := range p.unreported {
		sum.Agents = append(sum.Agents, out)
		sum.Counts[out.Outcome]++
	}
	sum.Total = len(sum.Agents)
	sort.Slice(sum.Agents, func(i, j int) bool { return sum.Agents[i].AgentID < sum.Agents[j].AgentID })
	return sum
}

// ensureLoaded loads a project once: its records are read, every agent is
// synced with reality, and its monitor starts. Concurrent callers share one
// load (single flight). It returns the load's summary to the caller that ran
// it, nil to the others.
func (e *Engine) ensureLoaded(p *project) (*SyncSummary, error) {
	p.mu.Lock()
	if p.loaded {
		p.mu.Unlock()
		return nil, nil
	}
	if ch := p.loading; ch != nil {
		p.mu.Unlock()
		<-ch
		p.mu.Lock()
		defer p.mu.Unlock()
		return nil, p.loadErr
	}
	ch := make(chan struct{})
	p.loading = ch
	p.mu.Unlock()

	sum, err := e.load(p)

	p.mu.Lock()
	p.loading, p.loadErr = nil, err
	p.loaded = err == nil
	p.mu.Unlock()
	close(ch)
	if err == nil {
		e.startMonitor(p)
		e.rewaitUsage(p)
		e.kickQueue(p)
	}
	return sum, err
}

// load reads a project's records and syncs every agent with reality. What
// it finds is kept for the next select to report: the user opening a project
// learns that two agents exited while the app was closed even though the
// engine noticed it earlier.
func (e *Engine) load(p *project) (*SyncSummary, error) {
	if h := e.testHooks.loading; h != nil {
		h(p.info.ID)
	}
	recs, bad, err := e.st.LoadRecords(p.info.ID, e.clock.Now())
	if err != nil {
		return nil, err
	}
	settings := e.loadSettings(p.info.ID)
	p.mu.Lock()
	var queued []*agent
	live, lastSeq := 0, int64(0)
	for _, r := range recs {
		a := e.newAgent(p, r)
		p.agents[r.ID] = a
		if r.Status.Live() {
			live++
		}
		if r.Status == lifecycle.Queued {
			queued = append(queued, a)
			lastSeq = max(lastSeq, r.QueueSeq)
		}
	}
	sort.Slice(queued, func(i, j int) bool { return queued[i].rec.QueueSeq < queued[j].rec.QueueSeq })
	order := make([]hook.Agent, len(queued))
	for i, a := range queued {
		order[i] = a
	}
	p.q.Init(settings.MaxRunning, &p.daily, live, order, lastSeq)
	paused := p.q.LoadPause(e.pauseSignalPath(p.info.ID))
	p.settings = settings
	for _, c := range bad {
		cr := CorruptRecord{AgentID: c.AgentID, MovedTo: c.MovedTo, Problem: c.Err.Error()}
		p.corrupt = append(p.corrupt, cr)
		e.log.Error().Str("project", p.info.ID).Str("agent", c.AgentID).Str("movedTo", c.MovedTo).
			Err(c.Err).Msg("corrupt record moved aside")
		e.appendEvent(p.info.ID, store.Event{Time: e.clock.Now().UTC(), Event: "record:corrupt", AgentID: c.AgentID,
			Reason: c.Err.Error(), Data: map[string]any{"movedTo": c.MovedTo}})
	}
	p.mu.Unlock()

	e.loadHooks(p)
	e.loadCostToday(p)
	sum := e.check(p, false)
	if paused {
		// Paused while the engine was away: what still runs is paused now.
		e.goTask(func() { e.queues.PauseRunning(e.ctx, p.info.ID, false) })
	}
	// The daily budget as it stands now: reached while the engine was away,
	// what runs is paused; a new day since, what it paused resumes.
	e.checkDaily(p, true)
	for _, a := range p.list() {
		if out, ok := e.autoStart(a); ok {
			sum.Agents = append(sum.Agents, out)
			sum.Counts[out.Outcome]++
			p.mu.Lock()
			if p.unreported == nil {
				p.unreported = map[string]AgentOutcome{}
			}
			p.unreported[out.AgentID] = out
			p.mu.Unlock()
		}
	}
	e.appendEvent(p.info.ID, store.Event{Time: e.clock.Now().UTC(), Event: "project:synced",
		Data: map[string]any{"counts": sum.Counts, "total": sum.Total}})
	e.log.Info().Str("project", p.info.ID).Int("agents", sum.Total).Interface("counts", sum.Counts).Msg("project synced")
	return sum, nil
}
