package api

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// Who is calling, and what it may do (SPEC, threat model). The caller is
// derived from the bearer credential alone — never from a body field or an
// environment variable: the user's token (engine.json, which no sandbox can
// read) is the user, who may do everything; an agent's own credential (given
// to its run only, see supervisor/identity.go) is that agent, which may act
// only on what it created and their descendants, in its own project.

// Caller is who a request comes from.
type Caller struct {
	User  bool                 // the user's token
	Agent *supervisor.AgentRef // an agent's credential
}

// Whoami is the answer of GET /v1/whoami.
type Whoami struct {
	User      bool   `json:"user"`
	ProjectID string `json:"projectId,omitempty"`
	AgentID   string `json:"agentId,omitempty"`
}

type callerKey struct{}

// CallerOf is the caller of an authorised request.
func CallerOf(r *http.Request) Caller {
	c, _ := r.Context().Value(callerKey{}).(Caller)
	return c
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

// agentScope is how a route checks an agent caller's target.
type agentScope int

const (
	scopeAny       agentScope = iota + 1 // nothing to check (engine status, whoami)
	scopeProject                         // the caller's own project
	scopeOwned                           // an agent the caller created (or one of theirs)
	scopeOwnedSelf                       // the same, or the caller itself (reads)
)

// agentRoutes are the routes an agent's credential may use; every other
// one is the user's alone.
var agentRoutes = map[string]agentScope{
	"GET /v1/engine":                                     scopeAny,
	"GET /v1/whoami":                                     scopeAny,
	"POST /v1/hooks/claude":                              scopeAny, // the caller's own hooks
	"GET /v1/projects":                                   scopeAny, // filtered to its project
	"GET /v1/engine/processes":                           scopeAny, // filtered
	"GET /v1/engine/processes/{project}/{agent}":         scopeOwnedSelf,
	"GET /v1/projects/{project}":                         scopeProject,
	"GET /v1/projects/{project}/agents":                  scopeProject, // filtered
	"POST /v1/projects/{project}/agents":                 scopeProject,
	"GET /v1/projects/{project}/agents/{agent}":          scopeOwnedSelf,
	"GET /v1/projects/{project}/agents/{agent}/log":      scopeOwnedSelf,
	"GET /v1/projects/{project}/agents/{agent}/stats":    scopeOwnedSelf,
	"DELETE /v1/projects/{project}/agents/{agent}":       scopeOwned,
	"PUT /v1/projects/{project}/agents/{agent}":          scopeOwned,
	"POST /v1/projects/{project}/agents/{agent}/start":   scopeOwned,
	"POST /v1/projects/{project}/agents/{agent}/stop":    scopeOwned,
	"POST /v1/projects/{project}/agents/{agent}/resume":  scopeOwned,
	"POST /v1/projects/{project}/agents/{agent}/pause":   scopeOwned,
	"POST /v1/projects/{project}/agents/{agent}/unpause": scopeOwned,
}

// allow checks an agent caller against the route; it writes the refusal
// and returns false when the agent may not. Another agent's or the user's
// agent reads as not found: an agent learns nothing of what is not its own.
func (h *handler) allow(w http.ResponseWriter, r *http.Request, pattern string, c Caller) bool {
	if c.User {
		return true
	}
	me := *c.Agent
	scope, ok := agentRoutes[pattern]
	if !ok {
		writeError(w, http.StatusForbidden, supervisor.KindName(supervisor.ErrPermissionDenied),
			fmt.Sprintf("agent '%s' cannot %s %s: only the user can (an agent's credential acts on the agents it created)", me.AgentID, r.Method, r.URL.Path))
		return false
	}
	p, a := r.PathValue("project"), r.PathValue("agent")
	if scope != scopeAny && p != me.ProjectID {
		writeError(w, http.StatusNotFound, supervisor.KindName(supervisor.ErrProjectNotFound),
			fmt.Sprintf("Project '%s' not found", p))
		return false
	}
	if scope == scopeOwned || scope == scopeOwnedSelf {
		target := supervisor.AgentRef{ProjectID: p, AgentID: a}
		if a == me.AgentID && scope == scopeOwnedSelf {
			return true
		}
		if !h.ids.Owns(me, target) {
			if a == me.AgentID {
				writeError(w, http.StatusForbidden, supervisor.KindName(supervisor.ErrPermissionDenied),
					fmt.Sprintf("agent '%s' cannot %s itself: only the user can", me.AgentID, verbOf(pattern)))
				return false
			}
			writeError(w, http.StatusNotFound, supervisor.KindName(supervisor.ErrNotFound),
				fmt.Sprintf("Process '%s' not found", a))
			return false
		}
	}
	return true
}

func verbOf(pattern string) string {
	switch {
	case strings.HasPrefix(pattern, "DELETE"):
		return "remove"
	case strings.HasPrefix(pattern, "PUT"):
		return "edit"
	}
	if i := strings.LastIndexByte(pattern, '/'); i >= 0 {
		return pattern[i+1:]
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

func (h *handler) whoami(w http.ResponseWriter, r *http.Request) {
	c := CallerOf(r)
	if c.User {
		writeJSON(w, http.StatusOK, Whoami{User: true})
		return
	}
	writeJSON(w, http.StatusOK, Whoami{ProjectID: c.Agent.ProjectID, AgentID: c.Agent.AgentID})
}

func withCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}
