package loganalysis

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// feedAll feeds data in pieces of the given sizes (cycled; empty = whole)
// and returns every session id returned and every non-nil result.
func feedAll(s *Scanner, data []byte, sizes []int) (sids []string, results []*Claude) {
	for i := 0; len(data) > 0; i++ {
		n := len(data)
		if len(sizes) > 0 {
			n = min(sizes[i%len(sizes)], len(data))
		}
		sid, res := s.Feed(data[:n])
		data = data[n:]
		if sid != s.SessionID() {
			panic("Feed and SessionID disagree")
		}
		if len(sids) == 0 || sids[len(sids)-1] != sid {
			sids = append(sids, sid)
		}
		if res != nil {
			results = append(results, res)
		}
	}
	return sids, results
}

// resultLines returns the result lines of a log in order, parsed on their own.
func resultLines(data []byte) []*Claude {
	var out []*Claude
	for _, l := range bytes.SplitAfter(data, []byte{'\n'}) {
		if !bytes.HasSuffix(l, []byte{'\n'}) {
			break // a line counts once its newline is fed
		}
		if kind, _, c := parseClaudeLine(bytes.TrimSuffix(l, []byte{'\n'})); kind == kindResult {
			out = append(out, c)
		}
	}
	return out
}

func TestScannerSplitsAgree(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	splits := [][]int{{1}, {2}, {3}, {7}, {13}, {64}, {4095}, {1, 500, 3}}
	for range 4 {
		var sizes []int
		for range 50 {
			sizes = append(sizes, 1+rng.IntN(300))
		}
		splits = append(splits, sizes)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			whole := NewScanner(claudeProfile)
			wholeSids, wholeResults := feedAll(whole, data, nil)
			for _, sizes := range splits {
				s := NewScanner(claudeProfile)
				sids, results := feedAll(s, data, sizes)
				if s.SessionID() != whole.SessionID() {
					t.Errorf("splits %v: session id %q, whole %q", sizes, s.SessionID(), whole.SessionID())
				}
				if diff := cmp.Diff(whole.Result(), s.Result()); diff != "" {
					t.Errorf("splits %v: result (-whole +split):\n%s", sizes, diff)
				}
				// The ids seen along the way only move forward: the whole
				// feed's final id is the split feed's final id, and a split
				// feed sees every id the whole feed saw.
				for _, id := range wholeSids {
					if !contains(sids, id) {
						t.Errorf("splits %v: ids %q lack %q", sizes, sids, id)
					}
				}
				if sizes[0] == 1 && len(sizes) == 1 {
					// Fed a byte at a time, every result line is returned
					// once, in order.
					if diff := cmp.Diff(resultLines(data), results); diff != "" {
						t.Errorf("byte by byte: results (-want +got):\n%s", diff)
					}
				}
			}
			// Fed whole, a result superseded by a later init in the same
			// call is not returned.
			if len(wholeResults) > 1 {
				t.Errorf("whole: %d results returned by one call", len(wholeResults))
			}
			if len(wholeResults) == 1 && whole.Result() == nil {
				t.Errorf("whole: returned a result that a later init superseded")
			}

			// The scanner agrees with Analyze on logs read from their start
			// whose last line is complete.
			if len(data) <= TailBytes && bytes.HasSuffix(data, []byte{'\n'}) {
				got, err := AnalyzeTail(data, true, claudeProfile)
				if err != nil {
					t.Fatal(err)
				}
				if got.SessionID != whole.SessionID() {
					t.Errorf("session id: Analyze %q, Scanner %q", got.SessionID, whole.SessionID())
				}
				if diff := cmp.Diff(got.Claude, whole.Result()); diff != "" {
					t.Errorf("result (-Analyze +Scanner):\n%s", diff)
				}
			}
		})
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestScannerLive(t *testing.T) {
	s := NewScanner(claudeProfile)
	step := func(in, wantSid string, wantRes bool) {
		t.Helper()
		sid, res := s.Feed([]byte(in))
		if sid != wantSid || (res != nil) != wantRes {
			t.Fatalf("Feed(%q) = %q, %+v; want %q, result %v", in, sid, res, wantSid, wantRes)
		}
	}
	step(`{"type":"system","subtype":"in`, "", false)
	step(`it","session_id":"A"}`, "", false) // no newline yet
	step("\r\n", "A", false)
	step(`{"type":"assistant","session_id":"A","message":{}}`+"\n", "A", false)
	step(`{"type":"result","subtype":"success","is_error":false,"session_id":"A"}`, "A", false)
	if s.Result() != nil {
		t.Fatal("result before its newline")
	}
	step("\n", "A", true)
	if s.Result() == nil || s.Result().Subtype != "success" {
		t.Fatalf("Result() = %+v", s.Result())
	}
	step("", "A", false)
	step("junk \x00\xff\n", "A", false)
	// A resumed run: the result no longer counts, the new id does.
	step(`{"type":"system","subtype":"init","session_id":"B"}`+"\n", "B", false)
	if s.Result() != nil {
		t.Fatal("result survived a new init")
	}
	// Result then init in one call: superseded, not returned.
	step(`{"type":"result","subtype":"success","session_id":"B"}`+"\n"+`{"type":"system","subtype":"init","session_id":"C"}`+"\n", "C", false)
	// Init then result in one call: returned.
	step(`{"type":"system","subtype":"init","session_id":"D"}`+"\n"+`{"type":"result","subtype":"error_max_turns","session_id":"D"}`+"\n", "D", true)
	if !s.Result().Failed() {
		t.Fatal("error_max_turns not failed")
	}
}

