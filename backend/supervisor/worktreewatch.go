package supervisor

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"shepherd/backend/filewatch"
	"shepherd/backend/workspace"
)

// With Config.WatchFiles the engine notices a worktree agent's commits and
// its base moving (the user's commit, a merge, a pull) as they happen: it
// watches the worktree's HEAD, index and MERGE_HEAD in its registered git
// dir, its branch's and its base's refs and packed-refs in the repository,
// and after a change settles looks at the worktree again and pushes
// agent:worktree, so the detail's chip is never stale. The engine's own
// looks do not write any of these (git runs with optional locks off), so a
// look never causes another.

// worktreeSettle is how long changes must pause before the worktree is
// looked at again: a commit writes the index, HEAD and a ref in a burst.
const worktreeSettle = 300 * time.Millisecond

// worktreeWatch is one agent's watches of its worktree's git files.
type worktreeWatch struct {
	mu      sync.Mutex
	watches []*filewatch.Watch
	timer   clockwork.Timer
	stopped bool
	unhook  func() bool // the stop with the agent's life, undone when stopped before
}

// worktreeFiles are the git files whose change means a's worktree status
// may have changed.
func worktreeFiles(w workspace.Workspace) []string {
	if w.GitDir == "" || w.CommonDir == "" {
		return nil
	}
	files := []string{
		filepath.Join(w.GitDir, "HEAD"), filepath.Join(w.GitDir, "index"), filepath.Join(w.GitDir, "MERGE_HEAD"),
		filepath.Join(w.CommonDir, "packed-refs"),
		filepath.Join(w.CommonDir, "refs", "heads", filepath.FromSlash(w.Branch)),
	}
	if w.Base != "" && w.Base != w.BaseCommit {
		files = append(files, filepath.Join(w.CommonDir, "refs", "heads", filepath.FromSlash(w.Base)))
	}
	return files
}

// watchWorktree starts (or starts again, for a workspace whose git dirs are
// now known) the watch of a's worktree; nothing without WatchFiles. The
// watch ends with the agent.
func (e *Engine) watchWorktree(a *agent) {
	if e.files == nil {
		return
	}
	a.mu.Lock()
	if !hasWorktree(a.rec) || a.gone() {
		a.mu.Unlock()
		return
	}
	files := worktreeFiles(*a.rec.Workspace)
	pid, id := a.rec.ProjectID, a.rec.ID
	old := a.wtWatch
	ww := &worktreeWatch{}
	a.wtWatch = ww
	a.mu.Unlock()
	if old != nil {
		old.stop()
	}
	changed := func() { e.worktreeChanged(ww, pid, id) }
	for _, f := range files {
		x, err := e.files.Watch(f, changed)
		if err != nil {
			// A ref folder that does not exist (a packed ref): packed-refs
			// is watched for it.
			e.log.Debug().Err(err).Str("agent", id).Str("file", f).Msg("cannot watch worktree file")
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
	unhook := context.AfterFunc(a.life, ww.stop)
	ww.mu.Lock()
	ww.unhook = unhook
	stopped := ww.stopped
	ww.mu.Unlock()
	if stopped {
		unhook()
	}
}

// worktreeChanged schedules a look at the worktree once changes settle.
func (e *Engine) worktreeChanged(ww *worktreeWatch, projectID, agentID string) {
	ww.mu.Lock()
	defer ww.mu.Unlock()
	if ww.stopped {
		return
	}
	if ww.timer != nil {
		ww.timer.Stop()
	}
	ww.timer = e.clock.AfterFunc(worktreeSettle, func() {
		e.goTask(func() {
			if _, err := e.RefreshWorktree(e.ctx, projectID, agentID); err != nil {
				e.log.Debug().Err(err).Str("agent", agentID).Msg("worktree refresh after a change")
			}
		})
	})
}

func (ww *worktreeWatch) stop() {
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
