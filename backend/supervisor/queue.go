package supervisor

import (
	"fmt"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/backend/store"
)

// The run queue (SPEC "Pause and resume"). maxRunning caps how many agents
// of a project are live at once. Every way an agent is started — start,
// resume, auto-resume, keep-alive restart, auto start, unpause — goes
// through launch, which starts it at once or queues it; a slot that frees
// up goes to the first in the queue. A paused project starts nothing: its
// starts wait in the queue. The queue is in the records (status queued, its
// place and what to run), so it survives an engine restart in order.

// What a start runs, and how it counts.
const (
	actStart      = "start"                 // its args; auto-resume count back to 0
	actResume     = "resume"                // its resume args; a manual resume resets the auto-resume count
	actAutoResume = "auto-resume"           // its resume args; auto-resume count + 1
	actKeepAlive  = "keep-alive restart"    // its args; restart count + 1
	actAutoStart  = "auto start on restore" // its args
	actUnpause    = "unpause"               // its resume args when resumable, else its args; resume count + 1
)

// countLive keeps p.live true to the statuses: apply calls it for every
// change of status. A slot that frees up goes to the queue. a.mu is held.
func (e *Engine) countLive(a *agent, from, to lifecycle.Status) {
	if from.Live() == to.Live() {
		return
	}
	p := a.p
	p.mu.Lock()
	if to.Live() {
		p.live++
	} else {
		p.live--
	}
	p.mu.Unlock()
	if !to.Live() {
		e.kickQueue(p)
	}
}

// position is a queued agent's place in its project's queue (from 1).
func (p *project) position(a *agent) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, q := range p.queue {
		if q == a {
			return i + 1
		}
	}
	return 0
}

// hasRoom reports whether p may start one more agent now. p.mu is held.
func (p *project) hasRoom() bool {
	return !p.daily.held && p.roomPastBudget()
}

// roomPastBudget is hasRoom for a run the user let go past the daily budget
// once. p.mu is held.
func (p *project) roomPastBudget() bool {
	return !p.pause.paused && (p.settings.MaxRunning == 0 || p.live+p.reserved+p.draining < p.settings.MaxRunning)
}

// launch starts a (act says how) or, when its project is paused or at
// maxRunning, queues it. a.mu is held.
func (e *Engine) launch(a *agent, act string) error {
	id := a.rec.ID
	switch {
	case a.gone():
		return errGone(id)
	case a.rec.Status.Live():
		return errAlreadyRunning(id)
	case a.rec.Status == lifecycle.Queued:
		return newErr(ErrAlreadyRunning, "Process '%s' is already queued (position %d)", id, a.p.position(a))
	}
	p := a.p
	p.mu.Lock()
	room := p.hasRoom() && len(p.queue) == 0 // first in, first out: no one jumps the queue
	if a.rec.BudgetOnce && p.daily.held && p.roomPastBudget() {
		room = true // the one run the user let past the daily budget: the held queue is not its
	}
	if room {
		p.reserved++
	}
	p.mu.Unlock()
	if !room {
		return e.enqueue(a, act)
	}
	defer func() {
		p.mu.Lock()
		p.reserved--
		p.mu.Unlock()
		e.kickQueue(p) // a failed start leaves its slot free
	}()
	args, mut := actionArgs(a.rec, act)
	return e.startLocked(a, args, act, mut)
}

// actionArgs is what act runs and what it changes in the record.
func actionArgs(r *store.Record, act string) ([]string, func(*store.Record)) {
	switch act {
	case actResume:
		return resumeArgs(r), func(n *store.Record) {
			n.ResumeCount++
			n.AutoResumeCount = 0
			n.ResumePrompt = ""
			n.UsageLimitUntil = nil
		}
	case actAutoResume:
		return resumeArgs(r), func(n *store.Record) { n.ResumeCount++; n.AutoResumeCount++; n.ResumePrompt = "" }
	case actKeepAlive:
		return r.Args, func(n *store.Record) { n.RestartCount++; n.NextRestartAt = nil }
	case actUnpause:
		clear := func(n *store.Record) {
			n.ResumeCount++
			n.PausedAt, n.PauseNote, n.PausedWithProject = nil, "", false
			n.BudgetPause = ""
			n.ResumePrompt = ""
			n.UsageLimitUntil = nil
		}
		if resumable(r) {
			return resumeArgs(r), clear
		}
		return r.Args, clear
	case actAutoStart:
		return r.Args, nil
	}
	return r.Args, func(n *store.Record) { n.AutoResumeCount = 0; n.BudgetOnce = false; n.UsageLimitUntil = nil }
}