func TestScannerBoundedMemory(t *testing.T) {
	s := NewScanner(claudeProfile)
	s.Feed([]byte(`{"type":"system","subtype":"init","session_id":"A"}` + "\n"))
	// A line longer than TailBytes, fed in pieces, is dropped whole, and
	// the scanner never holds more than TailBytes of it.
	big := `{"type":"result","subtype":"error_x","session_id":"X","result":"` + strings.Repeat("x", 3*TailBytes) + `"}`
	for i := 0; i < len(big); i += 1000 {
		sid, res := s.Feed([]byte(big[i:min(i+1000, len(big))]))
		if sid != "A" || res != nil {
			t.Fatalf("during the long line: %q, %+v", sid, res)
		}
		if cap(s.pending) > 2*TailBytes {
			t.Fatalf("pending grew to %d", cap(s.pending))
		}
	}
	// Its newline ends it; the next line is read normally.
	if _, res := s.Feed([]byte("\n" + `{"type":"result","subtype":"success","session_id":"A"}` + "\n")); res == nil || res.Subtype != "success" {
		t.Fatalf("after the long line: %+v", res)
	}
	// Fed whole, a long line is dropped too.
	if _, res := s.Feed([]byte(big + "\n")); res != nil {
		t.Fatalf("whole long line read: %+v", res)
	}
	// A line of exactly TailBytes is kept.
	exact := `{"type":"result","subtype":"success","session_id":"A","result":"`
	exact += strings.Repeat("y", TailBytes-len(exact)-2) + `"}`
	if len(exact) != TailBytes {
		t.Fatal(len(exact))
	}
	if _, res := s.Feed([]byte(exact[:100])); res != nil {
		t.Fatal(res)
	}
	if _, res := s.Feed([]byte(exact[100:] + "\n")); res == nil {
		t.Fatal("a line of TailBytes was dropped")
	}
}

func TestScannerSkipToNextLine(t *testing.T) {
	s := NewScanner(claudeProfile)
	s.SkipToNextLine()
	// Started in the middle of a line that happens to end like a result.
	sid, res := s.Feed([]byte(`{"type":"result","is_error":true,"session_id":"X"}` + "\n" + `{"type":"assistant","session_id":"A"}` + "\n"))
	if sid != "A" || res != nil || s.Result() != nil {
		t.Fatalf("%q, %+v", sid, res)
	}
}

