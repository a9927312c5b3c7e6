package api

import (
	"context"
	"net/http"
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// Every route of the API is an operation defined once, as an Op: its id,
// method, path, summary, who may call it and its typed input and output. The
// server routes, validates, checks access and documents from it (openapi.go);
// the Go client calls it with the same value (client.go), so no caller builds
// a URL. Input structs follow huma's conventions: fields tagged path:"…",
// query:"…" or header:"…" are parameters, a field named Body is the JSON
// body (a pointer: optional). Output structs have a Body (JSON, or []byte as
// it is), header-tagged fields and an optional Status.

// Access is who may call an operation: the user's token always; an agent's
// credential only where the rule says (SPEC, threat model). It is the
// operation's x-shepherd-access in the OpenAPI description.
type Access string

const (
	UserOnly    Access = "user"          // the user's token only
	AnyCaller   Access = "any"           // an agent too (answers are filtered to what it may see)
	InProject   Access = "project"       // an agent, in its own project
	Owned       Access = "owned"         // an agent, on an agent it created (or one of theirs)
	OwnedOrSelf Access = "owned-or-self" // the same, or the agent itself (reads)
)

// AccessExtension names the access rule in the OpenAPI description.
const AccessExtension = "x-shepherd-access"

// Op is one operation of the API.
type Op[I, O any] struct {
	ID      string // operationId
	Method  string
	Path    string
	Summary string
	Doc     string // more than the summary (optional)
	Access  Access
	Status  int // of success (0: 200)
	// Reveal: the answer holds agents' records, whose secret environment
	// values are masked unless ?reveal=true.
	Reveal bool
	// EmptyBody: an action without input, which takes no body or {}.
	EmptyBody bool

	handle func(h *handler, ctx context.Context, in *I) (*O, error)
	// document adjusts the description (non-JSON answers).
	document func(op *huma.Operation, reg huma.Registry)
	// after runs once a successful answer is written (quit).
	after func(h *handler, w http.ResponseWriter)
	inf   *Info
}

// Info is what an operation's definition says, without its types: the
// window's generic call finds operations by it.
type Info struct {
	ID, Method, Path string
	Access           Access
	Reveal           bool
	EmptyBody        bool
	Params           []Param // path, query and header parameters
	Body             bool    // takes a JSON body
	BodyRequired     bool
}

// Param is one parameter of an operation.
type Param struct {
	Name string
	In   string // path, query or header
	opt  bool   // an Opt[T]
	idx  []int
}

// route is an operation as the server registers it.
type route interface {
	info() *Info
	register(h *handler, a huma.API)
}

// operations are every operation, in the order defined.
var operations []route

// define adds an operation to the API and returns it for the client.
func define[I, O any](op *Op[I, O], handle func(h *handler, ctx context.Context, in *I) (*O, error)) *Op[I, O] {
	op.handle = handle
	op.inf = describe(op)
	operations = append(operations, op)
	return op
}

// Operations lists every operation of the API.
func Operations() []Info {
	out := make([]Info, len(operations))
	for i, r := range operations {
		out[i] = *r.info()
	}
	return out
}

// Lookup finds an operation by its id.
func Lookup(id string) (Info, bool) {
	for _, r := range operations {
		if i := r.info(); i.ID == id {
			return *i, true
		}
	}
	return Info{}, false
}

func (op *Op[I, O]) info() *Info { return op.inf }

// Info is what the operation's definition says, without its types.
func (op *Op[I, O]) Info() Info { return *op.inf }

func describe[I, O any](op *Op[I, O]) *Info {
	in := reflect.TypeFor[I]()
	i := &Info{ID: op.ID, Method: op.Method, Path: op.Path, Access: op.Access, Reveal: op.Reveal, EmptyBody: op.EmptyBody,
		Params: paramsOf(in)}
	if f, ok := in.FieldByName("Body"); ok {
		i.Body, i.BodyRequired = true, f.Type.Kind() != reflect.Pointer
	}
	return i
}

// paramsOf lists the parameters of an input struct.
func paramsOf(t reflect.Type) []Param {
	var out []Param
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		for _, loc := range []string{"path", "query", "header"} {
			name, _, _ := strings.Cut(f.Tag.Get(loc), ",")
			if name == "" {
				continue
			}
			p := Param{Name: name, In: loc, idx: f.Index}
			_, p.opt = reflect.New(f.Type).Interface().(optional)
			out = append(out, p)
		}
	}
	return out
}

