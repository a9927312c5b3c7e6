package worktrees

import (
	"testing"

	"shepherd/backend/workspace"
)

// A folder of the project's checkout maps to the same folder in the
// worktree.
func TestInto(t *testing.T) {
	w := &workspace.Workspace{Repo: "/src/repo", Path: "/wt/p/a"}
	for _, tc := range []struct{ project, cwd, want string }{
		{"/src/repo", "/src/repo", "/wt/p/a"},
		{"/src/repo", "/src/repo/web/app", "/wt/p/a/web/app"},
		{"/src/repo/web", "/src/repo/web", "/wt/p/a/web"}, // a project in a subfolder of its repository
		{"/src/repo", "/wt/p/a/docs", "/wt/p/a/docs"},     // already in the worktree (an edit)
		{"/src/repo", "/elsewhere", "/wt/p/a"},
	} {
		if got := Into(w, tc.project, tc.cwd); got != tc.want {
			t.Errorf("Into(%s, %s) = %s, want %s", tc.project, tc.cwd, got, tc.want)
		}
	}
}
