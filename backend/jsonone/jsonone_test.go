package jsonone

import (
	"errors"
	"testing"
)

func TestDecode(t *testing.T) {
	type T struct {
		A int `json:"a"`
	}
	var v T
	if err := Decode([]byte(` {"a":1} `), &v, true); err != nil || v.A != 1 {
		t.Fatalf("%+v %v", v, err)
	}
	for _, b := range []string{`{"a":1}}`, `{"a":1}]`, `{"a":1} {}`, `{"a":1} x`} {
		if err := Decode([]byte(b), &v, false); !errors.Is(err, ErrTrailing) {
			t.Errorf("%q: %v, want ErrTrailing", b, err)
		}
	}
	if err := Decode([]byte(`{"a":1,"b":2}`), &v, true); err == nil || errors.Is(err, ErrTrailing) {
		t.Errorf("unknown field, strict: %v", err)
	}
	if err := Decode([]byte(`{"a":1,"b":2}`), &v, false); err != nil {
		t.Errorf("unknown field, lax: %v", err)
	}
	if err := Decode([]byte(``), &v, false); err == nil {
		t.Error("empty accepted")
	}
}
