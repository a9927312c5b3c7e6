package api

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"shepherd/backend/claudehooks"
	"shepherd/backend/supervisor"
)

// Hooks receives what an agent's hooks report (*supervisor.Engine has it):
// AllowHook says whether the agent may post one now (rate-limited), Hook
// takes it.
type Hooks interface {
	AllowHook(ref supervisor.AgentRef) error
	Hook(ref supervisor.AgentRef, body []byte) error
}

// HookIn is a hook's input: Claude Code's JSON, read only once the agent
// may post (a flood costs next to nothing).
type HookIn struct {
	body io.Reader
}

// Resolve keeps the body unread for the handler.
func (in *HookIn) Resolve(ctx huma.Context) []error {
	in.body = ctx.BodyReader()
	return nil
}

// ClaudeHook receives one of Claude Code's hooks from the agent that posts
// it (SPEC "Attention"): only an agent's own credential may, and it speaks
// for that agent only. The answer is 200 with an empty body, which Claude
// Code reads as "go on as you would": Shepherd listens, it does not decide.
var ClaudeHook = define(&Op[HookIn, struct{}]{
	ID: "claudeHook", Method: http.MethodPost, Path: claudehooks.Path, Access: AnyCaller,
	Summary: "A Claude Code hook of the agent whose credential posts it (its own credential only; 413 over 256 KiB, 429 when too many)",
	document: func(op *huma.Operation, _ huma.Registry) {
		op.RequestBody = &huma.RequestBody{Required: true, Description: "the hook's input as Claude Code sends it",
			Content: map[string]*huma.MediaType{"application/json": {}}}
		op.Responses = map[string]*huma.Response{"200": {Description: "taken (an empty body: go on as you would)"}}
	},
}, func(h *handler, ctx context.Context, in *HookIn) (*struct{}, error) {
	c := callerIn(ctx)
	if c.Agent == nil {
		return nil, problem(http.StatusForbidden, supervisor.KindName(supervisor.ErrPermissionDenied),
			"hooks are reported by an agent with its own credential (SHEPHERD_AGENT_TOKEN), not with the user's token")
	}
	if h.hooks == nil {
		return nil, problem(http.StatusNotFound, supervisor.KindName(supervisor.ErrNotFound), "this engine receives no hooks")
	}
	if err := h.hooks.AllowHook(*c.Agent); err != nil {
		// Refused before its body is read.
		e := asError(err).(*apiError)
		e.headers = http.Header{"Retry-After": {"1"}}
		return nil, e
	}
	b, err := io.ReadAll(io.LimitReader(in.body, claudehooks.MaxBody+1))
	if err != nil || len(b) > claudehooks.MaxBody {
		return nil, problem(http.StatusRequestEntityTooLarge, "ValidationError",
			fmt.Sprintf("hook input is larger than %d bytes", claudehooks.MaxBody))
	}
	if err := h.hooks.Hook(*c.Agent, b); err != nil {
		return nil, err
	}
	return &struct{}{}, nil
})
