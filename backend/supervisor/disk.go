package supervisor

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"shepherd/backend/notify"
)

// A full disk (SPEC, threat model: a box cannot exhaust what the user
// needs). Agents' logs are capped and events.jsonl is rotated, but the
// disk may fill anyway — another program, a box's granted folder. Then:
//
//   - what has happened is kept: a transition that records an exit, a stop
//     or a pause moves in memory when its record cannot be written
//     (applyNow), and the record is written again on a short retry until
//     the disk takes it; a pause signal file likewise;
//   - the user is told: the engine looks at the free space of its data
//     folder's file system (statfs, one system call) on the wakeups it has
//     anyway (the monitors' passes) and whenever a write fails for lack of
//     space; under a threshold it raises an engine-level alert — in GET
//     /v1/engine, pushed to the windows (engine:alerts), notified once —
//     shown at the top of Needs you, and cleared when space returns.

// EventEngineAlerts is pushed when the engine's alerts change: data
// []Alert (empty: none left).
const EventEngineAlerts = "engine:alerts"

// AlertLowSpace is the kind of the low-space alert.
const AlertLowSpace = "low-space"

// Alert is something about the engine itself that needs the user.
type Alert struct {
	Kind       string    `json:"kind"`
	Message    string    `json:"message"`
	Path       string    `json:"path,omitempty"`
	FreeBytes  uint64    `json:"freeBytes"`
	TotalBytes uint64    `json:"totalBytes"`
	Since      time.Time `json:"since"`
}

// Low space, by default: under the lesser of 512 MiB and 5 % of the file
// system; cleared once an eighth more than that is free again.
const (
	lowSpaceMax     = 512 << 20
	lowSpacePercent = 5
	// diskRetry is how often, while the disk is low or a write waits, the
	// engine looks again and retries what it could not write.
	diskRetry = 10 * time.Second
)

// diskState is what the engine knows of its data folder's space.
type diskState struct {
	mu      sync.Mutex // a leaf
	alert   *Alert     // the low-space alert, while raised
	pending map[*agent]struct{}
	pauses  map[*project]string // pause signal files to write, with their notes
	timer   bool                // a retry is armed
}

// statFS is the free and total bytes of the file system path is on.
func statFS(path string) (free, total uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, 0, err
	}
	return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
}

// lowSpace is the threshold for a file system of total bytes.
func (e *Engine) lowSpace(total uint64) uint64 {
	if e.cfg.LowSpaceBytes > 0 {
		return e.cfg.LowSpaceBytes
	}
	return min(lowSpaceMax, total/100*lowSpacePercent)
}

// Alerts are the engine's alerts now (empty: none).
func (e *Engine) Alerts() []Alert {
	e.disk.mu.Lock()
	defer e.disk.mu.Unlock()
	if e.disk.alert == nil {
		return []Alert{}
	}
	return []Alert{*e.disk.alert}
}

// checkDisk looks at the data folder's free space and raises or clears the
// low-space alert.
func (e *Engine) checkDisk() {
	stat := e.cfg.StatFS
	if stat == nil {
		stat = statFS
	}
	free, total, err := stat(e.cfg.DataDir)
	if err != nil {
		e.log.Warn().Err(err).Str("path", e.cfg.DataDir).Msg("cannot read the free space of the data folder")
		return
	}
	limit := e.lowSpace(total)
	now := e.clock.Now().UTC()
	e.disk.mu.Lock()
	was := e.disk.alert
	switch {
	case free < limit:
		a := Alert{Kind: AlertLowSpace, Path: e.cfg.DataDir, FreeBytes: free, TotalBytes: total, Since: now,
			Message: fmt.Sprintf("The disk of Shepherd's data folder (%s) is nearly full: %s free. Agents' logs and records may not be written; free some space.",
				e.cfg.DataDir, bytesText(free))}
		if was != nil {
			a.Since = was.Since
		}
		e.disk.alert = &a
	case was != nil && free >= limit+limit/8:
		e.disk.alert = nil
	}
	raised, cleared := was == nil && e.disk.alert != nil, was != nil && e.disk.alert == nil
	e.disk.mu.Unlock()
	switch {
	case raised:
		e.log.Warn().Str("path", e.cfg.DataDir).Uint64("free", free).Uint64("threshold", limit).Msg("low space in the data folder")
		e.emit(EventEngineAlerts, e.Alerts())
		e.notify(notify.Notification{Level: notify.Warning, Kind: notify.KindDisk, Title: "Disk nearly full",
			Native: true, Message: e.Alerts()[0].Message})
		e.armDiskRetry()
	case cleared:
		e.log.Info().Str("path", e.cfg.DataDir).Uint64("free", free).Msg("space in the data folder again")
		e.emit(EventEngineAlerts, e.Alerts())
	}
}

