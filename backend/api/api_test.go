package api_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"shepherd/backend/api"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

const token = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func newHandler(t *testing.T) (http.Handler, *fakeEngine) {
	t.Helper()
	f := newFake(t.TempDir())
	return api.New(f, token, api.Options{Version: "test"}), f
}

// do sends one request through the handler with the right token.
func do(t *testing.T, h http.Handler, method, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	return doAuth(t, h, method, target, body, "Bearer "+token)
}

func doAuth(t *testing.T, h http.Handler, method, target, body, auth string) *httptest.ResponseRecorder {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func errorBody(t *testing.T, w *httptest.ResponseRecorder) api.ErrorBody {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error answer Content-Type = %q, want application/json (body %q)", ct, w.Body.String())
	}
	var raw map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &raw); err != nil {
		t.Fatalf("error answer is not JSON: %v: %q", err, w.Body.String())
	}
	if len(raw) != 2 {
		t.Fatalf("error answer has fields %v, want exactly error and message", raw)
	}
	var eb api.ErrorBody
	_ = json.Unmarshal(w.Body.Bytes(), &eb)
	if eb.Error == "" || eb.Message == "" {
		t.Fatalf("error answer %q lacks error or message", w.Body.String())
	}
	return eb
}

// Every request without the right bearer token is refused with 401 and the
// error shape, before any route or engine method is looked at.
func TestAuth(t *testing.T) {
	for _, tc := range []struct{ name, auth string }{
		{"no header", ""},
		{"wrong token", "Bearer " + strings.Repeat("f", 64)},
		{"token prefix", "Bearer " + token[:10]},
		{"token plus more", "Bearer " + token + "0"},
		{"wrong scheme", "Basic " + token},
		{"no scheme", token},
		{"empty bearer", "Bearer "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, f := newHandler(t)
			for _, r := range []struct{ method, target, body string }{
				{"GET", "/v1/projects", ""},
				{"POST", "/v1/projects/p1/agents", `{"id":"x","command":"true"}`},
				{"DELETE", "/v1/projects/p1/agents/a1?force=true", ""},
				{"GET", "/v1/engine/processes", ""},
				{"GET", "/no/such/route", ""},
			} {
				w := doAuth(t, h, r.method, r.target, r.body, tc.auth)
				if w.Code != http.StatusUnauthorized {
					t.Fatalf("%s %s: status %d, want 401", r.method, r.target, w.Code)
				}
				if eb := errorBody(t, w); eb.Error != "Unauthorized" {
					t.Fatalf("error = %q, want Unauthorized", eb.Error)
				}
				if w.Header().Get("WWW-Authenticate") == "" {
					t.Fatalf("401 without WWW-Authenticate")
				}
			}
			if len(f.calls) != 0 {
				t.Fatalf("engine was called without authorisation: %v", f.calls)
			}
		})
	}
	t.Run("right token, scheme in any case", func(t *testing.T) {
		h, _ := newHandler(t)
		if w := doAuth(t, h, "GET", "/v1/engine", "", "bearer "+token); w.Code != http.StatusOK {
			t.Fatalf("status %d, want 200: %s", w.Code, w.Body)
		}
	})
}

