package supervisor

import (
	"errors"
	"fmt"
)

// Error kinds. Each is the name the API and CLI report (seed 000's names, and
// a few of our own for projects and validation). Check with errors.Is.
var (
	ErrNotFound         = errors.New("ProcessNotFound")
	ErrAlreadyExists    = errors.New("ProcessAlreadyExists")
	ErrAlreadyRunning   = errors.New("ProcessAlreadyRunning")
	ErrNotRunning       = errors.New("ProcessNotRunning")
	ErrStartFailed      = errors.New("ProcessStartFailed")
	ErrStopFailed       = errors.New("ProcessStopFailed")
	ErrIsRunning        = errors.New("ProcessIsRunning")
	ErrNotResumable     = errors.New("ProcessNotResumable")
	ErrNotPaused        = errors.New("ProcessNotPaused")
	ErrProjectNotFound  = errors.New("ProjectNotFound")
	ErrValidation       = errors.New("ValidationError")
	ErrTransition       = errors.New("TransitionRefused")
	ErrEngineLocked     = errors.New("EngineAlreadyRunning")
	ErrProjectHasAgents = errors.New("ProjectHasLiveAgents")
	// The sandbox (seed 001): a grant beyond the caller's own, and a
	// sandbox this machine cannot enforce.
	ErrPermissionDenied   = errors.New("PermissionDenied")
	ErrSandboxUnavailable = errors.New("SandboxUnavailable")
	// Worktrees: git failed; a worktree's uncommitted changes would be
	// lost (ask, then remove with discardChanges); a merge conflicted (it
	// was aborted, nothing lost).
	ErrWorktree      = errors.New("WorktreeFailed")
	ErrWorktreeDirty = errors.New("WorktreeDirty")
	ErrMergeConflict = errors.New("MergeConflict")
	// ErrTooMany: a caller asked more often than it may (an agent's hooks).
	ErrTooMany = errors.New("TooManyRequests")
)

// Error is an engine error: a kind (one of the sentinels above) and a message
// for people that names the agent and what was wrong.
type Error struct {
	Kind    error
	Message string
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Kind }

func newErr(kind error, format string, a ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, a...)}
}

// Kinds lists every error kind, for callers that map kinds to codes.
var Kinds = []error{ErrNotFound, ErrAlreadyExists, ErrAlreadyRunning, ErrNotRunning,
	ErrStartFailed, ErrStopFailed, ErrIsRunning, ErrNotResumable, ErrNotPaused, ErrProjectNotFound,
	ErrValidation, ErrTransition, ErrEngineLocked, ErrProjectHasAgents, ErrPermissionDenied, ErrSandboxUnavailable,
	ErrWorktree, ErrWorktreeDirty, ErrMergeConflict, ErrTooMany}

// KindName returns the name of err's kind ("ProcessNotFound", …), or
// "InternalError" for an error of no known kind.
func KindName(err error) string {
	for _, k := range Kinds {
		if errors.Is(err, k) {
			return k.Error()
		}
	}
	return "InternalError"
}

func errNotFound(id string) error { return newErr(ErrNotFound, "Process '%s' not found", id) }
func errAlreadyExists(id string) error {
	return newErr(ErrAlreadyExists, "Process '%s' already exists", id)
}
func errAlreadyRunning(id string) error {
	return newErr(ErrAlreadyRunning, "Process '%s' is already running", id)
}
func errNotRunning(id string) error { return newErr(ErrNotRunning, "Process '%s' is not running", id) }
func errStartFailed(id string, reason any) error {
	return newErr(ErrStartFailed, "Failed to start process '%s': %v", id, reason)
}
func errStopFailed(id string, reason any) error {
	return newErr(ErrStopFailed, "Failed to stop process '%s': %v", id, reason)
}

func errGone(id string) error {
	return newErr(ErrNotFound, "Process '%s' not found (it was removed, or the engine is closing)", id)
}

func errProjectNotFound(id string) error {
	return newErr(ErrProjectNotFound, "Project '%s' not found", id)
}

func errClosing() error {
	return newErr(ErrStopFailed, "Shepherd is closing; the stop will be finished when it starts again")
}
