package api_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"shepherd/backend/api"
	"shepherd/backend/supervisor"
)

// fuzzRoutes are the requests that take a body, each with the one engine
// method that changes state when the request is accepted.
var fuzzRoutes = []struct {
	method, target, mutator string
}{
	{"POST", "/v1/projects", "AddProject"},
	{"POST", "/v1/projects/p1/agents", "CreateAgent"},
	{"PUT", "/v1/projects/p1/agents/a1", "UpdateAgent"},
	{"PUT", "/v1/projects/p1/settings", "PutSettings"},
	{"POST", "/v1/projects/p1/agents/a1/stop", "StopAgent"},
}

// readOnly are the engine methods that change nothing; a refused request
// may have called these and no others.
var readOnly = []string{"Projects", "ListAgents", "GetAgent", "GetSettings", "LogTail", "Events", "AllAgents"}

// FuzzRequestBody sends arbitrary bodies to the endpoints that read one. The
// engine never fails here, so every answer is the handler's own: 2xx, or a
// 4xx in the error shape with a message, after which nothing was changed.
// Seeds are in testdata/fuzz/FuzzRequestBody (route index, body).
func FuzzRequestBody(f *testing.F) {
	eng := newFake(f.TempDir())
	h := api.New(eng, token, api.Options{Version: "fuzz"})
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		rt := fuzzRoutes[int(route)%len(fuzzRoutes)]
		eng.mu.Lock()
		eng.calls, eng.specs, eng.grace = nil, nil, nil
		eng.mu.Unlock()

		req := httptest.NewRequest(rt.method, rt.target, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)

		eng.mu.Lock()
		calls := slices.Clone(eng.calls)
		specs := slices.Clone(eng.specs)
		grace := eng.grace
		eng.mu.Unlock()
		var changed []string
		for _, c := range calls {
			if !slices.Contains(readOnly, c) {
				changed = append(changed, c)
			}
		}

		switch {
		case w.Code >= 400 && w.Code < 500:
			errorBody(t, w)
			if len(changed) != 0 {
				t.Fatalf("%s %s %q: %d, but the engine was asked to change state: %v",
					rt.method, rt.target, body, w.Code, changed)
			}
			return
		case w.Code < 200 || w.Code >= 300:
			t.Fatalf("%s %s %q: status %d: %s", rt.method, rt.target, body, w.Code, w.Body)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%s %s %q: answer is not JSON: %q", rt.method, rt.target, body, w.Body)
		}
		if !slices.Equal(changed, []string{rt.mutator}) {
			t.Fatalf("%s %s %q: accepted, and the engine was asked %v, want [%s]",
				rt.method, rt.target, body, changed, rt.mutator)
		}
		// What the engine was given is what was asked for. (The handler
		// trims Unicode white space around the body, more than JSON's.)
		body = bytes.TrimSpace(body)
		switch rt.mutator {
		case "CreateAgent", "UpdateAgent":
			if len(specs) != 1 {
				t.Fatalf("engine got %d specs", len(specs))
			}
			// The ranges of the seconds are the engine's to check (it
			// refuses with ErrValidation, a 400); the handler passes on
			// exactly what was sent.
			s := specs[0]
			var in supervisor.AgentSpec
			if err := json.Unmarshal(body, &in); err != nil {
				t.Fatalf("accepted %q, which does not decode: %v", body, err)
			}
			if rt.mutator == "UpdateAgent" {
				if in.ID != "" && in.ID != "a1" {
					t.Fatalf("accepted %q, whose id is not the path's", body)
				}
				in.ID = "a1"
			}
			if b1, b2 := mustMarshal(t, in), mustMarshal(t, s); !bytes.Equal(b1, b2) {
				t.Fatalf("body %q reached the engine as %s", body, b2)
			}
		case "StopAgent":
			var in api.StopInput
			if len(body) > 0 {
				if err := json.Unmarshal(body, &in); err != nil {
					t.Fatalf("accepted %q, which does not decode: %v", body, err)
				}
			}
			switch {
			case in.GraceSec == nil && grace != nil:
				t.Fatalf("no graceSec in %q, but the engine got a grace of %v", body, *grace)
			case in.GraceSec != nil && (grace == nil || *grace < 0 || *grace/time.Second != time.Duration(*in.GraceSec)):
				t.Fatalf("graceSec %d in %q reached the engine as %v", *in.GraceSec, body, grace)
			}
		}
	})
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// queryRoutes are requests whose query parameters the API parses (huma's
// parsing, with the engine's words for a refusal).
var queryRoutes = []struct{ method, path string }{
	{"GET", "/v1/projects/p1/agents/a1/log"},
	{"GET", "/v1/projects/p1/events"},
	{"DELETE", "/v1/projects/p1/agents/a1"},
	{"GET", "/v1/projects/p1/agents"},
	{"GET", "/v1/engine/processes"},
	{"DELETE", "/v1/projects/p1"},
}

// FuzzQuery sends arbitrary query strings to the operations that take
// parameters: every answer is 2xx, or a 4xx in the error shape with a
// message; never a 5xx or a panic.
func FuzzQuery(f *testing.F) {
	for _, q := range []string{"tail=5", "since=14", "since=-1", "tail=ten", "limit=3&agent=a1", "force=please",
		"worktree=trash", "worktree=merge&message=x", "deleteLog=1&force=t", "stats=true", "since=", "%zz", "a=1&a=2",
		"since=99999999999999999999", "tail=1e3", "reveal=maybe"} {
		for i := range queryRoutes {
			f.Add(uint8(i), q)
		}
	}
	eng := &wtFake{fakeEngine: newFake(f.TempDir())}
	h := api.New(eng, token, api.Options{Version: "fuzz"})
	f.Fuzz(func(t *testing.T, route uint8, query string) {
		rt := queryRoutes[int(route)%len(queryRoutes)]
		req := httptest.NewRequest(rt.method, rt.path, nil)
		req.URL.RawQuery = query
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch {
		case w.Code >= 400 && w.Code < 500:
			errorBody(t, w)
		case w.Code < 200 || w.Code >= 300:
			t.Fatalf("%s %s?%s: status %d: %s", rt.method, rt.path, query, w.Code, w.Body)
		}
	})
}
