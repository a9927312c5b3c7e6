package queue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/errs"
	"shepherd/backend/supervisor/hook"
)

// SignalFile is the seed's signal file, in the project's data folder.
const SignalFile = "pause_signal"

// MaxNote bounds the pause note read from the file.
const MaxNote = 1 << 10

// fileSig is what the signal file looked like, to tell a change.
type fileSig struct {
	exists bool
	mod    time.Time
	size   int64
	mode   fs.FileMode
}

// readSignal looks at the signal file: whether it is there, its note, and
// what is wrong with it if it cannot be read.
func readSignal(path string) (sig fileSig, note, problem string) {
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
	b, err := io.ReadAll(io.LimitReader(f, MaxNote))
	if err != nil {
		return sig, "", fmt.Sprintf("%s cannot be read (%v); the project is paused until it is removed", path, err)
	}
	return sig, strings.TrimSpace(strings.ToValidUTF8(string(b), "")), ""
}

// LoadPause takes the pause as the signal file at path says at a project's
// load (paused since the file's time), and reports whether it is paused.
func (s *State) LoadPause(path string) bool {
	sig, note, problem := readSignal(path)
	s.mu.Lock()
	defer s.mu.Unlock()
	if sig.exists {
		s.pause = pause{paused: true, at: sig.mod.UTC(), note: note, problem: problem, seen: sig, writes: s.pause.writes}
	} else {
		s.pause.seen = sig
	}
	return sig.exists
}

// CheckSignal acts on a change of the project's signal file (at path):
// created, the project pauses (its running agents are paused in the
// background); removed, it resumes.
func (q *Queues) CheckSignal(s *State, projectID, path string, now time.Time) {
	sig, note, problem := readSignal(path)
	s.mu.Lock()
	if sig == s.pause.seen || s.pause.writes > 0 {
		s.mu.Unlock()
		return
	}
	s.pause.seen = sig
	was := s.pause.paused
	newProblem := problem != "" && problem != s.pause.problem
	if sig.exists {
		s.pause.paused, s.pause.note, s.pause.problem = true, note, problem
		if !was {
			s.pause.at = now.UTC()
		}
	}
	s.mu.Unlock()
	if newProblem {
		q.log.Warn().Str("project", projectID).Msg(problem)
		q.core.Notify(notify.Notification{Level: notify.Warning, Kind: notify.KindPaused, Title: "Project paused",
			ProjectID: projectID, Native: q.core.NotifyNative(projectID), Message: problem})
	}
	switch {
	case sig.exists && !was:
		q.paused(s, projectID, "pause_signal created", now)
		q.core.Go(func() { q.PauseRunning(q.core.Context(), projectID, false) })
	case !sig.exists && was:
		q.Unpaused(s, projectID, "pause_signal removed", now)
	}
}

// paused records the project's pause in its events and pushes it.
func (q *Queues) paused(s *State, projectID, why string, now time.Time) {
	_, _, note, _ := s.Paused()
	q.core.Event(projectID, store.Event{Time: now.UTC(), Event: "project:paused", Reason: why, Data: map[string]any{"note": note}})
	q.log.Info().Str("project", projectID).Str("why", why).Str("note", note).Msg("project paused")
	q.core.ProjectChanged(projectID)
}

// Outcome is one agent's outcome of a pause of its project.
type Outcome struct {
	AgentID string
	Record  *store.Record
	Err     error
}

// Pause pauses a project: nothing of it starts (starts and resumes wait in
// its queue), and its running agents are paused — each at a safe point
// unless now. The pause holds in memory at once; its signal file (what
// makes it survive a restart) is written now, or — the disk full — later
// (written is told how the write went: the core retries it; a pause must
// work then too). It returns once every agent is paused.
func (q *Queues) Pause(ctx context.Context, s *State, projectID, note string, now bool, at time.Time, written func(err error)) ([]Outcome, error) {
	note = strings.TrimSpace(note)
	if len(note) > MaxNote {
		return nil, errs.New(errs.Validation, "the pause note is %d bytes long; at most %d", len(note), MaxNote)
	}
	s.mu.Lock()
	was := s.pause.paused
	s.pause.paused, s.pause.note, s.pause.problem = true, note, ""
	if !was {
		s.pause.at = at.UTC()
	}
	s.mu.Unlock()
	err := q.WriteSignal(s, projectID, note)
	if err != nil {
		q.log.Error().Err(err).Str("project", projectID).Msg("cannot write the pause signal file; the project is paused, and the file is written when it can be")
	}
	written(err)
	q.paused(s, projectID, "pause", at)
	return q.PauseRunning(ctx, projectID, now), nil
}

