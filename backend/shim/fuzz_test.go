package shim

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The engine reads what a shim wrote — a status line, exit.json, run.json —
// with these parsers; a shim that died mid-write or a file edited by hand
// must be refused, never crash the engine. What is accepted holds the
// documented invariants and survives being written (as the shim writes it:
// its appenders, which must give json.Marshal's very bytes) and read again
// unchanged. Seeds are in testdata/fuzz/FuzzParse{Hello,Exit,Run}.

// appender is how the shim writes a value.
type appender interface{ append([]byte) []byte }

// reparse checks that an accepted value, written as the shim writes it,
// is what json.Marshal writes and reads back as the same value.
func reparse[T any](t *testing.T, in []byte, got T, parse func([]byte) (T, error)) {
	t.Helper()
	if !json.Valid(in) {
		t.Fatalf("accepted input that is not exactly one JSON value: %q", in)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("accepted %+v, which cannot be written again: %v", got, err)
	}
	var ap appender
	switch v := any(got).(type) {
	case Hello:
		ap = v
	case *ExitStatus:
		ap = *v
	case *RunInfo:
		ap = *v
	}
	if w := ap.append(nil); string(w) != string(b) {
		t.Fatalf("the shim writes %+v as %s, json.Marshal as %s", got, w, b)
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

// The shim's appenders write json.Marshal's very bytes, whatever the text
// (quotes, control characters, HTML's, invalid UTF-8, U+2028) and the time.
func TestAppendersWriteWhatJSONWrites(t *testing.T) {
	texts := []string{"", "plain", `a "quoted" \ back`, "tab\tnl\ncr\rbs\bff\f\x00\x1f\x7f", "<script>&amp;</script>",
		"bad \xff\xfe utf8 \xe2\x82", "line\u2028para\u2029", "é ünïcode ☃ 𝄞"}
	zones := []*time.Location{time.UTC, time.FixedZone("x", -(3*3600 + 30*60)), time.Local}
	code := 7
	for i, s := range texts {
		at := time.Date(2026, 11, 26, 12, 0, 0, i*123456789, zones[i%len(zones)])
		for _, v := range []any{Hello{PID: i + 1}, Hello{Error: s}, Hello{PID: 3, Error: s},
			ExitStatus{PID: 9, Signal: s, ExitedAt: at}, ExitStatus{PID: 9, ExitCode: &code, ExitedAt: at},
			RunInfo{PID: 1, ShimPID: 2, StartedAt: at}} {
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.(appender).append(nil); string(got) != string(want) {
				t.Errorf("%+v: the shim writes %s, json.Marshal %s", v, got, want)
			}
		}
	}
}
