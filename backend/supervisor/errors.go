package supervisor

import "shepherd/backend/supervisor/errs"

// Error kinds (package errs), as the API and the CLI name them. Check with
// errors.Is.
var (
	ErrNotFound           = errs.NotFound
	ErrAlreadyExists      = errs.AlreadyExists
	ErrAlreadyRunning     = errs.AlreadyRunning
	ErrNotRunning         = errs.NotRunning
	ErrStartFailed        = errs.StartFailed
	ErrStopFailed         = errs.StopFailed
	ErrIsRunning          = errs.IsRunning
	ErrNotResumable       = errs.NotResumable
	ErrNotPaused          = errs.NotPaused
	ErrProjectNotFound    = errs.ProjectNotFound
	ErrValidation         = errs.Validation
	ErrTransition         = errs.Transition
	ErrEngineLocked       = errs.EngineLocked
	ErrProjectHasAgents   = errs.ProjectHasAgents
	ErrPermissionDenied   = errs.PermissionDenied
	ErrSandboxUnavailable = errs.SandboxUnavailable
	ErrWorktree           = errs.Worktree
	ErrWorktreeDirty      = errs.WorktreeDirty
	ErrMergeConflict      = errs.MergeConflict
	ErrTooMany            = errs.TooMany
)

// Error is an engine error: a kind and a message for people that names the
// agent and what was wrong.
type Error = errs.Error

// Kinds lists every error kind, for callers that map kinds to codes.
var Kinds = errs.Kinds

// KindName returns the name of err's kind ("ProcessNotFound", …), or
// "InternalError" for an error of no known kind.
func KindName(err error) string { return errs.KindName(err) }

var (
	newErr             = errs.New
	errNotFound        = errs.AgentNotFound
	errAlreadyExists   = errs.AgentExists
	errAlreadyRunning  = errs.AgentRunning
	errNotRunning      = errs.AgentNotRunning
	errStartFailed     = errs.StartFailedOf
	errStopFailed      = errs.StopFailedOf
	errGone            = errs.Gone
	errProjectNotFound = errs.NoProject
	errClosing         = errs.Closing
)