// register adds the operation to the huma API: its route, its
// description, and around its handler the access check, the strict body
// check and the error shape.
func (op *Op[I, O]) register(h *handler, a huma.API) {
	status := op.Status
	if status == 0 {
		status = http.StatusOK
	}
	hop := huma.Operation{
		OperationID: op.ID, Method: op.Method, Path: op.Path, Summary: op.Summary, Description: op.Doc,
		DefaultStatus: status, Extensions: map[string]any{AccessExtension: string(op.Access)},
		// Bodies are checked before huma reads them (bodyCheck), with the
		// engine's own messages; huma only decodes what passed.
		SkipValidateBody: true, MaxBodyBytes: 2 * maxBody, BodyReadTimeout: -1,
	}
	if op.Reveal {
		hop.Parameters = append(hop.Parameters, &huma.Param{Name: "reveal", In: "query",
			Description: "true: secret environment values as they are (masked otherwise)", Schema: &huma.Schema{Type: huma.TypeBoolean}})
	}
	info := op.info()
	if info.Body || op.EmptyBody {
		hop.Middlewares = append(hop.Middlewares, bodyCheck(reflect.TypeFor[I](), info))
	}
	if op.EmptyBody {
		hop.RequestBody = &huma.RequestBody{Description: "none, or an empty object",
			Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{Type: huma.TypeObject,
				AdditionalProperties: false}}}}
	}
	if op.after != nil {
		hop.Middlewares = append(hop.Middlewares, func(ctx huma.Context, next func(huma.Context)) {
			next(ctx)
			if ctx.Status() < 300 {
				_, w := unwrap(ctx)
				op.after(h, w)
			}
		})
	}
	reg := a.OpenAPI().Components.Schemas
	if op.document != nil {
		op.document(&hop, reg)
	}
	if hop.Responses == nil {
		hop.Responses = map[string]*huma.Response{}
	}
	hop.Responses["default"] = errorResponse(reg)
	handle := op.handle
	huma.Register(a, hop, func(ctx context.Context, in *I) (*O, error) {
		out, err := handle(h, ctx, in)
		if err != nil {
			return nil, asError(err)
		}
		return out, nil
	})
}

// Reply is the answer of most operations: a JSON body.
type Reply[T any] struct {
	Body T
}

// Created is an answer whose status says whether something was made (201)
// or was there already (200).
type Created[T any] struct {
	Status int
	Body   T
}

// NoInput is the input of an operation that takes nothing.
type NoInput struct{}

// Opt is an optional query parameter: Set says whether it was given (0 is
// a value of its own, e.g. a byte offset).
type Opt[T any] struct {
	Value T
	Set   bool
}

// Some is an Opt that is set.
func Some[T any](v T) Opt[T] { return Opt[T]{Value: v, Set: true} }

type optional interface {
	value() (any, bool)
}

func (o *Opt[T]) value() (any, bool) { return o.Value, o.Set }

// Receiver, OnParamSet and Schema make an Opt a parameter huma parses.
func (o *Opt[T]) Receiver() reflect.Value      { return reflect.ValueOf(o).Elem().Field(0) }
func (o *Opt[T]) OnParamSet(isSet bool, _ any) { o.Set = isSet }
func (o Opt[T]) Schema(r huma.Registry) *huma.Schema {
	return huma.SchemaFromType(r, reflect.TypeFor[T]())
}

// path templates of the API.
const (
	projectPath = "/v1/projects/{project}"
	agentPath   = projectPath + "/agents/{agent}"
)

// ProjectIn names a project.
type ProjectIn struct {
	Project string `path:"project" doc:"the project's id"`
}

// AgentIn names an agent.
type AgentIn struct {
	Project string `path:"project" doc:"the project's id"`
	Agent   string `path:"agent" doc:"the agent's id"`
}