// Each error kind of the engine gets its status code, and the body is
// {"error": <kind name>, "message": <the engine's message>}.
func TestErrorKinds(t *testing.T) {
	want := map[error]int{
		supervisor.ErrValidation:         400,
		supervisor.ErrNotFound:           404,
		supervisor.ErrProjectNotFound:    404,
		supervisor.ErrAlreadyExists:      409,
		supervisor.ErrAlreadyRunning:     409,
		supervisor.ErrNotRunning:         409,
		supervisor.ErrIsRunning:          409,
		supervisor.ErrTransition:         409,
		supervisor.ErrNotResumable:       409,
		supervisor.ErrNotPaused:          409,
		supervisor.ErrProjectHasAgents:   409,
		supervisor.ErrStartFailed:        422,
		supervisor.ErrPermissionDenied:   403,
		supervisor.ErrSandboxUnavailable: 422,
		supervisor.ErrStopFailed:         500,
		supervisor.ErrEngineLocked:       500,
		supervisor.ErrWorktreeDirty:      409,
		supervisor.ErrMergeConflict:      409,
		supervisor.ErrWorktree:           422,
		supervisor.ErrTooMany:            429,
	}
	for _, kind := range supervisor.Kinds {
		if _, ok := want[kind]; !ok {
			t.Errorf("kind %v has no expected status in this test", kind)
		}
	}
	type tc struct {
		name   string
		err    error
		status int
		kind   string
	}
	var cases []tc
	for kind, status := range want {
		cases = append(cases, tc{kind.Error(), &supervisor.Error{Kind: kind, Message: "message of " + kind.Error()},
			status, kind.Error()})
	}
	cases = append(cases,
		tc{"wrapped twice", errorsJoin(&supervisor.Error{Kind: supervisor.ErrNotFound, Message: "Process 'x' not found"}),
			404, "ProcessNotFound"},
		tc{"unknown error", errors.New("disk on fire"), 500, "InternalError"},
	)
	endpoints := []struct{ method, target, body string }{
		{"POST", "/v1/projects", `{"path":"/tmp/x"}`},
		{"POST", "/v1/projects/p1/select", ""},
		{"GET", "/v1/projects/p1/agents", ""},
		{"POST", "/v1/projects/p1/agents", `{"id":"x","command":"true"}`},
		{"GET", "/v1/projects/p1/agents/a1", ""},
		{"DELETE", "/v1/projects/p1/agents/a1", ""},
		{"POST", "/v1/projects/p1/agents/a1/start", ""},
		{"POST", "/v1/projects/p1/agents/a1/stop", ""},
		{"POST", "/v1/projects/p1/stop-all", ""},
		{"GET", "/v1/projects/p1/agents/a1/log?tail=5", ""},
		{"GET", "/v1/projects/p1/events", ""},
		{"GET", "/v1/engine/processes/p9/zz", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, f := newHandler(t)
			f.err = c.err
			for _, ep := range endpoints {
				w := do(t, h, ep.method, ep.target, ep.body)
				if w.Code != c.status {
					t.Fatalf("%s %s: status %d, want %d (%s)", ep.method, ep.target, w.Code, c.status, w.Body)
				}
				got := errorBody(t, w)
				wantBody := api.ErrorBody{Error: c.kind, Message: c.err.Error()}
				if diff := cmp.Diff(wantBody, got); diff != "" {
					t.Fatalf("%s %s: body (-want +got):\n%s", ep.method, ep.target, diff)
				}
			}
		})
	}
}

func errorsJoin(err error) error { return errors.Join(err) }

