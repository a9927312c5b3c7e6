// Package jsonone decodes exactly one JSON value from a byte slice: the
// parsers of records, shim lines, sandbox.json and API bodies share its one
// subtle rule — json.Decoder.More reports "no more data" before a stray '}'
// or ']', so trailing data is found by asking for one more token instead.
package jsonone

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// ErrTrailing is returned when data follows the JSON value.
var ErrTrailing = errors.New("data after the JSON value")

// Decode decodes b, which must hold one JSON value and nothing after it,
// into v. With strict, a field v does not have is an error too.
func Decode(b []byte, v any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return ErrTrailing
	}
	return nil
}