// bytesText is a size for people.
func bytesText(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// isNoSpace reports whether err is the disk (or a quota) being full.
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// diskError looks at the disk at once when a write failed for lack of
// space.
func (e *Engine) diskError(err error) {
	if isNoSpace(err) {
		e.goTask(e.checkDisk)
	}
}

// unsaved notes that a's record in memory could not be written (err): it
// is written again on the retry. a.mu is held.
func (e *Engine) unsaved(a *agent, err error) {
	a.unsaved = true
	e.disk.mu.Lock()
	if e.disk.pending == nil {
		e.disk.pending = map[*agent]struct{}{}
	}
	e.disk.pending[a] = struct{}{}
	e.disk.mu.Unlock()
	e.diskError(err)
	e.armDiskRetry()
}

// saved notes that a's record is on disk as it is in memory. a.mu is held.
func (e *Engine) saved(a *agent) {
	if !a.unsaved {
		return
	}
	a.unsaved = false
	e.disk.mu.Lock()
	delete(e.disk.pending, a)
	e.disk.mu.Unlock()
	e.log.Info().Str("agent", a.rec.ID).Msg("record written after all")
}

// pauseUnwritten notes a project pause whose signal file could not be
// written: it is written on the retry (the pause holds meanwhile).
func (e *Engine) pauseUnwritten(p *project, note string, err error) {
	e.disk.mu.Lock()
	if e.disk.pauses == nil {
		e.disk.pauses = map[*project]string{}
	}
	e.disk.pauses[p] = note
	e.disk.mu.Unlock()
	e.diskError(err)
	e.armDiskRetry()
}

// pauseWritten forgets a pending pause signal file (written, or the
// project was unpaused).
func (e *Engine) pauseWritten(p *project) {
	e.disk.mu.Lock()
	delete(e.disk.pauses, p)
	e.disk.mu.Unlock()
}

// armDiskRetry arms the retry, unless it is armed: it runs every diskRetry
// for as long as the disk is low or something waits to be written.
func (e *Engine) armDiskRetry() {
	e.disk.mu.Lock()
	if e.disk.timer {
		e.disk.mu.Unlock()
		return
	}
	e.disk.timer = true
	e.disk.mu.Unlock()
	e.after(e.ctx, diskRetry, e.diskRetryTick)
}

func (e *Engine) diskRetryTick() {
	e.disk.mu.Lock()
	e.disk.timer = false
	e.disk.mu.Unlock()
	e.retryWrites()
	e.checkDisk()
	e.disk.mu.Lock()
	again := e.disk.alert != nil || len(e.disk.pending) > 0 || len(e.disk.pauses) > 0
	e.disk.mu.Unlock()
	if again {
		e.armDiskRetry()
	}
}

// retryWrites writes the records and pause signal files that could not be
// written.
func (e *Engine) retryWrites() {
	e.disk.mu.Lock()
	as := make([]*agent, 0, len(e.disk.pending))
	for a := range e.disk.pending {
		as = append(as, a)
	}
	pauses := make(map[*project]string, len(e.disk.pauses))
	for p, n := range e.disk.pauses {
		pauses[p] = n
	}
	e.disk.mu.Unlock()
	for _, a := range as {
		a.mu.Lock()
		switch {
		case a.gone():
			a.unsaved = false
			e.disk.mu.Lock()
			delete(e.disk.pending, a)
			e.disk.mu.Unlock()
		case a.unsaved:
			if err := e.st.SaveRecord(a.rec); err != nil {
				e.log.Warn().Err(err).Str("agent", a.rec.ID).Msg("record still not written")
			} else {
				e.saved(a)
			}
		}
		a.mu.Unlock()
	}
	for p, note := range pauses {
		if paused, _, _, _ := p.q.Paused(); !paused {
			e.pauseWritten(p)
			continue
		}
		if err := e.writePauseSignal(p, note); err != nil {
			e.log.Warn().Err(err).Str("project", p.info.ID).Msg("pause signal file still not written")
			continue
		}
		e.pauseWritten(p)
	}
}

// writePauseSignal writes p's pause signal file with note.
func (e *Engine) writePauseSignal(p *project, note string) error {
	return e.queues.WriteSignal(&p.q, p.info.ID, note)
}
