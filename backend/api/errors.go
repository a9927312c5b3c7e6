package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"shepherd/backend/jsonone"
	"shepherd/backend/supervisor"
)

// ErrorBody is the shape of every error answer.
type ErrorBody struct {
	Error   string `json:"error" doc:"the kind of error, e.g. ProcessNotFound, ValidationError"`
	Message string `json:"message" doc:"what was wrong, in words"`
}

// apiError is an error answer as the handlers and huma return it: the
// status, then the same two fields as ErrorBody (huma's problem+json is
// replaced by it).
type apiError struct {
	status  int
	Name    string `json:"error" doc:"the kind of error, e.g. ProcessNotFound, ValidationError"`
	Message string `json:"message" doc:"what was wrong, in words"`
	headers http.Header
}

func (e *apiError) Error() string           { return e.Message }
func (e *apiError) GetStatus() int          { return e.status }
func (e *apiError) GetHeaders() http.Header { return e.headers }

func problem(status int, name, msg string) *apiError {
	return &apiError{status: status, Name: name, Message: msg}
}

// asError is an error of the engine (or the handler) as an answer.
func asError(err error) error {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return problem(StatusFor(err), supervisor.KindName(err), err.Error())
}

// StatusFor maps an engine error to its HTTP status by its kind.
func StatusFor(err error) int {
	switch {
	case errors.Is(err, supervisor.ErrValidation):
		return http.StatusBadRequest
	case errors.Is(err, supervisor.ErrNotFound), errors.Is(err, supervisor.ErrProjectNotFound):
		return http.StatusNotFound
	case errors.Is(err, supervisor.ErrAlreadyExists),
		errors.Is(err, supervisor.ErrAlreadyRunning),
		errors.Is(err, supervisor.ErrNotRunning),
		errors.Is(err, supervisor.ErrIsRunning),
		errors.Is(err, supervisor.ErrTransition),
		errors.Is(err, supervisor.ErrNotResumable),
		errors.Is(err, supervisor.ErrNotPaused),
		errors.Is(err, supervisor.ErrProjectHasAgents),
		errors.Is(err, supervisor.ErrWorktreeDirty),
		errors.Is(err, supervisor.ErrMergeConflict):
		return http.StatusConflict
	case errors.Is(err, supervisor.ErrPermissionDenied):
		return http.StatusForbidden
	case errors.Is(err, supervisor.ErrTooMany):
		return http.StatusTooManyRequests
	case errors.Is(err, supervisor.ErrStartFailed), errors.Is(err, supervisor.ErrSandboxUnavailable),
		errors.Is(err, supervisor.ErrWorktree):
		return http.StatusUnprocessableEntity
	default:
		return http.StatusInternalServerError
	}
}

func init() {
	// huma's own refusals (a parameter it cannot parse, a body too large)
	// come out in the API's error shape with the engine's words.
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		return humaProblem(nil, status, msg, errs)
	}
	huma.NewErrorWithContext = func(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
		return humaProblem(ctx, status, msg, errs)
	}
}

// paramWords say what a numeric query parameter must be.
var paramWords = map[string]string{
	"tail":  "a number of lines (an integer ≥ 0)",
	"since": "a byte offset (an integer ≥ 0)",
	"limit": "a number of events (an integer ≥ 0)",
}

func humaProblem(ctx huma.Context, status int, msg string, errs []error) *apiError {
	switch {
	case status == 0: // the example huma documents errors with
		return &apiError{}
	case status == http.StatusRequestEntityTooLarge:
		return problem(status, "ValidationError", fmt.Sprintf("request body is larger than %d bytes", maxBody))
	case msg == "request body is required":
		return problem(http.StatusBadRequest, "ValidationError", "request body is empty; expected a JSON object")
	}
	for _, e := range errs {
		var d *huma.ErrorDetail
		if !errors.As(e, &d) {
			continue
		}
		loc, name, _ := strings.Cut(d.Location, ".")
		if loc != "query" && loc != "header" && loc != "path" {
			return problem(http.StatusBadRequest, "ValidationError", d.Message)
		}
		value := fmt.Sprint(d.Value)
		words := paramWords[name]
		if words == "" && ctx != nil {
			words = wordsOf(ctx.Operation(), name, d)
		}
		what := map[string]string{"query": "query parameter", "header": "header", "path": "path parameter"}[loc]
		return problem(http.StatusBadRequest, "ValidationError", fmt.Sprintf("%s %s=%q must be %s", what, name, value, words))
	}
	if status >= 500 {
		for _, e := range errs {
			if e != nil {
				msg += ": " + e.Error()
			}
		}
		return problem(status, "InternalError", msg)
	}
	return problem(status, strings.ReplaceAll(http.StatusText(status), " ", ""), msg)
}

