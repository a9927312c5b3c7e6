package supervisor

import (
	"fmt"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/needsyou"
)

// step is one transition: the status to move to, why, and the fields that
// change with it. A revert step goes back to the status the agent came from
// (a failed spawn), which the table allows only that way.
type step struct {
	to     lifecycle.Status
	reason string
	mut    func(r *store.Record)
	revert bool
	data   map[string]any // more for the event line
}

// apply is the one function that changes an agent's status: it checks the
// transition table, writes the record, appends the event, logs and emits.
// a.mu is held. A refused transition changes nothing; so does one asked of
// an agent that was removed.
func (e *Engine) apply(a *agent, to lifecycle.Status, reason string, mut func(r *store.Record)) error {
	return e.applySteps(a, step{to: to, reason: reason, mut: mut})
}

// applySteps applies transitions that happened together (SIGKILL, then the
// group gone a moment later) with one write of the final record: every step
// is checked against the table first, and each is appended, logged and
// emitted after the write, so nothing is ever reported before it is on disk.
func (e *Engine) applySteps(a *agent, steps ...step) error {
	return e.applyWith(a, false, steps...)
}

// applyNow applies transitions that record what has happened or is under
// way — an exit, a stop, a pause — which must move whether or not the disk
// takes the record now: a full disk must not keep a stop from stopping or
// leave a dead agent "running". When the record cannot be written, the
// agent's state moves all the same, the failure is logged, and the record
// is written again as soon as it can be (disk.go), never dropped. A
// transition the table refuses is refused as ever. a.mu is held.
func (e *Engine) applyNow(a *agent, steps ...step) error {
	return e.applyWith(a, true, steps...)
}

func (e *Engine) applyWith(a *agent, anyway bool, steps ...step) error {
	if a.gone() {
		return errGone(a.rec.ID)
	}
	recs := make([]*store.Record, len(steps))
	cur := a.rec
	for i, st := range steps {
		check := lifecycle.Check
		if st.revert {
			check = lifecycle.CheckRevert
		}
		if err := check(cur.Status, st.to); err != nil {
			e.log.Warn().Str("project", cur.ProjectID).Str("agent", cur.ID).
				Str("from", string(cur.Status)).Str("to", string(st.to)).Str("reason", st.reason).Msg("transition refused")
			return newErr(ErrTransition, "Process '%s': %v", cur.ID, err)
		}
		next := cur.Clone()
		next.Status = st.to
		if st.mut != nil {
			st.mut(next)
		}
		needsyou.Transition(next) // a new failure needs the user again
		recs[i], cur = next, next
	}
	if err := e.st.SaveRecord(cur); err != nil {
		e.log.Error().Err(err).Str("agent", cur.ID).Str("to", string(cur.Status)).Bool("keptInMemory", anyway).Msg("cannot write record")
		if !anyway {
			e.diskError(err)
			return fmt.Errorf("write record of '%s': %w", cur.ID, err)
		}
		e.unsaved(a, err)
	} else {
		e.saved(a)
	}
	from := a.rec.Status
	e.queues.Freed(&a.p.q, from, cur.Status) // a slot that frees up goes to the queue
	for i, next := range recs {
		a.rec = next
		to, reason := steps[i].to, steps[i].reason
		ev := store.Event{Time: e.clock.Now().UTC(), Event: "transition", AgentID: next.ID,
			From: string(from), To: string(to), Reason: reason}
		if next.ExitReason != "" && to.Terminal() {
			ev.Data = map[string]any{"exitReason": next.ExitReason}
			if needsyou.QuietCrash(next) {
				ev.Data["acknowledged"] = true // a crash of a loop the user acknowledged: quiet
			}
			if next.ExitCode != nil {
				ev.Data["exitCode"] = *next.ExitCode
			}
			if next.Signal != "" {
				ev.Data["signal"] = next.Signal
			}
		}
		for k, v := range steps[i].data {
			if ev.Data == nil {
				ev.Data = map[string]any{}
			}
			ev.Data[k] = v
		}
		e.appendEvent(next.ProjectID, ev)
		e.log.Info().Str("project", next.ProjectID).Str("agent", next.ID).
			Str("from", string(from)).Str("to", string(to)).Str("reason", reason).Int("pid", next.PID).Msg("transition")
		e.emit(EventAgentState, e.snapshot(a))
		from = to
	}
	return nil
}

// update writes a change of fields that is not a change of status. a.mu is
// held; a removed agent is not written. A write that fails is logged here
// (as apply logs its own), so a caller with nothing more to do about it
// may go on.
func (e *Engine) update(a *agent, mut func(r *store.Record)) error {
	return e.updateWith(a, false, mut)
}

// updateNow is update for what has happened (as applyNow): the change is
// kept in memory and written when it can be.
func (e *Engine) updateNow(a *agent, mut func(r *store.Record)) error {
	return e.updateWith(a, true, mut)
}

func (e *Engine) updateWith(a *agent, anyway bool, mut func(r *store.Record)) error {
	if a.gone() {
		return errGone(a.rec.ID)
	}
	next := a.rec.Clone()
	mut(next)
	if err := e.st.SaveRecord(next); err != nil {
		e.log.Error().Err(err).Str("project", next.ProjectID).Str("agent", next.ID).Bool("keptInMemory", anyway).Msg("cannot write record")
		if !anyway {
			e.diskError(err)
			return fmt.Errorf("write record of '%s': %w", next.ID, err)
		}
		e.unsaved(a, err)
	} else {
		e.saved(a)
	}
	a.rec = next
	e.emit(EventAgentState, e.snapshot(a))
	return nil
}

func (e *Engine) appendEvent(projectID string, ev store.Event) {
	if err := e.st.AppendEvent(projectID, ev); err != nil {
		e.log.Error().Err(err).Str("project", projectID).Str("event", ev.Event).Msg("cannot append event")
		e.diskError(err)
	}
}