func TestScannerGeneric(t *testing.T) {
	for _, p := range []Profile{{}, genericProfile, {Name: "bogus"}} {
		s := NewScanner(p)
		sid, res := s.Feed([]byte(`{"type":"system","subtype":"init","session_id":"A"}` + "\n" + `{"type":"result"}` + "\n"))
		if sid != "" || res != nil || len(s.pending) != 0 {
			t.Errorf("%+v: %q, %+v", p, sid, res)
		}
	}
}

// A tool call is in flight from its tool_use to its tool_result; a long
// Bash tool's task_started/task_notification pair sits inside it; a new run
// or a result line ends what an earlier run left open.
func TestScannerToolInFlight(t *testing.T) {
	s := NewScanner(claudeProfile)
	feed := func(l string) { s.Feed([]byte(l + "\n")) }
	inflight := func() string {
		if tl, ok := s.InFlight(); ok {
			if tl.Task {
				return tl.Name + "+task"
			}
			return tl.Name
		}
		return ""
	}
	steps := []struct{ line, want string }{
		{`{"type":"system","subtype":"init","session_id":"s1"}`, ""},
		{`{"type":"assistant","message":{"content":[{"type":"text","text":"running tests"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"make test"}}]}}`, "Bash"},
		{`{"type":"system","subtype":"task_started","tool_use_id":"t1","task_type":"local_bash"}`, "Bash+task"},
		{`not json at all`, "Bash+task"},
		{`{"type":"system","subtype":"task_notification","status":"completed","tool_use_id":"t1"}`, "Bash"},
		{`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}`, ""},
		{`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Read"},{"type":"tool_use","id":"t3","name":"Grep"}]}}`, "Grep"},
		{`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t3"}]}}`, "Read"},
		{`{"type":"user","message":{"content":"a plain string"}}`, "Read"},
		{`{"type":"system","subtype":"init","session_id":"s2"}`, ""},
		{`{"type":"system","subtype":"task_started","task_id":"k9","task_type":"local_bash"}`, "local_bash+task"},
		{`{"type":"system","subtype":"task_notification","status":"completed"}`, ""},
		{`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t4","name":"Bash"}]}}`, "Bash"},
		{`{"type":"result","subtype":"success","is_error":false}`, ""},
	}
	for i, st := range steps {
		feed(st.line)
		if got := inflight(); got != st.want {
			t.Fatalf("after line %d (%s): in flight %q, want %q", i, st.line, got, st.want)
		}
	}
}

// Claude Code writes one api_retry line per failed attempt (the shape of
// the CLI's stream-json, 2.1); the retry lasts until another line follows.
func TestScannerRetrying(t *testing.T) {
	s := NewScanner(Profile{Name: ProfileClaude})
	s.Feed([]byte(`{"type":"system","subtype":"init","session_id":"s1"}` + "\n"))
	if _, ok := s.Retrying(); ok {
		t.Fatal("retrying after an init line")
	}
	s.Feed([]byte(`{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"retry_delay_ms":30000,"error_status":429,"error":"rate_limit","session_id":"s1","uuid":"u"}` + "\n"))
	r, ok := s.Retrying()
	if !ok || r.Attempt != 2 || r.RetryDelayMs != 30000 || r.Error != "rate_limit" || !r.RateLimited() {
		t.Fatalf("Retrying = %+v, %v; want attempt 2, 30000 ms, rate_limit", r, ok)
	}
	s.Feed([]byte(`{"type":"system","subtype":"api_retry","attempt":1,"retry_delay_ms":500,"error_status":500,"error":"server_error"}` + "\n"))
	if r, _ := s.Retrying(); r.RateLimited() {
		t.Fatalf("a server error reads as a rate limit: %+v", r)
	}
	s.Feed([]byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]},"session_id":"s1"}` + "\n"))
	if _, ok := s.Retrying(); ok {
		t.Fatal("still retrying after the assistant answered")
	}
}
