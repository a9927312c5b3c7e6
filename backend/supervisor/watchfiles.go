package supervisor

import (
	"time"

	"shepherd/backend/filewatch"
)

// With Config.WatchFiles the engine sees a log grow, and a project's pause
// signal file come and go, through the kernel's file-change notification
// (package filewatch: inotify, kqueue) instead of its two polls — the log
// poller's ticks and the pause watcher's second — so an idle engine wakes
// only for a real deadline. The stale check still looks at each log itself
// before judging it (monitor.go), so a change the notification missed
// cannot make an agent stale.

// logLookGap spaces the looks at one log that is written without a pause.
const logLookGap = 50 * time.Millisecond

// startFileWatch starts the watcher; false: the engine polls instead.
func (e *Engine) startFileWatch() bool {
	if !e.cfg.WatchFiles {
		return false
	}
	w, err := filewatch.New(logLookGap)
	if err != nil {
		e.log.Warn().Err(err).Msg("no file-change notification: logs and pause signals are polled")
		return false
	}
	e.files = w
	return true
}

// watchLog looks at rn's log whenever it changes, and once now. If the log cannot be
// watched (its folder is gone, the kernel's watches ran out), the log
// poller takes over. a.mu is held.
func (e *Engine) watchLog(a *agent, rn *run) {
	if e.files == nil || rn.logPath == "" {
		return
	}
	x, err := e.files.Watch(rn.logPath, func() { e.asTask(func() { e.pollRun(a, rn) }) })
	if err != nil {
		e.log.Warn().Err(err).Str("agent", a.rec.ID).Msg("cannot watch the log; polling logs")
		e.startPoller()
		return
	}
	rn.logWatch = x
	// What the agent wrote before the watch began is read now, not at its
	// next write (which may never come: an agent waiting for a rate limit).
	// In a task of its own: a.mu is held here.
	e.goTask(func() { e.pollRun(a, rn) })
}

// watchPauseSignal acts on p's pause signal file whenever it changes, and
// looks once now (it may have changed before the watch began). p.mu is held.
func (e *Engine) watchPauseSignal(p *project, m *monitor) {
	if e.files == nil {
		return
	}
	x, err := e.files.Watch(e.pauseSignalPath(p.info.ID), func() { e.asTask(func() { e.checkPauseSignal(p) }) })
	if err != nil {
		e.log.Warn().Err(err).Str("project", p.info.ID).Msg("cannot watch the pause signal; polling it")
		e.startPauseWatcher()
		return
	}
	m.pauseWatch = x
	e.goTask(func() { e.checkPauseSignal(p) })
}

// asTask runs f now, on this goroutine, as a tracked task (Close waits for
// it); not once the engine is closing.
func (e *Engine) asTask(f func()) {
	if !e.tasks.enter() {
		return
	}
	defer e.tasks.leave()
	if e.ctx.Err() == nil {
		f()
	}
}
