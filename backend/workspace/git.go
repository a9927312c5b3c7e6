// Package workspace gives an agent its own git worktree: a branch
// shepherd/<agent> checked out in a folder of its own, from a chosen base,
// with the files .worktreeinclude lists copied in and the project's setup
// command run there; its status and diff against the base; and its end
// (keep the branch, merge it, or discard it). Everything is done by the
// real git command line: the matching of .worktreeinclude, the checkout, the
// merge are git's own.
//
// What an agent wrote is data, never code: every git this package runs is
// hardened (hardened.go) — its git dir pinned to what Shepherd registered,
// hooks, fsmonitor, external diffs and textconv off, the commands that a
// configuration file an agent could write names neutralised — and agent
// files are read without following symlinks or opening anything but a
// regular file (safefs.go).
package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Errors, checked with errors.Is.
var (
	ErrNotRepo       = errors.New("not a git repository")
	ErrDirty         = errors.New("worktree has uncommitted changes")
	ErrConflict      = errors.New("merge conflict")
	ErrNoGit         = errors.New("git is not installed")
	ErrVanished      = errors.New("worktree vanished")
	ErrNotBranch     = errors.New("base is not a branch")
	ErrNoIdentity    = errors.New("git has no identity to commit with")
	ErrUnresolved    = errors.New("conflicts not resolved")
	ErrNotRegistered = errors.New("not a registered worktree")
)

// BranchPrefix names every branch Shepherd makes: shepherd/<agent>.
const BranchPrefix = "shepherd/"

// BranchFor is the branch of agent id.
func BranchFor(agentID string) string { return BranchPrefix + agentID }

// ReadTimeout bounds a git command that only looks (status, diff, rev-list);
// WriteTimeout one that changes the repository (worktree add, add, commit,
// merge). git opens the .gitignore and .gitattributes files of the tree it
// walks as they are: one an agent made a named pipe blocks it, and the
// deadline ends it (the request that ran it answers with an error).
var (
	ReadTimeout  = time.Minute
	WriteTimeout = 10 * time.Minute
)

// writes are the git subcommands that change a repository or a work tree.
var writes = map[string]bool{"worktree": true, "add": true, "commit": true, "merge": true, "branch": true,
	"checkout": true, "reset": true, "update-index": true, "read-tree": true}

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

// repo is git run in one place: a work tree with its git dir pinned
// (--git-dir and --work-tree, so that no .git file or folder in the tree is
// looked at), or a folder git discovers the repository of (only for the
// user's project folder, before a worktree exists). Its overrides are worked
// out from the configuration the first time a command needs them.
type repo struct {
	dir     string   // where git runs: the work tree's top folder
	pin     []string // --git-dir=… --work-tree=…; nil: discovery
	trees   []string // folders an agent may write: config files in them are not the user's
	checked bool
	over    []setting // from hardenConfig
}

// discover is git run in dir, finding its repository as git does.
func discover(dir string) *repo { return &repo{dir: dir, trees: []string{dir}} }

// pinned is git run on the work tree workTree with the git dir gitDir.
func pinned(gitDir, workTree string, trees ...string) *repo {
	return &repo{dir: workTree, pin: []string{"--git-dir=" + gitDir, "--work-tree=" + workTree}, trees: trees}
}

// contentCommands read or write the files of a work tree, where git runs
// the filters, merge drivers and diff programs its configuration names:
// they get the overrides of hardenConfig.
var contentCommands = map[string]bool{"status": true, "diff": true, "add": true, "commit": true, "merge": true,
	"worktree": true, "checkout": true, "reset": true, "ls-files": true, "stash": true, "update-index": true}

// run runs git and returns its stdout.
func (r *repo) run(ctx context.Context, args ...string) ([]byte, error) {
	var over []setting
	if contentCommands[subcommand(args)] {
		if !r.checked {
			o, err := r.overrides(ctx)
			if err != nil {
				return nil, err
			}
			r.over, r.checked = o, true
		}
		over = r.over
	}
	return runGit(ctx, r.dir, r.pin, over, args...)
}