// A request the handler cannot read is refused with 400 (413 when too big)
// and a message that says what was wrong, and the engine is never asked to
// change anything.
func TestMalformedRequests(t *testing.T) {
	cases := []struct {
		name, method, target, body string
		status                     int
		msg                        string // part of the message
	}{
		{"create: not JSON", "POST", "/v1/projects/p1/agents", `id=x`, 400, "malformed JSON"},
		{"create: cut short", "POST", "/v1/projects/p1/agents", `{"id":"x","command":`, 400, "malformed JSON"},
		{"create: bad syntax", "POST", "/v1/projects/p1/agents", `{"id":"x",,}`, 400, "malformed JSON at byte"},
		{"create: unknown field", "POST", "/v1/projects/p1/agents", `{"id":"x","command":"true","comand":"y"}`, 400, `unknown field "comand"`},
		{"create: record-only field", "POST", "/v1/projects/p1/agents", `{"id":"x","command":"true","status":"running"}`, 400, `unknown field "status"`},
		{"create: number as string", "POST", "/v1/projects/p1/agents", `{"id":"x","command":"true","timeoutSec":"10"}`, 400, `field "timeoutSec" has the wrong type`},
		{"create: args not a list", "POST", "/v1/projects/p1/agents", `{"id":"x","command":"true","args":"-l"}`, 400, `field "args" has the wrong type`},
		{"create: env not an object", "POST", "/v1/projects/p1/agents", `{"id":"x","command":"true","env":["A=1"]}`, 400, `field "env" has the wrong type`},
		{"create: bool as string", "POST", "/v1/projects/p1/agents", `{"id":"x","command":"true","keepAlive":"yes"}`, 400, `field "keepAlive" has the wrong type`},
		{"create: id a number", "POST", "/v1/projects/p1/agents", `{"id":7,"command":"true"}`, 400, `field "id" has the wrong type`},
		{"create: empty body", "POST", "/v1/projects/p1/agents", ``, 400, "body is empty"},
		{"create: null", "POST", "/v1/projects/p1/agents", `null`, 400, "must be a JSON object"},
		{"create: array", "POST", "/v1/projects/p1/agents", `[{"id":"x","command":"true"}]`, 400, "must be a JSON object"},
		{"create: two objects", "POST", "/v1/projects/p1/agents", `{"id":"x","command":"true"}{"id":"y"}`, 400, "after the object"},
		{"create: negative timeout", "POST", "/v1/projects/p1/agents", `{"id":"x","command":"true","timeoutSec":-1}`, 400, "negative"},
		{"create: too big", "POST", "/v1/projects/p1/agents", `{"id":"` + strings.Repeat("x", 2<<20) + `"}`, 413, "larger than"},
		{"project: no path", "POST", "/v1/projects", `{"name":"x"}`, 400, `"path" is required`},
		{"project: unknown field", "POST", "/v1/projects", `{"path":"/tmp","colour":"red"}`, 400, `unknown field "colour"`},
		{"project: path a number", "POST", "/v1/projects", `{"path":1}`, 400, `field "path" has the wrong type`},
		{"stop: grace as string", "POST", "/v1/projects/p1/agents/a1/stop", `{"graceSec":"5"}`, 400, `field "graceSec" has the wrong type`},
		{"stop: grace negative", "POST", "/v1/projects/p1/agents/a1/stop", `{"graceSec":-5}`, 400, "negative"},
		{"stop: grace over an hour", "POST", "/v1/projects/p1/agents/a1/stop", `{"graceSec":3601}`, 400, "graceSec must be between 0 and 3600, not 3601"},
		{"stop: unknown field", "POST", "/v1/projects/p1/agents/a1/stop", `{"grace":5}`, 400, `unknown field "grace"`},
		{"stop: broken JSON", "POST", "/v1/projects/p1/agents/a1/stop", `{"graceSec":`, 400, "malformed JSON"},
		{"start: unexpected field", "POST", "/v1/projects/p1/agents/a1/start", `{"force":true}`, 400, `unknown field "force"`},
		{"stop-all: broken JSON", "POST", "/v1/projects/p1/stop-all", `{`, 400, "malformed JSON"},
		{"select: broken JSON", "POST", "/v1/projects/p1/select", `nope`, 400, "malformed JSON"},
		{"select: a string", "POST", "/v1/projects/p1/select", `"p2"`, 400, "must be a JSON object"},
		{"delete: force not a bool", "DELETE", "/v1/projects/p1/agents/a1?force=please", ``, 400, "force"},
		{"delete: deleteLog not a bool", "DELETE", "/v1/projects/p1/agents/a1?force=true&deleteLog=2", ``, 400, "deleteLog"},
		{"log: tail not a number", "GET", "/v1/projects/p1/agents/a1/log?tail=ten", ``, 400, "tail"},
		{"log: tail negative", "GET", "/v1/projects/p1/agents/a1/log?tail=-3", ``, 400, "tail"},
		{"log: since not a number", "GET", "/v1/projects/p1/agents/a1/log?since=x", ``, 400, "since"},
	}
	mutating := []string{"AddProject", "CreateAgent", "StartAgent", "StopAgent", "StopAll", "RemoveAgent", "SelectProject", "LogTail"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, f := newHandler(t)
			w := do(t, h, tc.method, tc.target, tc.body)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			eb := errorBody(t, w)
			if eb.Error != "ValidationError" {
				t.Errorf("error = %q, want ValidationError", eb.Error)
			}
			if !strings.Contains(eb.Message, tc.msg) {
				t.Errorf("message %q does not say %q", eb.Message, tc.msg)
			}
			for _, m := range mutating {
				if f.called(m) {
					t.Errorf("engine %s was called for a malformed request", m)
				}
			}
		})
	}
}

