// Package workspace gives an agent its own git worktree: a branch
// shepherd/<agent> checked out in a folder of its own, from a chosen base,
// with the files .worktreeinclude lists copied in and the project's setup
// command run there; its status and diff against the base; and its end
// (keep the branch, merge it, or discard it). Everything is done by the
// real git command line: the matching of .worktreeinclude, the checkout, the
// merge are git's own.
package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Errors, checked with errors.Is.
var (
	ErrNotRepo   = errors.New("not a git repository")
	ErrDirty     = errors.New("worktree has uncommitted changes")
	ErrConflict  = errors.New("merge conflict")
	ErrNoGit     = errors.New("git is not installed")
	ErrVanished  = errors.New("worktree vanished")
	ErrNotBranch = errors.New("base is not a branch")
)

// BranchPrefix names every branch Shepherd makes: shepherd/<agent>.
const BranchPrefix = "shepherd/"

// BranchFor is the branch of agent id.
func BranchFor(agentID string) string { return BranchPrefix + agentID }

// gitError is a failed git command: its arguments, exit code and what it
// said on stderr.
type gitError struct {
	args   []string
	code   int
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.args, " "), msg)
}

func (e *gitError) Unwrap() error { return e.err }

// git runs git in dir and returns its stdout. Prompts are off (a merge
// never waits for an editor or a password), messages are in English so
// that what is reported reads the same everywhere, and paths are not
// quoted.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	full := append([]string{"-c", "core.quotepath=off", "-c", "color.ui=false"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "GIT_MERGE_AUTOEDIT=no", "LC_ALL=C", "LANGUAGE=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, ErrNoGit
		}
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return out.Bytes(), &gitError{args: args, code: code, stderr: errb.String(), err: err}
	}
	return out.Bytes(), nil
}

// gitLine runs git and returns its stdout's first line, trimmed.
func gitLine(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := git(ctx, dir, args...)
	if err != nil {
		return "", err
	}
	s, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(s), nil
}

// exitCode is the exit code of a failed git command, -1 when it did not
// run.
func exitCode(err error) int {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code
	}
	return -1
}

// TopLevel is the top folder of the checkout dir is in; ErrNotRepo when dir
// is in none.
func TopLevel(ctx context.Context, dir string) (string, error) {
	s, err := gitLine(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		if errors.Is(err, ErrNoGit) {
			return "", err
		}
		return "", fmt.Errorf("%s: %w", dir, ErrNotRepo)
	}
	return s, nil
}

// IsRepo reports whether dir is in a git checkout with at least one commit
// (a worktree needs something to check out).
func IsRepo(dir string) bool {
	_, err := gitLine(context.Background(), dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	return err == nil
}

// CurrentBranch is the branch checked out in dir ("" when HEAD is detached).
func CurrentBranch(ctx context.Context, dir string) (string, error) {
	s, err := gitLine(ctx, dir, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		if exitCode(err) == 1 {
			return "", nil // detached
		}
		return "", err
	}
	return s, nil
}

// commitOf resolves rev to a full commit id.
func commitOf(ctx context.Context, dir, rev string) (string, error) {
	return gitLine(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
}

// branchExists reports whether refs/heads/<name> exists.
func branchExists(ctx context.Context, dir, name string) bool {
	_, err := gitLine(ctx, dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+name)
	return err == nil
}
