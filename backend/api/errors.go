package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"shepherd/backend/jsonone"
	"strings"

	"shepherd/backend/supervisor"
)

// ErrorBody is the shape of every error answer.
type ErrorBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
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

func writeEngineError(w http.ResponseWriter, err error) {
	writeError(w, StatusFor(err), supervisor.KindName(err), err.Error())
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

// decodeBody reads one JSON object into v, refusing unknown fields, wrong
// types, trailing data and oversized bodies with a 400 (413) that says what
// was wrong. An empty body is accepted only when allowEmpty. It reports
// whether the handler may go on; when not, the answer has been written.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, allowEmpty bool) bool {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "ValidationError",
				fmt.Sprintf("request body is larger than %d bytes", maxBody))
			return false
		}
		writeError(w, http.StatusBadRequest, "ValidationError", "read request body: "+err.Error())
		return false
	}
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		if allowEmpty {
			return true
		}
		writeError(w, http.StatusBadRequest, "ValidationError", "request body is empty; expected a JSON object")
		return false
	}
	if trimmed[0] != '{' && json.Valid(trimmed) {
		writeError(w, http.StatusBadRequest, "ValidationError", "request body must be a JSON object")
		return false
	}
	switch err := jsonone.Decode(trimmed, v, true); {
	case errors.Is(err, jsonone.ErrTrailing):
		writeError(w, http.StatusBadRequest, "ValidationError",
			"malformed JSON: unexpected data after the object")
		return false
	case err != nil:
		writeError(w, http.StatusBadRequest, "ValidationError", describeJSONError(err))
		return false
	}
	return true
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

// emptyBody accepts a request without a body, or with an empty JSON object,
// for actions that take no input.
func emptyBody(w http.ResponseWriter, r *http.Request) bool {
	return decodeBody(w, r, &struct{}{}, true)
}