// enqueue puts a at the end of its project's queue. a.mu is held.
func (e *Engine) enqueue(a *agent, act string) error {
	p := a.p
	from := a.rec.Status
	p.mu.Lock()
	p.nextSeq++
	seq := p.nextSeq
	p.mu.Unlock()
	err := e.applySteps(a, step{to: lifecycle.Queued, reason: "queued: " + act, mut: func(r *store.Record) {
		r.QueueSeq, r.QueuedAction, r.QueuedFrom = seq, act, from
		r.Desired = lifecycle.DesiredRunning
		r.Error = ""
	}})
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.queue = append(p.queue, a)
	pos := len(p.queue)
	p.mu.Unlock()
	e.log.Info().Str("project", p.info.ID).Str("agent", a.rec.ID).Int("position", pos).Str("action", act).Msg("queued")
	e.emit(EventAgentState, e.snapshot(a)) // with its position
	e.kickQueue(p)                         // a slot may have freed meanwhile
	return nil
}

// dequeue takes a out of its project's queue (a stop, a pause, a remove).
func (p *project) dequeue(a *agent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, q := range p.queue {
		if q == a {
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
			return
		}
	}
}

// cancelQueued takes a queued agent back to the status it came from. a.mu
// is held.
func (e *Engine) cancelQueued(a *agent, reason string) error {
	back := a.rec.QueuedFrom
	if back == "" {
		back = lifecycle.NotStarted
	}
	err := e.applyNow(a, step{to: back, reason: reason, revert: true, mut: func(r *store.Record) {
		r.QueueSeq, r.QueuedAction, r.QueuedFrom = 0, "", ""
		r.Desired = lifecycle.DesiredStopped
		r.ResumePrompt = "" // an instruction not given is not kept for a later resume
	}})
	if err == nil {
		a.p.dequeue(a)
		p := a.p
		e.goTask(func() { e.emitQueue(p) }) // other agents' locks: not under this one's
	}
	return err
}

// kickQueue gives free slots to the queue, off the caller's locks.
func (e *Engine) kickQueue(p *project) {
	p.mu.Lock()
	want := len(p.queue) > 0 && p.hasRoom()
	p.mu.Unlock()
	if want {
		e.goTask(func() { e.releaseQueue(p) })
	}
}

// releaseQueue starts queued agents, first in first out, while the project
// has room. The slot is reserved before the agent is started, so two
// releases at once never exceed maxRunning.
func (e *Engine) releaseQueue(p *project) {
	for {
		p.mu.Lock()
		if len(p.queue) == 0 || !p.hasRoom() {
			p.mu.Unlock()
			return
		}
		a := p.queue[0]
		p.queue = p.queue[1:]
		p.reserved++
		p.mu.Unlock()
		e.startQueued(a)
		p.mu.Lock()
		p.reserved--
		p.mu.Unlock()
		e.emitQueue(p)
	}
}

// startQueued starts a queued agent whose turn has come. One that cannot be
// started goes back to the status it came from, with the reason (an unpause
// that fails stays paused, and says so).
func (e *Engine) startQueued(a *agent) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gone() || a.rec.Status != lifecycle.Queued {
		return
	}
	act := a.rec.QueuedAction
	args, mut := actionArgs(a.rec, act)
	err := e.startLocked(a, args, act, mut)
	if err == nil {
		return
	}
	if a.rec.Status == lifecycle.Queued {
		msg := err.Error()
		_ = e.cancelQueued(a, "start failed")
		_ = e.update(a, func(r *store.Record) { r.Error = msg })
	}
	if act == actUnpause || act == actAutoResume {
		e.notify(notify.Notification{Level: notify.Error, Kind: notify.KindFailed, Title: "Resume failed",
			ProjectID: a.rec.ProjectID, AgentID: a.rec.ID, Native: e.settingsOf(a.rec.ProjectID).NotifyNative,
			Message: fmt.Sprintf("Agent %s could not be resumed: %v", a.rec.ID, err)})
	}
}

// emitQueue pushes the new positions of the queued agents of p.
func (e *Engine) emitQueue(p *project) {
	p.mu.Lock()
	q := append([]*agent(nil), p.queue...)
	p.mu.Unlock()
	for _, a := range q {
		a.mu.Lock()
		if a.rec.Status == lifecycle.Queued {
			e.emit(EventAgentState, e.snapshot(a))
		}
		a.mu.Unlock()
	}
}
