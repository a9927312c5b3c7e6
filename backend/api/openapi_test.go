package api_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"shepherd/backend/api"
	"shepherd/backend/supervisor"
)

// The checked-in description is what the operations say: regenerate it
// (go generate ./backend/api) after changing an operation or a type it uses.
func TestOpenAPIUpToDate(t *testing.T) {
	want, err := api.Spec()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("openapi.json is not what the operations describe; run `go generate ./backend/api`:\n%s",
			cmp.Diff(string(want), string(got)))
	}
}

// GET /v1/openapi.json serves the same description, to any caller with a
// credential.
func TestOpenAPIServed(t *testing.T) {
	h, _ := newHandler(t)
	w := do(t, h, "GET", "/v1/openapi.json", "")
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d %q", w.Code, w.Header().Get("Content-Type"))
	}
	spec, _ := api.Spec()
	var a, b any
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(spec, &b)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the served description differs from Spec()")
	}
	if w := doAuth(t, h, "GET", "/v1/openapi.json", "", ""); w.Code != 401 {
		t.Fatalf("without a token: %d", w.Code)
	}
}

// Every operation is in the description once, with its access rule, and
// every route the server has is an operation.
func TestEveryOperationDescribed(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Access      string `json:"x-shepherd-access"`
		} `json:"paths"`
	}
	spec, _ := api.Spec()
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for path, methods := range doc.Paths {
		for method, op := range methods {
			info, ok := api.Lookup(op.OperationID)
			if !ok || info.Path != path || !strings.EqualFold(info.Method, method) {
				t.Errorf("%s %s: operation %q is not defined so (%+v)", method, path, op.OperationID, info)
			}
			if op.Access == "" || op.Access != string(info.Access) {
				t.Errorf("%s: access %q, defined %q", op.OperationID, op.Access, info.Access)
			}
			if seen[op.OperationID] {
				t.Errorf("operation id %q twice", op.OperationID)
			}
			seen[op.OperationID] = true
		}
	}
	if len(seen) != len(api.Operations()) {
		t.Errorf("%d operations described, %d defined", len(seen), len(api.Operations()))
	}
}

// The access rules are the ones the API had as a table of routes before
// they were a property of each operation: an agent's credential reaches
// exactly these, each with its scope; every other operation is the user's.
func TestAccessRules(t *testing.T) {
	want := map[string]api.Access{
		"GET /v1/engine":                                     api.AnyCaller,
		"GET /v1/whoami":                                     api.AnyCaller,
		"POST /v1/hooks/claude":                              api.AnyCaller,
		"GET /v1/projects":                                   api.AnyCaller,
		"GET /v1/engine/processes":                           api.AnyCaller,
		"GET /v1/openapi.json":                               api.AnyCaller,
		"GET /v1/engine/processes/{project}/{agent}":         api.OwnedOrSelf,
		"GET /v1/projects/{project}":                         api.InProject,
		"GET /v1/projects/{project}/agents":                  api.InProject,
		"POST /v1/projects/{project}/agents":                 api.InProject,
		"GET /v1/projects/{project}/agents/{agent}":          api.OwnedOrSelf,
		"GET /v1/projects/{project}/agents/{agent}/log":      api.OwnedOrSelf,
		"GET /v1/projects/{project}/agents/{agent}/stats":    api.OwnedOrSelf,
		"DELETE /v1/projects/{project}/agents/{agent}":       api.Owned,
		"PUT /v1/projects/{project}/agents/{agent}":          api.Owned,
		"POST /v1/projects/{project}/agents/{agent}/start":   api.Owned,
		"POST /v1/projects/{project}/agents/{agent}/stop":    api.Owned,
		"POST /v1/projects/{project}/agents/{agent}/resume":  api.Owned,
		"POST /v1/projects/{project}/agents/{agent}/pause":   api.Owned,
		"POST /v1/projects/{project}/agents/{agent}/unpause": api.Owned,
		// Answers: the agent's owner answers its questions, never the agent.
		"GET /v1/projects/{project}/agents/{agent}/questions":         api.Owned,
		"POST /v1/projects/{project}/agents/{agent}/questions/answer": api.Owned,
		"GET /v1/projects/{project}/agents/{agent}/rules":             api.Owned,
		"POST /v1/projects/{project}/agents/{agent}/rules":            api.Owned,
		"POST /v1/projects/{project}/agents/{agent}/rules/remove":     api.Owned,
		"PUT /v1/projects/{project}/agents/{agent}/answer-policy":     api.Owned,
		"POST /v1/projects/{project}/agents/{agent}/message":          api.Owned,
	}
	for _, op := range api.Operations() {
		route := op.Method + " " + op.Path
		rule, ok := want[route]
		if !ok {
			rule = api.UserOnly
		}
		if op.Access != rule {
			t.Errorf("%s (%s): access %q, want %q", route, op.ID, op.Access, rule)
		}
		delete(want, route)
	}
	for route := range want {
		t.Errorf("%s: no such operation", route)
	}
}

// Every event the engine pushes has its payload in the description.
func TestEventPayloadsDescribed(t *testing.T) {
	var names []string
	for i := 0; i < reflect.TypeFor[api.EventPayloads]().NumField(); i++ {
		name, _, _ := strings.Cut(reflect.TypeFor[api.EventPayloads]().Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	for _, ev := range []string{supervisor.EventAgentState, supervisor.EventProjectSynced, supervisor.EventAgentRemoved,
		supervisor.EventNotify, supervisor.EventProjectState, supervisor.EventWhileClosed, supervisor.EventAgentStats,
		supervisor.EventWorktree, supervisor.EventEngineAlerts, "agent:log", "engine:quit", "hello", "dropped", "reset"} {
		if !slices.Contains(names, ev) {
			t.Errorf("event %q has no payload in EventPayloads", ev)
		}
	}
}