// Every endpoint, with a well-formed request, reaches the engine with the
// right arguments and answers with the right status and content type.
func TestEndpoints(t *testing.T) {
	h, f := newHandler(t)

	w := do(t, h, "GET", "/v1/engine", "")
	var st api.EngineStatus
	mustJSON(t, w, 200, &st)
	if st.PID != os.Getpid() || st.Version != "test" {
		t.Errorf("engine status = %+v", st)
	}

	var ps []store.Project
	mustJSON(t, do(t, h, "GET", "/v1/projects", ""), 200, &ps)
	if len(ps) != 1 || ps[0].ID != "p1" {
		t.Errorf("projects = %+v", ps)
	}

	var p store.Project
	mustJSON(t, do(t, h, "POST", "/v1/projects", `{"path":"/tmp/demo","name":"Demo"}`), 201, &p)
	if p.Path != "/tmp/demo" || p.Name != "Demo" {
		t.Errorf("added project = %+v", p)
	}
	f.created = false
	mustJSON(t, do(t, h, "POST", "/v1/projects", `{"path":"/tmp/demo"}`), 200, &p)

	var sum supervisor.SyncSummary
	mustJSON(t, do(t, h, "POST", "/v1/projects/p1/select", ""), 200, &sum)
	if sum.ProjectID != "p1" || sum.Counts["reattached"] != 1 {
		t.Errorf("summary = %+v", sum)
	}
	mustJSON(t, do(t, h, "POST", "/v1/projects/p1/select", "{}"), 200, &sum)

	var recs []*store.Record
	mustJSON(t, do(t, h, "GET", "/v1/projects/p1/agents", ""), 200, &recs)
	if len(recs) != 1 || recs[0].ID != "a1" {
		t.Errorf("agents = %+v", recs)
	}

	var rec store.Record
	body := `{"id":"b2","command":"sleep","args":["1"],"env":{"A":"1"},"cwd":"/tmp","profile":"generic",
		"resumeArgs":["--resume","{sessionId}"],"keepAlive":true,"autoStartOnRestore":true,"timeoutSec":5,
		"graceSec":2,"staleCheck":false,"name":"B"}`
	mustJSON(t, do(t, h, "POST", "/v1/projects/p1/agents", body), 201, &rec)
	wantSpec := supervisor.AgentSpec{ID: "b2", Name: "B", Command: "sleep", Args: []string{"1"},
		Env: map[string]string{"A": "1"}, Cwd: "/tmp", Profile: "generic",
		ResumeArgs: []string{"--resume", "{sessionId}"}, KeepAlive: true, AutoStartOnRestore: true,
		TimeoutSec: 5, GraceSec: 2, StaleCheck: store.Ptr(false)}
	if diff := cmp.Diff(wantSpec, f.specs[0]); diff != "" {
		t.Errorf("spec given to the engine (-want +got):\n%s", diff)
	}

	mustJSON(t, do(t, h, "GET", "/v1/projects/p1/agents/a1", ""), 200, &rec)
	if rec.ID != "a1" {
		t.Errorf("get = %+v", rec)
	}

	mustJSON(t, do(t, h, "POST", "/v1/projects/p1/agents/a1/start", ""), 200, &rec)
	if rec.PID != 99 {
		t.Errorf("start = %+v", rec)
	}

	mustJSON(t, do(t, h, "POST", "/v1/projects/p1/agents/a1/stop", ""), 200, &rec)
	if f.grace != nil {
		t.Errorf("stop without body passed grace %v, want nil (the agent's own)", *f.grace)
	}
	mustJSON(t, do(t, h, "POST", "/v1/projects/p1/agents/a1/stop", `{}`), 200, &rec)
	if f.grace != nil {
		t.Errorf("stop with {} passed grace %v, want nil", *f.grace)
	}
	mustJSON(t, do(t, h, "POST", "/v1/projects/p1/agents/a1/stop", `{"graceSec":3}`), 200, &rec)
	if f.grace == nil || *f.grace != 3*time.Second {
		t.Errorf("stop grace = %v, want 3s", f.grace)
	}
	mustJSON(t, do(t, h, "POST", "/v1/projects/p1/agents/a1/stop", `{"graceSec":0}`), 200, &rec)
	if f.grace == nil || *f.grace != 0 {
		t.Errorf("stop grace = %v, want 0 (SIGKILL at once)", f.grace)
	}

	var res []supervisor.StopResult
	mustJSON(t, do(t, h, "POST", "/v1/projects/p1/stop-all", ""), 200, &res)
	if len(res) != 1 {
		t.Errorf("stop-all = %+v", res)
	}

	var rm api.Removed
	mustJSON(t, do(t, h, "DELETE", "/v1/projects/p1/agents/a1", ""), 200, &rm)
	if f.force || f.delLog || !rm.Removed || rm.AgentID != "a1" {
		t.Errorf("remove: force=%v deleteLog=%v answer %+v", f.force, f.delLog, rm)
	}
	mustJSON(t, do(t, h, "DELETE", "/v1/projects/p1/agents/a1?force=true&deleteLog=true", ""), 200, &rm)
	if !f.force || !f.delLog || !rm.LogDeleted {
		t.Errorf("remove: force=%v deleteLog=%v answer %+v", f.force, f.delLog, rm)
	}

	w = do(t, h, "GET", "/v1/projects/p1/agents/a1/log?tail=1", "")
	if w.Code != 200 || w.Body.String() != "three\n" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		t.Errorf("log tail: %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	if f.tailN != 1 {
		t.Errorf("tail n = %d, want 1", f.tailN)
	}
	if got := w.Header().Get(api.HeaderLogOffset); got != "14" {
		t.Errorf("log offset header = %q, want 14 (the log's size)", got)
	}
	do(t, h, "GET", "/v1/projects/p1/agents/a1/log", "")
	if f.tailN != 0 {
		t.Errorf("tail n without ?tail = %d, want 0 (whole log)", f.tailN)
	}

	w = do(t, h, "GET", "/v1/projects/p1/agents/a1/log?since=4", "")
	if w.Code != 200 || w.Body.String() != "two\nthree\n" || w.Header().Get(api.HeaderLogOffset) != "14" {
		t.Errorf("log since 4: %d %q offset %q", w.Code, w.Body, w.Header().Get(api.HeaderLogOffset))
	}
	w = do(t, h, "GET", "/v1/projects/p1/agents/a1/log?since=14", "")
	if w.Code != 200 || w.Body.Len() != 0 || w.Header().Get(api.HeaderLogOffset) != "14" {
		t.Errorf("log since end: %d %q offset %q", w.Code, w.Body, w.Header().Get(api.HeaderLogOffset))
	}
	w = do(t, h, "GET", "/v1/projects/p1/agents/a1/log?since=999", "")
	if w.Body.String() != "one\ntwo\nthree\n" {
		t.Errorf("log since past the end (log started again) = %q, want the whole log", w.Body)
	}

	w = do(t, h, "GET", "/v1/projects/p1/events", "")
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/x-ndjson" ||
		!strings.Contains(w.Body.String(), `"agentId":"a1"`) {
		t.Errorf("events: %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	f.events = f.events + ".missing"
	w = do(t, h, "GET", "/v1/projects/p1/events", "")
	if w.Code != 200 || w.Body.Len() != 0 {
		t.Errorf("events of a project without events: %d %q", w.Code, w.Body)
	}

	mustJSON(t, do(t, h, "GET", "/v1/engine/processes", ""), 200, &recs)
	if len(recs) != 1 || recs[0].ProjectID != "p1" || recs[0].LogPath == "" {
		t.Errorf("processes = %+v", recs)
	}
	mustJSON(t, do(t, h, "GET", "/v1/engine/processes/p1/a1", ""), 200, &rec)
	if rec.ID != "a1" || rec.LogPath == "" {
		t.Errorf("process = %+v", rec)
	}
	w = do(t, h, "GET", "/v1/engine/processes/p1/nope", "")
	if eb := errorBody(t, w); w.Code != 404 || eb.Error != "ProcessNotFound" || eb.Message != "Process 'nope' not found" {
		t.Errorf("missing process: %d %+v", w.Code, eb)
	}
}

// Empty lists are [] for scripts, never null.
func TestEmptyListsAreArrays(t *testing.T) {
	h, f := newHandler(t)
	f.projects, f.agents = nil, nil
	for _, target := range []string{"/v1/projects", "/v1/projects/p1/agents", "/v1/engine/processes"} {
		w := do(t, h, "GET", target, "")
		if strings.TrimSpace(w.Body.String()) != "[]" {
			t.Errorf("%s = %q, want []", target, w.Body)
		}
	}
}

// Unknown paths and wrong methods answer in the API's error shape.
func TestNoRoute(t *testing.T) {
	h, f := newHandler(t)
	w := do(t, h, "GET", "/v1/nothing", "")
	if eb := errorBody(t, w); w.Code != 404 || eb.Error != "NotFound" {
		t.Errorf("unknown path: %d %+v", w.Code, eb)
	}
	w = do(t, h, "PATCH", "/v1/projects/p1/agents/a1", `{}`)
	if eb := errorBody(t, w); w.Code != 405 || eb.Error != "MethodNotAllowed" {
		t.Errorf("wrong method: %d %+v", w.Code, eb)
	}
	if allow := w.Header().Get("Allow"); !strings.Contains(allow, "DELETE") || !strings.Contains(allow, "GET") {
		t.Errorf("Allow = %q", allow)
	}
	if len(f.calls) != 0 {
		t.Errorf("engine called: %v", f.calls)
	}
}

func mustJSON(t *testing.T, w *httptest.ResponseRecorder, status int, out any) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d: %s", w.Code, status, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q", ct)
	}
	if err := json.Unmarshal(w.Body.Bytes(), out); err != nil {
		t.Fatalf("answer is not the expected JSON: %v: %s", err, w.Body)
	}
}

