package shim

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The engine reads what a shim wrote — a status line, exit.json, run.json —
// with these parsers; a shim that died mid-write or a file edited by hand
// must be refused, never crash the engine. What is accepted holds the
// documented invariants and survives being written (json.Marshal, as send
// and writeJSON do) and read again unchanged. Seeds are in
// testdata/fuzz/FuzzParse{Hello,Exit,Run}.

// reparse checks that an accepted value, written as the shim writes it,
// reads back as the same value.
func reparse[T any](t *testing.T, in []byte, got T, parse func([]byte) (T, error)) {
	t.Helper()
	if !json.Valid(in) {
		t.Fatalf("accepted input that is not exactly one JSON value: %q", in)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("accepted %+v, which cannot be written again: %v", got, err)
	}
	again, err := parse(append(b, '\n'))
	if err != nil {
		t.Fatalf("accepted %q, but refused it written again as %s: %v", in, b, err)
	}
	if diff := cmp.Diff(got, again); diff != "" {
		t.Fatalf("changed by a write and read (-first +again):\n%s", diff)
	}
}

func FuzzParseHello(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHello(b)
		if err != nil {
			if h != (Hello{}) {
				t.Fatalf("refused (%v) but returned %+v", err, h)
			}
			return
		}
		// Exactly one of a pid and an error.
		if (h.PID > 0) == (h.Error != "") || h.PID < 0 {
			t.Fatalf("accepted hello %+v", h)
		}
		reparse(t, b, h, ParseHello)
	})
}

func FuzzParseExit(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := ParseExit(b)
		if err != nil {
			if st != nil {
				t.Fatalf("refused (%v) but returned %+v", err, st)
			}
			return
		}
		switch {
		case st.PID <= 0:
			t.Fatalf("accepted pid %d", st.PID)
		case st.ExitCode != nil && st.Signal != "":
			t.Fatalf("accepted both exit code %d and signal %q", *st.ExitCode, st.Signal)
		case st.ExitCode != nil && (*st.ExitCode < 0 || *st.ExitCode > 255):
			t.Fatalf("accepted exit code %d", *st.ExitCode)
		}
		reparse(t, b, st, ParseExit)
	})
}

func FuzzParseRun(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		ri, err := ParseRun(b)
		if err != nil {
			if ri != nil {
				t.Fatalf("refused (%v) but returned %+v", err, ri)
			}
			return
		}
		if ri.PID <= 0 || ri.ShimPID <= 0 {
			t.Fatalf("accepted pids %d, shim %d", ri.PID, ri.ShimPID)
		}
		reparse(t, b, ri, ParseRun)
	})
}
