package loganalysis

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var fuzzProfiles = []Profile{
	claudeProfile,
	codexProfile,
	genericProfile,
	{CompletionPattern: `(?i)done|finished`},
	{ErrorPattern: `^FAILED`, CompletionPattern: `^ok$`},
}

// fuzzSeeds are short logs in the shapes of the fixtures (which the table
// tests read whole): short seeds keep the fuzzer's minimizing quick.
var fuzzSeeds = []string{
	"{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"turn.started\"}\n{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":5}}\n",
	"{\"type\":\"error\",\"message\":\"x\"}\n{\"type\":\"turn.failed\",\"error\":{\"message\":\"boom\"}}\n",
	"{\"type\":\"item.started\",\"item\":{\"id\":\"i\",\"type\":\"command_execution\",\"command\":\"bash -lc 'make'\"}}\nWARNING: x\n{\"type\":\"item.completed\",\"item\":{\"id\":\"e\",\"type\":\"error\"}}\n",
	"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"A\"}\n{\"type\":\"assistant\",\"session_id\":\"A\"}\n{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"session_id\":\"A\",\"num_turns\":2,\"duration_ms\":9,\"total_cost_usd\":0.1,\"result\":\"no error\"}\n",
	"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"A\"}\r\n{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"is_error\":true}\r\n{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"B\"}\r\n",
	"{\"type\":\"result\",\"subtype\":\"success\",\"is_err",
	"\xef\xbb\xbf{}\n\x00\xff{\"type\":\"result\"}\n\"\\u0072esult\"",
	"{\"type\":\"assistant\",\"session_id\":\"A\",\"message\":{\"type\":\"result\",\"is_error\":true}}\n",
	"build ok\nDONE\nerror: could not compile\n\n",
	"FAILED: 3 tests\r\nok\r\n",
	"{\"\\u0074ype\":\"\\u0072esult\",\"subtype\":\"error_x\"}\n{\"type\":\"system\",\"subtype\":\"\\u0069nit\"}",
	"",
}

func FuzzAnalyzeTail(f *testing.F) {
	for i, seed := range fuzzSeeds {
		f.Add([]byte(seed), true, uint8(0)) // claude
		f.Add([]byte(seed), i%2 == 0, uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, fromStart bool, which uint8) {
		p := fuzzProfiles[int(which)%len(fuzzProfiles)]
		got, err := AnalyzeTail(data, fromStart, p)
		if err != nil {
			t.Fatal(err)
		}
		switch got.Verdict {
		case Completed, Error, Interrupted:
		default:
			t.Fatalf("verdict %q", got.Verdict)
		}
		if !utf8.ValidString(got.Line) || len(got.Line) > maxLineText+len("…") {
			t.Fatalf("line %q", got.Line)
		}
		jsonProfile := p.Name == ProfileClaude || p.Name == ProfileCodex
		if (got.Claude != nil) != (jsonProfile && got.Verdict != Interrupted) {
			t.Fatalf("claude %+v with verdict %q", got.Claude, got.Verdict)
		}
		if got.Claude != nil && (len(got.Claude.Result) > maxResultText+len("…") || (got.Verdict == Error) != got.Claude.Failed()) {
			t.Fatalf("claude %+v with verdict %q", got.Claude, got.Verdict)
		}
		if !jsonProfile && got.SessionID != "" {
			t.Fatalf("generic with session id %q", got.SessionID)
		}
		// A Scanner fed the same complete lines learns the same.
		if jsonProfile && fromStart && len(data) <= TailBytes && bytes.HasSuffix(data, []byte{'\n'}) {
			s := NewScanner(p)
			sid, _ := s.Feed(data)
			if sid != got.SessionID {
				t.Fatalf("session id: Analyze %q, Scanner %q", got.SessionID, sid)
			}
			if diff := cmp.Diff(got.Claude, s.Result()); diff != "" {
				t.Fatalf("result (-Analyze +Scanner):\n%s", diff)
			}
		}
	})
}

func FuzzScanner(f *testing.F) {
	for i, seed := range fuzzSeeds {
		f.Add([]byte(seed), []byte{1, 7, 0, 3, 40}, i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, data, splits []byte, codex bool) {
		prof := claudeProfile
		if codex {
			prof = codexProfile
		}
		whole := NewScanner(prof)
		whole.Feed(data)
		s := NewScanner(prof)
		var last *Claude
		for i := 0; len(data) > 0; i++ {
			n := len(data)
			if len(splits) > 0 {
				n = min(int(splits[i%len(splits)]), n)
			}
			if n == 0 { // an empty feed changes nothing
				before := s.Result()
				if sid, res := s.Feed(nil); sid != s.SessionID() || res != nil || s.Result() != before {
					t.Fatalf("empty feed: %q, %+v", sid, res)
				}
				n = 1
			}
			sid, res := s.Feed(data[:n])
			data = data[n:]
			if sid != s.SessionID() {
				t.Fatalf("Feed returned %q, SessionID %q", sid, s.SessionID())
			}
			if res != nil {
				last = res
			}
			if len(s.pending) > TailBytes {
				t.Fatalf("pending %d bytes", len(s.pending))
			}
		}
		if s.SessionID() != whole.SessionID() {
			t.Fatalf("session id: split %q, whole %q", s.SessionID(), whole.SessionID())
		}
		if diff := cmp.Diff(whole.Result(), s.Result()); diff != "" {
			t.Fatalf("result (-whole +split):\n%s", diff)
		}
		// The run's result, if any, is the last one Feed returned.
		if s.Result() != nil && s.Result() != last {
			t.Fatalf("Result() %+v was not the last returned (%+v)", s.Result(), last)
		}
	})
}