// line runs git and returns its stdout's first line, trimmed.
func (r *repo) line(ctx context.Context, args ...string) (string, error) {
	out, err := r.run(ctx, args...)
	if err != nil {
		return "", err
	}
	s, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(s), nil
}

// runGit runs git hardened (hardened.go): pin first, then the fixed
// settings, then args; the overrides go in GIT_CONFIG_KEY_n/VALUE_n, which
// take any key as it is (a -c splits a subsection holding "=").
func runGit(ctx context.Context, dir string, pin []string, over []setting, args ...string) ([]byte, error) {
	timeout := ReadTimeout
	if writes[subcommand(args)] {
		timeout = WriteTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	full := make([]string, 0, len(pin)+2*len(hardening)+len(args)+1)
	full = append(full, "--no-pager")
	full = append(full, pin...)
	for _, kv := range hardening {
		full = append(full, "-c", kv)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = gitEnviron()
	if len(over) > 0 {
		cmd.Env = append(cmd.Env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(over)))
		for i, s := range over {
			n := strconv.Itoa(i)
			cmd.Env = append(cmd.Env, "GIT_CONFIG_KEY_"+n+"="+s.key, "GIT_CONFIG_VALUE_"+n+"="+s.value)
		}
	}
	// Its own process group, ended whole: a filter or driver git started
	// must not keep the pipes open after git is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
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
		if ctx.Err() != nil {
			err = fmt.Errorf("git did not finish in %s (a named pipe where git reads a file, or a very large tree?): %w", timeout, ctx.Err())
			return out.Bytes(), &gitError{args: args, code: code, err: err}
		}
		return out.Bytes(), &gitError{args: args, code: code, stderr: errb.String(), err: err}
	}
	return out.Bytes(), nil
}

// gitEnviron is the engine's environment without any GIT_* variable (a
// GIT_DIR, GIT_CONFIG_PARAMETERS or GIT_EXTERNAL_DIFF it was started with
// must not steer git on an agent's tree), with prompts, editors, pagers
// and askpass programs off, optional locks off (a status never rewrites
// the index, so the engine's own looks do not look like changes), and
// messages in English so that what is reported reads the same everywhere.
func gitEnviron() []string {
	env := make([]string, 0, 32)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "GIT_"), k == "SSH_ASKPASS", k == "PAGER", k == "LC_ALL", k == "LANGUAGE":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=", "GIT_EDITOR=:", "GIT_SEQUENCE_EDITOR=:",
		"GIT_PAGER=cat", "PAGER=cat", "GIT_MERGE_AUTOEDIT=no", "GIT_OPTIONAL_LOCKS=0", "GIT_PROTOCOL_FROM_USER=0",
		"LC_ALL=C", "LANGUAGE=C")
}

// subcommand is the git command args run, past any leading -c settings.
func subcommand(args []string) string {
	for len(args) >= 2 && args[0] == "-c" {
		args = args[2:]
	}
	if len(args) == 0 {
		return ""
	}
	return args[0]
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
	s, err := discover(dir).line(ctx, "rev-parse", "--show-toplevel")
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
	_, err := discover(dir).line(context.Background(), "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	return err == nil
}

// currentBranch is the branch checked out ("" when HEAD is detached).
func (r *repo) currentBranch(ctx context.Context) (string, error) {
	s, err := r.line(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		if exitCode(err) == 1 {
			return "", nil // detached
		}
		return "", err
	}
	return s, nil
}

// commitOf resolves rev to a full commit id.
func (r *repo) commitOf(ctx context.Context, rev string) (string, error) {
	return r.line(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
}

// branchExists reports whether refs/heads/<name> exists.
func (r *repo) branchExists(ctx context.Context, name string) bool {
	_, err := r.line(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+name)
	return err == nil
}

// merging reports whether a merge is under way (MERGE_HEAD).
func (r *repo) merging(ctx context.Context) bool {
	_, err := r.line(ctx, "rev-parse", "--verify", "--quiet", "MERGE_HEAD")
	return err == nil
}

// splitZ splits git's NUL-separated output, without empty fields.
func splitZ(b []byte) []string {
	var out []string
	for _, f := range strings.Split(string(b), "\x00") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}