// wordsOf says what a parameter must be from its description.
func wordsOf(op *huma.Operation, name string, d *huma.ErrorDetail) string {
	if op != nil {
		for _, p := range op.Parameters {
			if p.Name != name || p.Schema == nil {
				continue
			}
			switch {
			case p.Schema.Type == huma.TypeBoolean:
				return "true or false"
			case len(p.Schema.Enum) > 0:
				var vs []string
				for _, v := range p.Schema.Enum {
					vs = append(vs, fmt.Sprint(v))
				}
				return "one of " + strings.Join(vs, ", ")
			}
		}
	}
	return strings.TrimPrefix(d.Message, "expected ")
}

func writeError(w http.ResponseWriter, status int, name, msg string) {
	writeJSON(w, status, ErrorBody{Error: name, Message: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(ErrorBody{Error: "InternalError", Message: "encode answer: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// jsonFormat is how the API reads and writes JSON: json.Marshal's bytes and
// a newline, and one strict object in (no unknown fields, nothing after).
var jsonFormat = huma.Format{
	Marshal: func(w io.Writer, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	},
	Unmarshal: func(data []byte, v any) error { return jsonone.Decode(data, v, true) },
}

// bodyCheck reads the body of an operation that takes one (or takes none
// but {}) before huma does, and refuses unknown fields, wrong types,
// trailing data, oversized and missing bodies with a 400 (413) that says
// what was wrong. What passed goes on to huma, which decodes it again with
// the same strict decoder.
func bodyCheck(in reflect.Type, info *Info) func(huma.Context, func(huma.Context)) {
	bodyType, allowEmpty := reflect.TypeFor[struct{}](), true
	if f, ok := in.FieldByName("Body"); ok {
		bodyType, allowEmpty = f.Type, !info.BodyRequired
		if bodyType.Kind() == reflect.Pointer {
			bodyType = bodyType.Elem()
		}
	}
	return func(ctx huma.Context, next func(huma.Context)) {
		r, w := unwrap(ctx)
		b, ok := decodeBody(w, r, reflect.New(bodyType).Interface(), allowEmpty)
		if !ok {
			return
		}
		if !info.Body {
			b = nil
		}
		next(&bodyContext{humaContext: ctx, body: b})
	}
}

// bodyContext hands huma the body bodyCheck read, and the handler too (a
// partial update needs to know which fields were given).
type bodyContext struct {
	humaContext
	body []byte
}

type humaContext = huma.Context

type bodyKey struct{}

func (c *bodyContext) BodyReader() io.Reader { return bytes.NewReader(c.body) }
func (c *bodyContext) Unwrap() huma.Context  { return c.humaContext }
func (c *bodyContext) Context() context.Context {
	return context.WithValue(c.humaContext.Context(), bodyKey{}, c.body)
}

// decodeBody reads one JSON object into v and returns it trimmed (nil when
// empty), or writes the refusal and returns false. An empty body is
// accepted only when allowEmpty.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, allowEmpty bool) ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "ValidationError",
				fmt.Sprintf("request body is larger than %d bytes", maxBody))
			return nil, false
		}
		writeError(w, http.StatusBadRequest, "ValidationError", "read request body: "+err.Error())
		return nil, false
	}
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		if allowEmpty {
			return nil, true
		}
		writeError(w, http.StatusBadRequest, "ValidationError", "request body is empty; expected a JSON object")
		return nil, false
	}
	if trimmed[0] != '{' && json.Valid(trimmed) {
		writeError(w, http.StatusBadRequest, "ValidationError", "request body must be a JSON object")
		return nil, false
	}
	switch err := jsonone.Decode(trimmed, v, true); {
	case errors.Is(err, jsonone.ErrTrailing):
		writeError(w, http.StatusBadRequest, "ValidationError",
			"malformed JSON: unexpected data after the object")
		return nil, false
	case err != nil:
		writeError(w, http.StatusBadRequest, "ValidationError", describeJSONError(err))
		return nil, false
	}
	return trimmed, true
}

func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: the body ends in the middle of a value"
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return fmt.Sprintf("wrong JSON type: got %s, want %s", typ.Value, typ.Type)
		}
		return fmt.Sprintf("field %q has the wrong type: got %s, want %s", field, typ.Value, jsonTypeName(typ.Type.String()))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	default:
		return "invalid JSON body: " + strings.TrimPrefix(err.Error(), "json: ")
	}
}

func jsonTypeName(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "*int"):
		return "a number (integer)"
	case goType == "string", goType == "*string":
		return "a string"
	case goType == "bool", goType == "*bool":
		return "true or false"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map["):
		return "an object"
	}
	return goType
}
