package api

import (
	"net/http"
	"net/url"
)

// Commands is the engine's lookup of a command (*supervisor.Engine and
// *Remote have it): where a start would find it, with the engine's PATH —
// which a window attached to the engine does not share.
type Commands interface {
	LookPath(command, cwd string) (string, error)
}

// LookPathAnswer is the answer of GET /v1/commands/lookup.
type LookPathAnswer struct {
	Path string `json:"path"`
}

var _ Commands = (*Remote)(nil)

// commandRoutes are registered when the engine has Commands; the user's
// alone (not in agentRoutes).
func (h *handler) commandRoutes() {
	c, ok := h.eng.(Commands)
	if !ok {
		return
	}
	// GET /v1/commands/lookup?command=C&cwd=D: 200 {path}, or 400 when the
	// command is not found.
	h.handle("GET /v1/commands/lookup", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		p, err := c.LookPath(q.Get("command"), q.Get("cwd"))
		if err != nil {
			writeEngineError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, LookPathAnswer{Path: p})
	})
}

// LookPath asks the engine where a start would find command.
func (r *Remote) LookPath(command, cwd string) (string, error) {
	var a LookPathAnswer
	q := url.Values{"command": {command}, "cwd": {cwd}}
	return a.Path, r.call(bg, http.MethodGet, "/v1/commands/lookup?"+q.Encode(), nil, &a)
}
