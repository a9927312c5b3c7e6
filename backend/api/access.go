package api

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// Who is calling, and what it may do (SPEC, threat model). The caller is
// derived from the bearer credential alone — never from a body field or an
// environment variable: the user's token (engine.json, which no sandbox can
// read) is the user, who may do everything; an agent's own credential (given
// to its run only, see supervisor/identity.go) is that agent, which may act
// only where its operation's access rule (Op.Access) lets it: on what it
// created and their descendants, in its own project.

// Caller is who a request comes from.
type Caller struct {
	User  bool                 // the user's token
	Agent *supervisor.AgentRef // an agent's credential
}

type callerKey struct{}

// CallerOf is the caller of an authorised request.
func CallerOf(r *http.Request) Caller { return callerIn(r.Context()) }

func callerIn(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

func withCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// identify maps the request's bearer credential to its caller.
func (h *handler) identify(r *http.Request) (Caller, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return Caller{}, false
	}
	tok = strings.TrimSpace(tok)
	if len(h.token) > 0 && subtle.ConstantTimeCompare([]byte(tok), h.token) == 1 {
		return Caller{User: true}, true
	}
	if h.ids != nil {
		if ref, ok := h.ids.AgentByCredential(tok); ok {
			return Caller{Agent: &ref}, true
		}
	}
	return Caller{}, false
}

// accessCheck lets an agent's request through only where its operation's
// access rule allows, before anything of the request is read. Another
// agent's or the user's agent reads as not found: an agent learns nothing
// of what is not its own.
func (h *handler) accessCheck(ctx huma.Context, next func(huma.Context)) {
	c := callerIn(ctx.Context())
	if c.User {
		next(ctx)
		return
	}
	op := ctx.Operation()
	rule, _ := op.Extensions[AccessExtension].(string)
	if err := h.allow(Access(rule), op, c, ctx.Param("project"), ctx.Param("agent")); err != nil {
		r, w := unwrap(ctx)
		if err.Message == "" {
			err.Message = fmt.Sprintf("agent '%s' cannot %s %s: only the user can (an agent's credential acts on the agents it created)",
				c.Agent.AgentID, r.Method, r.URL.Path)
		}
		writeError(w, err.status, err.Name, err.Message)
		return
	}
	next(ctx)
}

// allow checks an agent caller against an operation's rule.
func (h *handler) allow(rule Access, op *huma.Operation, c Caller, p, a string) *apiError {
	me := *c.Agent
	switch rule {
	case AnyCaller:
		return nil
	case InProject, Owned, OwnedOrSelf:
	default:
		return problem(http.StatusForbidden, supervisor.KindName(supervisor.ErrPermissionDenied), "")
	}
	if p != me.ProjectID {
		return problem(http.StatusNotFound, supervisor.KindName(supervisor.ErrProjectNotFound), fmt.Sprintf("Project '%s' not found", p))
	}
	if rule == InProject || (rule == OwnedOrSelf && a == me.AgentID) {
		return nil
	}
	if h.ids.Owns(me, supervisor.AgentRef{ProjectID: p, AgentID: a}) {
		return nil
	}
	if a == me.AgentID {
		return problem(http.StatusForbidden, supervisor.KindName(supervisor.ErrPermissionDenied),
			fmt.Sprintf("agent '%s' cannot %s itself: only the user can", me.AgentID, verbOf(op)))
	}
	return problem(http.StatusNotFound, supervisor.KindName(supervisor.ErrNotFound), fmt.Sprintf("Process '%s' not found", a))
}

// verbOf is what an operation does to an agent, in a refusal's words.
func verbOf(op *huma.Operation) string {
	switch op.Method {
	case http.MethodDelete:
		return "remove"
	case http.MethodPut:
		return "edit"
	}
	if i := strings.LastIndexByte(op.Path, '/'); i >= 0 {
		return op.Path[i+1:]
	}
	return "act on"
}

// visible keeps the records an agent caller may see: itself and what it
// owns. The user sees everything.
func (h *handler) visible(c Caller, recs []*store.Record) []*store.Record {
	if c.User {
		return recs
	}
	out := []*store.Record{}
	for _, rec := range recs {
		if rec == nil || rec.ProjectID != c.Agent.ProjectID {
			continue
		}
		t := supervisor.AgentRef{ProjectID: rec.ProjectID, AgentID: rec.ID}
		if rec.ID == c.Agent.AgentID || h.ids.Owns(*c.Agent, t) {
			out = append(out, rec)
		}
	}
	return out
}
