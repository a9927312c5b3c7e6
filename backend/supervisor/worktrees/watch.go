package worktrees

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"shepherd/backend/filewatch"
	"shepherd/backend/supervisor/hook"
	"shepherd/backend/workspace"
)

// With file watching the engine notices a worktree agent's commits and its
// base moving (the user's commit, a merge, a pull) as they happen: it
// watches the worktree's HEAD, index and MERGE_HEAD in its registered git
// dir, its branch's and its base's refs and packed-refs in the repository,
// and after a change settles looks at the worktree again and pushes
// EventName, so the detail's chip is never stale. The engine's own looks do
// not write any of these (git runs with optional locks off), so a look
// never causes another.

// Settle is how long changes must pause before the worktree is looked at
// again: a commit writes the index, HEAD and a ref in a burst.
const Settle = 300 * time.Millisecond

// watch is one agent's watches of its worktree's git files.
type watch struct {
	mu      sync.Mutex
	watches []*filewatch.Watch
	timer   clockwork.Timer
	stopped bool
	unhook  func() bool // the stop with the agent's life, undone when stopped before
}

// files are the git files whose change means a worktree's status may have
// changed.
func files(w workspace.Workspace) []string {
	if w.GitDir == "" || w.CommonDir == "" {
		return nil
	}
	fs := []string{
		filepath.Join(w.GitDir, "HEAD"), filepath.Join(w.GitDir, "index"), filepath.Join(w.GitDir, "MERGE_HEAD"),
		filepath.Join(w.CommonDir, "packed-refs"),
		filepath.Join(w.CommonDir, "refs", "heads", filepath.FromSlash(w.Branch)),
	}
	if w.Base != "" && w.Base != w.BaseCommit {
		fs = append(fs, filepath.Join(w.CommonDir, "refs", "heads", filepath.FromSlash(w.Base)))
	}
	return fs
}

// Watch starts (or starts again, for a workspace whose git dirs are now
// known) the watch of a's worktree; nothing without file watching. The
// watch ends with the agent.
func (w *Worktrees) Watch(a hook.Agent) {
	fw := w.core.Files()
	if fw == nil {
		return
	}
	a.Lock()
	r := a.Rec()
	if !Has(r) || a.Gone() {
		a.Unlock()
		return
	}
	fs := files(*r.Workspace)
	pid, id := r.ProjectID, r.ID
	a.Unlock()
	ww := &watch{}
	w.mu.Lock()
	old := w.watches[a]
	w.watches[a] = ww
	w.mu.Unlock()
	if old != nil {
		old.stop()
	}
	changed := func() { w.changed(ww, pid, id) }
	for _, f := range fs {
		x, err := fw.Watch(f, changed)
		if err != nil {
			// A ref folder that does not exist (a packed ref): packed-refs
			// is watched for it.
			w.log.Debug().Err(err).Str("agent", id).Str("file", f).Msg("cannot watch worktree file")
			continue
		}
		ww.mu.Lock()
		if ww.stopped {
			ww.mu.Unlock()
			x.Stop()
			return
		}
		ww.watches = append(ww.watches, x)
		ww.mu.Unlock()
	}
	unhook := context.AfterFunc(w.core.Life(a), func() {
		ww.stop()
		w.mu.Lock()
		if w.watches[a] == ww {
			delete(w.watches, a)
		}
		w.mu.Unlock()
	})
	ww.mu.Lock()
	ww.unhook = unhook
	stopped := ww.stopped
	ww.mu.Unlock()
	if stopped {
		unhook()
	}
}

// changed schedules a look at the worktree once changes settle.
func (w *Worktrees) changed(ww *watch, projectID, agentID string) {
	ww.mu.Lock()
	defer ww.mu.Unlock()
	if ww.stopped {
		return
	}
	if ww.timer != nil {
		ww.timer.Stop()
	}
	ww.timer = w.core.Clock().AfterFunc(Settle, func() {
		w.core.Go(func() {
			if _, err := w.Refresh(w.ctx, projectID, agentID); err != nil {
				w.log.Debug().Err(err).Str("agent", agentID).Msg("worktree refresh after a change")
			}
		})
	})
}

func (ww *watch) stop() {
	ww.mu.Lock()
	ws := ww.watches
	ww.watches, ww.stopped = nil, true
	if ww.timer != nil {
		ww.timer.Stop()
	}
	unhook := ww.unhook
	ww.mu.Unlock()
	if unhook != nil {
		unhook()
	}
	for _, x := range ws {
		x.Stop()
	}
}
