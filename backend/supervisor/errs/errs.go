// Package errs is the engine's errors: a kind (one of the sentinels below,
// seed 000's names and a few of our own) and a message for people that names
// the agent and what was wrong. The core and its features (queue, budget,
// worktrees, …) make them; package supervisor re-exports them as ErrX, which
// the API and the CLI map to their answers. Check a kind with errors.Is.
package errs

import (
	"errors"
	"fmt"
)

// The kinds.
var (
	NotFound         = errors.New("ProcessNotFound")
	AlreadyExists    = errors.New("ProcessAlreadyExists")
	AlreadyRunning   = errors.New("ProcessAlreadyRunning")
	NotRunning       = errors.New("ProcessNotRunning")
	StartFailed      = errors.New("ProcessStartFailed")
	StopFailed       = errors.New("ProcessStopFailed")
	IsRunning        = errors.New("ProcessIsRunning")
	NotResumable     = errors.New("ProcessNotResumable")
	NotPaused        = errors.New("ProcessNotPaused")
	ProjectNotFound  = errors.New("ProjectNotFound")
	Validation       = errors.New("ValidationError")
	Transition       = errors.New("TransitionRefused")
	EngineLocked     = errors.New("EngineAlreadyRunning")
	ProjectHasAgents = errors.New("ProjectHasLiveAgents")
	// The sandbox (seed 001): a grant beyond the caller's own, and a
	// sandbox this machine cannot enforce.
	PermissionDenied   = errors.New("PermissionDenied")
	SandboxUnavailable = errors.New("SandboxUnavailable")
	// Worktrees: git failed; a worktree's uncommitted changes would be
	// lost (ask, then remove with discardChanges); a merge conflicted (it
	// was aborted, nothing lost).
	Worktree      = errors.New("WorktreeFailed")
	WorktreeDirty = errors.New("WorktreeDirty")
	MergeConflict = errors.New("MergeConflict")
	// TooMany: a caller asked more often than it may (an agent's hooks).
	TooMany = errors.New("TooManyRequests")
)

// Kinds lists every kind, for callers that map kinds to codes.
var Kinds = []error{NotFound, AlreadyExists, AlreadyRunning, NotRunning,
	StartFailed, StopFailed, IsRunning, NotResumable, NotPaused, ProjectNotFound,
	Validation, Transition, EngineLocked, ProjectHasAgents, PermissionDenied, SandboxUnavailable,
	Worktree, WorktreeDirty, MergeConflict, TooMany}

// Error is an engine error: a kind and a message for people.
type Error struct {
	Kind    error
	Message string
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Kind }

// New makes an error of kind with a message.
func New(kind error, format string, a ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, a...)}
}

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

// The usual messages.

func AgentNotFound(id string) error { return New(NotFound, "Process '%s' not found", id) }

func AgentExists(id string) error { return New(AlreadyExists, "Process '%s' already exists", id) }

func AgentRunning(id string) error {
	return New(AlreadyRunning, "Process '%s' is already running", id)
}

func AgentNotRunning(id string) error { return New(NotRunning, "Process '%s' is not running", id) }

func StartFailedOf(id string, reason any) error {
	return New(StartFailed, "Failed to start process '%s': %v", id, reason)
}

func StopFailedOf(id string, reason any) error {
	return New(StopFailed, "Failed to stop process '%s': %v", id, reason)
}

// Gone: the agent was removed (or the engine is closing) while asked.
func Gone(id string) error {
	return New(NotFound, "Process '%s' not found (it was removed, or the engine is closing)", id)
}

func NoProject(id string) error { return New(ProjectNotFound, "Project '%s' not found", id) }

// Closing: a stop the next engine finishes.
func Closing() error {
	return New(StopFailed, "Shepherd is closing; the stop will be finished when it starts again")
}