// WriteSignal writes the project's pause signal file with note, as the
// engine's own write (the watcher does not take it for a new pause).
func (q *Queues) WriteSignal(s *State, projectID, note string) error {
	path := q.core.SignalPath(projectID)
	s.ownWrite(+1)
	defer s.ownWrite(-1)
	if err := q.core.WriteFile(path, []byte(note+"\n")); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	sig, _, _ := readSignal(path)
	s.mu.Lock()
	s.pause.seen = sig
	s.mu.Unlock()
	return nil
}

func (s *State) ownWrite(d int) {
	s.mu.Lock()
	s.pause.writes += d
	s.mu.Unlock()
}

// PauseRunning pauses every running agent of a project at once.
func (q *Queues) PauseRunning(ctx context.Context, projectID string, now bool) []Outcome {
	var todo []hook.Agent
	for _, a := range q.core.Agents(projectID) {
		a.Lock()
		if a.Rec().Status == lifecycle.Running {
			todo = append(todo, a)
		}
		a.Unlock()
	}
	res := make([]Outcome, len(todo))
	var wg sync.WaitGroup
	for i, a := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := q.core.PauseAgent(ctx, a, now, "", true)
			a.Lock()
			id := a.Rec().ID
			a.Unlock()
			res[i] = Outcome{AgentID: id, Record: r, Err: err}
		}()
	}
	wg.Wait()
	return res
}

// Unpause resumes a project: its agents paused with it go through the queue
// in the order they were paused, and its queue is released. It removes the
// signal file.
func (q *Queues) Unpause(s *State, projectID string, now time.Time) error {
	path := q.core.SignalPath(projectID)
	s.ownWrite(+1)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.ownWrite(-1)
		// A folder, or no permission: the file is the truth, so say so.
		return errs.New(errs.Validation, "cannot remove %s: %v (remove it by hand to resume the project)", path, err)
	}
	s.mu.Lock()
	s.pause.writes--
	s.pause.seen = fileSig{}
	s.mu.Unlock()
	q.Unpaused(s, projectID, "unpause", now)
	return nil
}

// Unpaused records that the project is no longer paused (why says how it
// ended) and resumes the agents paused with it.
func (q *Queues) Unpaused(s *State, projectID, why string, now time.Time) {
	s.mu.Lock()
	was := s.pause.paused
	s.pause.paused, s.pause.note, s.pause.problem = false, "", ""
	s.mu.Unlock()
	if !was {
		return
	}
	q.core.Event(projectID, store.Event{Time: now.UTC(), Event: "project:unpaused", Reason: why})
	q.log.Info().Str("project", projectID).Str("why", why).Msg("project unpaused")
	q.core.ProjectChanged(projectID)
	q.Resume(s, projectID, func(r *store.Record) bool { return r.PausedWithProject })
}

// Resume resumes the paused agents of a project that match, in the order
// they were paused (each checked again under its lock before it is
// resumed), and releases the queue.
func (q *Queues) Resume(s *State, projectID string, match func(r *store.Record) bool) {
	type paused struct {
		a  hook.Agent
		at time.Time
	}
	var todo []paused
	for _, a := range q.core.Agents(projectID) {
		a.Lock()
		if r := a.Rec(); r.Status == lifecycle.Paused && r.PausedAt != nil && match(r) {
			todo = append(todo, paused{a, *r.PausedAt})
		}
		a.Unlock()
	}
	sort.SliceStable(todo, func(i, j int) bool { return todo[i].at.Before(todo[j].at) })
	for _, t := range todo {
		t.a.Lock()
		if r := t.a.Rec(); r.Status == lifecycle.Paused && match(r) {
			_ = q.UnpauseAgent(s, t.a) // one that fails says so itself
		}
		t.a.Unlock()
	}
	q.Kick(s)
}

// UnpauseAgent starts (or queues) a paused agent again. One that fails to
// start stays paused, with the error and a notification; it is not retried
// by itself. a's lock is held.
func (q *Queues) UnpauseAgent(s *State, a hook.Agent) error {
	err := q.Launch(s, a, Unpause)
	if r := a.Rec(); err != nil && r.Status == lifecycle.Paused {
		q.core.Notify(notify.Notification{Level: notify.Error, Kind: notify.KindFailed, Title: "Resume failed",
			ProjectID: r.ProjectID, AgentID: r.ID, Native: q.core.NotifyNative(r.ProjectID),
			Message: fmt.Sprintf("Agent %s could not be resumed and stays paused: %v", r.ID, err)})
	}
	return err
}

// Expired reports whether r, paused at the engine's now, has been paused
// for longer than days (a project's pausedExpiryDays): it fails then, its
// session id and log kept.
func Expired(r *store.Record, days int, now time.Time) bool {
	return r.Status == lifecycle.Paused && r.PausedAt != nil && now.Sub(*r.PausedAt) >= time.Duration(days)*24*time.Hour
}
