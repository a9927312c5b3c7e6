package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"shepherd/backend/logfollow"
	"shepherd/backend/sandbox"
	"shepherd/backend/supervisor"
	"shepherd/backend/workspace"
)

// The description of the API, OpenAPI 3.1: made from the operations, checked
// in as openapi.json (go generate ./backend/api writes it; a test fails when
// it is not what the operations say), served at GET /v1/openapi.json, and
// the source of the window's TypeScript types.

func description() *huma.OpenAPI {
	return &huma.OpenAPI{
		OpenAPI: "3.1.0",
		Info: &huma.Info{Title: "Shepherd engine API", Version: "1",
			Description: "The engine's HTTP API, on loopback. Every request carries `Authorization: Bearer <token>`: the user's " +
				"token (engine.json) may do everything; an agent's own credential only what its operation's " +
				"`" + AccessExtension + "` allows — `any`, `project` (its own project), `owned` (an agent it created, or one of " +
				"theirs), `owned-or-self` (the same, or itself); `user` is the user's alone. Errors are " +
				"`{\"error\": <kind>, \"message\": <words>}`; the event stream's payloads are the EventPayloads schema."},
		Components: &huma.Components{
			Schemas: registry(),
			SecuritySchemes: map[string]*huma.SecurityScheme{"bearer": {Type: "http", Scheme: "bearer",
				Description: "the user's token from engine.json, or an agent's own credential (SHEPHERD_AGENT_TOKEN)"}},
		},
		Security: []map[string][]string{{"bearer": {}}},
	}
}

// schemaNames name the types whose own names say too little out of their
// package.
var schemaNames = map[reflect.Type]string{
	reflect.TypeFor[apiError]():                "ErrorBody",
	reflect.TypeFor[logfollow.Batch]():         "LogBatch",
	reflect.TypeFor[sandbox.Support]():         "SandboxSupport",
	reflect.TypeFor[supervisor.StatsBatch]():   "StatsBatch",
	reflect.TypeFor[workspace.Status]():        "WorktreeStatus",
	reflect.TypeFor[workspace.Line]():          "DiffLine",
	reflect.TypeFor[workspace.Change]():        "WorktreeChange",
	reflect.TypeFor[workspace.ConflictError](): "MergeConflict",
}

func registry() huma.Registry {
	return huma.NewMapRegistry("#/components/schemas/", func(t reflect.Type, hint string) string {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if n, ok := schemaNames[t]; ok {
			return n
		}
		return huma.DefaultSchemaNamer(t, hint)
	})
}

// errorResponse documents the error shape.
func errorResponse(reg huma.Registry) *huma.Response {
	return &huma.Response{Description: "an error: its kind and what was wrong",
		Content: map[string]*huma.MediaType{"application/json": {Schema: reg.Schema(reflect.TypeFor[apiError](), true, "")}}}
}

// Spec is the description of the API, as openapi.json holds it.
func Spec() ([]byte, error) {
	h := &handler{}
	a := newAPI(h, http.NewServeMux())
	b, err := json.Marshal(a.OpenAPI())
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}
