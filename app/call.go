package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"shepherd/backend/api"
)

// Call is the window's one door to the engine: it calls the engine's
// operation operationID (backend/api/openapi.json names them) with its
// parameters by name — path, query and header ones alike — and its JSON
// body, and answers the operation's answer: its JSON (an NDJSON answer as
// an array, a text answer as a string). The window is the user's own
// client: secret values come as they are, and it masks them itself. A
// refused call rejects with the JSON of the error, {"error", "message",
// "status"}, which the frontend's client turns back into an error. The body
// comes as JSON text ("": none).
func (a *App) Call(operationID string, params map[string]any, body string) (any, error) {
	// "host" names the machine to call — except for the hosts' own
	// operations, always this computer's, whose "host" is the host they are
	// about (getHost, removeHost).
	host, explicit := params["host"].(string)
	if !localOps[operationID] {
		delete(params, "host")
	}
	c, err := a.callClient(operationID, host, explicit)
	if err != nil {
		return nil, &CallError{Name: "EngineUnavailable", Message: err.Error()}
	}
	ps := map[string]string{}
	for k, v := range params {
		switch x := v.(type) {
		case nil:
		case string:
			ps[k] = x
		case bool:
			ps[k] = strconv.FormatBool(x)
		case float64:
			ps[k] = strconv.FormatFloat(x, 'f', -1, 64)
		default:
			ps[k] = fmt.Sprint(x)
		}
	}
	var b []byte
	if t := strings.TrimSpace(body); t != "" && t != "null" {
		b = []byte(t)
	}
	a.beforeCall(operationID, ps)
	resp, err := c.CallByID(context.Background(), operationID, ps, b, api.Reveal(true))
	if err != nil {
		if ae, ok := err.(*api.Error); ok {
			return nil, &CallError{Status: ae.Status, Name: ae.Name, Message: ae.Message}
		}
		return nil, &CallError{Name: "EngineUnavailable", Message: err.Error()}
	}
	return answerOf(resp), nil
}

// CallError is a refused call; its text is its JSON.
type CallError struct {
	Status  int    `json:"status,omitempty"`
	Name    string `json:"error"`
	Message string `json:"message"`
}

func (e *CallError) Error() string {
	b, _ := json.Marshal(e)
	return string(b)
}

// answerOf is an answer as the window takes it.
func answerOf(resp *api.Response) any {
	ct := resp.Header.Get("Content-Type")
	body := bytes.TrimSpace(resp.Body)
	switch {
	case strings.HasPrefix(ct, "application/x-ndjson"):
		lines := []json.RawMessage{}
		for _, l := range bytes.Split(body, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 && json.Valid(l) {
				lines = append(lines, json.RawMessage(l))
			}
		}
		return lines
	case strings.HasPrefix(ct, "application/json") && len(body) > 0:
		return json.RawMessage(body)
	case len(body) == 0:
		return nil
	}
	return string(resp.Body)
}

// beforeCall stops following the logs of what a call removes.
func (a *App) beforeCall(operationID string, params map[string]string) {
	switch operationID {
	case api.RemoveAgent.ID:
		a.Logs.hub().Unfollow(params["project"], params["agent"])
	case api.RemoveProject.ID:
		a.Logs.unfollowProject(params["project"])
	}
}