// runsFake is an engine that knows its agents' runs.
type runsFake struct{ *fakeEngine }

func (f runsFake) Runs(projectID, agentID string) ([]supervisor.Run, error) {
	if err := f.call("Runs"); err != nil {
		return nil, err
	}
	code := 3
	return []supervisor.Run{{N: 1, Reason: "start", End: "failed", ExitCode: &code}}, nil
}

// GET …/runs answers the engine's runs of the agent, with its errors; an
// engine without runs answers as if there were no such endpoint.
func TestListRuns(t *testing.T) {
	f := runsFake{newFake(t.TempDir())}
	h := api.New(f, token, api.Options{Version: "test"})
	var runs []supervisor.Run
	mustJSON(t, do(t, h, "GET", "/v1/projects/p1/agents/a1/runs", ""), 200, &runs)
	if len(runs) != 1 || runs[0].N != 1 || *runs[0].ExitCode != 3 || !f.called("Runs") {
		t.Fatalf("runs = %+v", runs)
	}
	f.err = &supervisor.Error{Kind: supervisor.ErrNotFound, Message: "Process 'a1' not found"}
	if w := do(t, h, "GET", "/v1/projects/p1/agents/a1/runs", ""); w.Code != 404 || errorBody(t, w).Error != "ProcessNotFound" {
		t.Fatalf("unknown agent: %d %s", w.Code, w.Body)
	}
	plain, _ := newHandler(t)
	if w := do(t, plain, "GET", "/v1/projects/p1/agents/a1/runs", ""); w.Code != 404 || errorBody(t, w).Error != "NotFound" {
		t.Fatalf("an engine without runs: %d %s", w.Code, w.Body)
	}
}
