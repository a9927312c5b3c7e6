package loganalysis

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const (
	sid1 = "3f2a9c4e-8b1d-4e6f-a2c7-5d9e0f1b3a71"
	sid2 = "c81e7d2a-4f6b-4a9e-b3d1-0e2f5a7c9b42"
)

var (
	claudeProfile  = Profile{Name: ProfileClaude}
	genericProfile = Profile{Name: ProfileGeneric}
)

// want is what a test checks of a Result; Line only when set.
type want struct {
	verdict   Verdict
	sessionID string
	claude    *Claude
	line      string // substring of Result.Line; "" = not checked
}

func check(t *testing.T, got Result, w want) {
	t.Helper()
	if got.Verdict != w.verdict {
		t.Errorf("verdict = %q, want %q (line %q)", got.Verdict, w.verdict, got.Line)
	}
	if got.SessionID != w.sessionID {
		t.Errorf("session id = %q, want %q", got.SessionID, w.sessionID)
	}
	// Tokens are checked on their own (TestClaudeUsage).
	if diff := cmp.Diff(w.claude, got.Claude, cmpopts.IgnoreFields(Claude{}, "InputTokens", "CachedTokens", "OutputTokens")); diff != "" {
		t.Errorf("claude (-want +got):\n%s", diff)
	}
	if !strings.Contains(got.Line, w.line) {
		t.Errorf("line = %q, want it to contain %q", got.Line, w.line)
	}
	if len(got.Line) > maxLineText+len("…") || !utf8.ValidString(got.Line) {
		t.Errorf("line not cut or not valid UTF-8: %q", got.Line)
	}
}

func TestAnalyzeFixtures(t *testing.T) {
	success := &Claude{Subtype: "success", NumTurns: 7, DurationMs: 48213, TotalCostUSD: 0.1234, SessionID: sid1}
	withText := func(c *Claude, text string) *Claude { c2 := *c; c2.Result = text; return &c2 }
	errorWords := "Fixed the error handling in api/errors.go: the fatal panic on an empty body is now a 400 error, and the Traceback shown to users is gone. No errors remain; is_error checks added."

	tests := []struct {
		file    string
		profile Profile
		want    want
	}{
		{"claude_success.jsonl", claudeProfile, want{Completed, sid1,
			withText(success, "All tests pass. I updated the README."), `"subtype":"success"`}},
		// The reference implementation matched "error" anywhere in the last
		// line: every one of these successes would have been a failure.
		{"claude_success_error_words.jsonl", claudeProfile, want{Completed, sid1,
			&Claude{Subtype: "success", NumTurns: 12, DurationMs: 48213, TotalCostUSD: 0.1234, SessionID: sid1, Result: errorWords}, "error"}},
		{"claude_is_error_false_last.jsonl", claudeProfile, want{Completed, sid1,
			&Claude{Subtype: "success", NumTurns: 3, DurationMs: 9000, TotalCostUSD: 0.02, SessionID: sid1, Result: "error: none"}, `"is_error": false`}},
		{"claude_result_then_stderr.log", claudeProfile, want{Completed, sid1, withText(success, "Done."), `"type":"result"`}},
		{"claude_result_no_newline.jsonl", claudeProfile, want{Completed, sid1, withText(success, "Done, no newline."), ""}},

		{"claude_error_max_turns.jsonl", claudeProfile, want{Error, sid1,
			&Claude{Subtype: "error_max_turns", NumTurns: 30, DurationMs: 600000, TotalCostUSD: 1.5, SessionID: sid1}, "error_max_turns"}},
		{"claude_error_during_execution.jsonl", claudeProfile, want{Error, sid1,
			&Claude{Subtype: "error_during_execution", NumTurns: 4, DurationMs: 12000, TotalCostUSD: 0.05, SessionID: sid1}, "error_during_execution"}},
		{"claude_error_other_subtype.jsonl", claudeProfile, want{Error, sid1,
			&Claude{Subtype: "error_max_budget_usd", NumTurns: 9, DurationMs: 90000, TotalCostUSD: 5, SessionID: sid1}, "error_max_budget_usd"}},
		{"claude_is_error_true.jsonl", claudeProfile, want{Error, sid1,
			&Claude{Subtype: "success", IsError: true, NumTurns: 2, DurationMs: 3100, SessionID: sid1,
				Result: `API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, `"is_error":true`}},

		// A result, then a resumed run that has not finished: the latest
		// run decides, with its new session id.
		{"claude_resumed_in_progress.jsonl", claudeProfile, want{Interrupted, sid2, nil, "go build"}},
		{"claude_resumed_completed.jsonl", claudeProfile, want{Completed, sid2,
			&Claude{Subtype: "success", NumTurns: 5, DurationMs: 48213, TotalCostUSD: 0.1234, SessionID: sid2, Result: "Finished the migration."}, ""}},
		{"claude_no_result.jsonl", claudeProfile, want{Interrupted, sid1, nil, "cat store/store.go"}},
		{"claude_truncated_last_line.jsonl", claudeProfile, want{Interrupted, sid1, nil, `{"type":"result","subtype":"success"`}},
		{"claude_binary_junk.log", claudeProfile, want{Completed, sid1, withText(success, "Done despite junk."), ""}},
		{"claude_crlf.jsonl", claudeProfile, want{Error, sid1,
			&Claude{Subtype: "error_max_turns", NumTurns: 30, DurationMs: 48213, TotalCostUSD: 0.1234, SessionID: sid1}, ""}},
		// The window starts exactly at a complete error result object
		// inside a huge first line: that cut line must not be read. The
		// run's init line is cut off too: the session id comes from the
		// latest line carrying one.
		{"claude_huge_first_line.jsonl", claudeProfile, want{Interrupted, sid2, nil, "fuzz test"}},
		{"empty.log", claudeProfile, want{Interrupted, "", nil, ""}},
		{"blank_lines.log", claudeProfile, want{Interrupted, "", nil, ""}},

		{"generic_error.log", genericProfile, want{Error, "", nil, "error: could not compile"}},
		{"generic_fatal.log", genericProfile, want{Error, "", nil, "fatal: not a git repository"}},
		{"generic_error.log", Profile{}, want{Error, "", nil, "error: could not compile"}}, // "" = generic
		// Errors earlier in the log do not count, only the last line.
		{"generic_error_earlier.log", genericProfile, want{Interrupted, "", nil, "shutting down"}},
		{"generic_error_earlier.log", Profile{CompletionPattern: `DONE all \d+ tasks`}, want{Completed, "", nil, "[12:03:10] DONE all 42 tasks"}},
		// A custom error pattern replaces the default.
		{"generic_failed.log", genericProfile, want{Interrupted, "", nil, "FAILED: 3 of 45"}},
		{"generic_failed.log", Profile{ErrorPattern: `^FAILED`}, want{Error, "", nil, "FAILED: 3 of 45"}},
		{"generic_error.log", Profile{ErrorPattern: `^FAILED`}, want{Interrupted, "", nil, "error: could not compile"}},
		// The error pattern wins over a completion pattern.
		{"generic_failed.log", Profile{ErrorPattern: `^FAILED`, CompletionPattern: `running`}, want{Error, "", nil, "FAILED"}},
		{"generic_failed.log", Profile{CompletionPattern: `running \d+ checks`}, want{Completed, "", nil, "running 45 checks"}},
		// CRLF: "$" matches at the end of the line, not before a "\r".
		{"generic_crlf.log", Profile{CompletionPattern: `^DONE$`}, want{Completed, "", nil, "DONE"}},
		{"generic_crlf.log", Profile{ErrorPattern: `^DONE$`}, want{Error, "", nil, "DONE"}},
		{"claude_binary_junk.log", genericProfile, want{Interrupted, "", nil, ""}},
		// A claude log read as generic: the result text mentions errors
		// but the last line is judged by the pattern only.
		{"claude_result_then_stderr.log", genericProfile, want{Error, "", nil, "MCP server"}},
		{"empty.log", genericProfile, want{Interrupted, "", nil, ""}},
		{"empty.log", Profile{CompletionPattern: `.*`}, want{Interrupted, "", nil, ""}},
		{"blank_lines.log", Profile{CompletionPattern: `^\s*$`}, want{Completed, "", nil, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.profile.Name+tt.profile.CompletionPattern+tt.profile.ErrorPattern, func(t *testing.T) {
			got, err := Analyze(filepath.Join("testdata", tt.file), tt.profile)
			if err != nil {
				t.Fatal(err)
			}
			check(t, got, tt.want)
		})
	}
}

// The huge-first-line fixture is built so the tail window starts exactly
// at the '{' of a complete, parseable error result object.
func TestHugeFirstLineFixtureShape(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "claude_huge_first_line.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	start := len(data) - TailBytes
	if start <= 0 || data[start] != '{' || data[start-1] == '\n' {
		t.Fatalf("fixture does not cut a line at a '{' (start %d)", start)
	}
	frag := data[start : start+bytes.IndexByte(data[start:], '\n')]
	if kind, _, c := parseClaudeLine(frag); kind != kindResult || !c.Failed() {
		t.Fatalf("the cut fragment should parse as an error result, got kind %d", kind)
	}
	// Read from the start, the same bytes hold no result line at all.
	got, _ := AnalyzeTail(data, true, claudeProfile)
	check(t, got, want{Interrupted, sid2, nil, ""})
}

func TestAnalyzeMissingAndUnreadable(t *testing.T) {
	dir := t.TempDir()
	got, err := Analyze(filepath.Join(dir, "nope", "agent.log"), claudeProfile)
	if err != nil {
		t.Fatalf("missing log: %v", err)
	}
	check(t, got, want{Interrupted, "", nil, ""})

	if _, err := Analyze(dir, claudeProfile); err == nil {
		t.Error("a directory: want an error")
	}
	if _, err := Analyze(filepath.Join("testdata", "empty.log"), Profile{Name: "claude"}); err == nil {
		t.Error("unknown profile: want an error")
	}
	if _, err := Analyze(filepath.Join("testdata", "empty.log"), Profile{ErrorPattern: "("}); err == nil {
		t.Error("bad pattern: want an error")
	}

	if os.Geteuid() != 0 { // root reads anything
		p := filepath.Join(dir, "locked.log")
		if err := os.WriteFile(p, []byte("x\n"), 0); err != nil {
			t.Fatal(err)
		}
		if _, err := Analyze(p, claudeProfile); err == nil {
			t.Error("unreadable log: want an error")
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		p       Profile
		wantErr []string // substrings; nil = valid
	}{
		{Profile{}, nil},
		{Profile{Name: ProfileGeneric, CompletionPattern: `^done$`, ErrorPattern: `^FAILED`}, nil},
		{Profile{Name: ProfileClaude}, nil},
		{Profile{Name: "codex"}, []string{"unknown log profile", `"codex"`}},
		{Profile{CompletionPattern: `(done`}, []string{"completion pattern", `"(done"`, "missing closing )"}},
		{Profile{ErrorPattern: `[a-`}, []string{"error pattern", `"[a-"`, "missing closing ]"}},
		{Profile{ErrorPattern: `x**`}, []string{"error pattern", "invalid nested repetition"}},
		{Profile{Name: ProfileClaude, CompletionPattern: `(?P<`}, []string{"completion pattern"}},
	}
	for _, tt := range tests {
		err := tt.p.Validate()
		if tt.wantErr == nil {
			if err != nil {
				t.Errorf("%+v: %v", tt.p, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%+v: want an error", tt.p)
			continue
		}
		for _, s := range tt.wantErr {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%+v: error %q lacks %q", tt.p, err, s)
			}
		}
		if _, err := AnalyzeTail(nil, true, tt.p); err == nil {
			t.Errorf("%+v: AnalyzeTail: want an error", tt.p)
		}
	}
}

// AnalyzeTail cases that need no fixture.
func TestAnalyzeTail(t *testing.T) {
	res := func(sid, subtype string, isErr bool) string {
		return `{"type":"result","subtype":"` + subtype + `","is_error":` + map[bool]string{true: "true", false: "false"}[isErr] +
			`,"session_id":"` + sid + `","num_turns":1,"duration_ms":5,"total_cost_usd":0.5,"result":"ok"}`
	}
	init := func(sid string) string { return `{"type":"system","subtype":"init","session_id":"` + sid + `"}` }
	okA := &Claude{Subtype: "success", NumTurns: 1, DurationMs: 5, TotalCostUSD: 0.5, Result: "ok", SessionID: "A"}

	tests := []struct {
		name      string
		tail      string
		fromStart bool
		p         Profile
		want      want
	}{
		{"cut first line ignored", res("A", "success", false) + "\n", false, claudeProfile, want{Interrupted, "", nil, ""}},
		{"whole first line read", res("A", "success", false) + "\n", true, claudeProfile, want{Completed, "A", okA, ""}},
		{"no newline at all, cut", res("A", "success", false), false, claudeProfile, want{Interrupted, "", nil, ""}},
		{"init without id still starts a run", init("A") + "\n" + res("A", "success", false) + "\n" + init("") + "\n", true, claudeProfile, want{Interrupted, "A", nil, ""}},
		{"latest init wins", init("A") + "\n" + init("B") + "\n", true, claudeProfile, want{Interrupted, "B", nil, ""}},
		{"error then resumed success", init("A") + "\n" + res("A", "error_max_turns", false) + "\n" + init("B") + "\n" + res("B", "success", false), true, claudeProfile,
			want{Completed, "B", &Claude{Subtype: "success", NumTurns: 1, DurationMs: 5, TotalCostUSD: 0.5, Result: "ok", SessionID: "B"}, ""}},
		{"substring only is not a result", `not json {"type":"result","is_error":true}` + "\n" + `"type":"result","is_error":true`, true, claudeProfile, want{Interrupted, "", nil, "is_error"}},
		{"nested type is not a result", `{"type":"assistant","message":{"type":"result","is_error":true},"session_id":"A"}`, true, claudeProfile, want{Interrupted, "A", nil, ""}},
		{"result with no subtype", `{"type":"result","is_error":false}`, true, claudeProfile, want{Completed, "", &Claude{}, ""}},
		{"odd field types tolerated", `{"type":"result","subtype":"success","is_error":"no","num_turns":"7","session_id":"A"}`, true, claudeProfile,
			want{Completed, "A", &Claude{Subtype: "success", SessionID: "A"}, ""}},
		{"BOM and spaces", "\xef\xbb\xbf  " + res("A", "success", true) + " \t\r\n", true, claudeProfile,
			want{Error, "A", &Claude{Subtype: "success", IsError: true, NumTurns: 1, DurationMs: 5, TotalCostUSD: 0.5, Result: "ok", SessionID: "A"}, ""}},
		{"top-level array is not an object", `[{"type":"result"}]`, true, claudeProfile, want{Interrupted, "", nil, ""}},

		{"generic: completion only in the cut first line", "DONE\nworking\n", false, Profile{CompletionPattern: "DONE"}, want{Interrupted, "", nil, "working"}},
		{"generic: error only in the cut first line", "error\nworking\n", false, genericProfile, want{Interrupted, "", nil, "working"}},
		{"generic: last line without newline", "working\nPanic: out of memory", true, genericProfile, want{Error, "", nil, "Panic"}},
		{"generic: trailing blank lines skipped", "Traceback (most recent call last):\n\n \r\n\t\n", true, genericProfile, want{Error, "", nil, "Traceback"}},
		{"generic: word boundary", "errors: 0\nterror\n", true, genericProfile, want{Interrupted, "", nil, "terror"}},
		{"generic: cut line no newline", "error", false, genericProfile, want{Interrupted, "", nil, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AnalyzeTail([]byte(tt.tail), tt.fromStart, tt.p)
			if err != nil {
				t.Fatal(err)
			}
			check(t, got, tt.want)
		})
	}
}

func TestTextsAreCut(t *testing.T) {
	long := strings.Repeat("é", 1000) // 2 bytes a rune: a cut may fall inside one
	line := `{"type":"result","subtype":"success","is_error":false,"result":"` + long + `"}`
	got, err := AnalyzeTail([]byte(line), true, claudeProfile)
	if err != nil {
		t.Fatal(err)
	}
	if got.Verdict != Completed {
		t.Fatalf("verdict %q", got.Verdict)
	}
	for name, s := range map[string]string{"result": got.Claude.Result, "line": got.Line} {
		if !utf8.ValidString(s) || !strings.HasSuffix(s, "…") || len(s) > maxResultText+len("…") {
			t.Errorf("%s not cut cleanly: %d bytes", name, len(s))
		}
	}
	if len(got.Line) > maxLineText+len("…") {
		t.Errorf("line is %d bytes", len(got.Line))
	}

	junk := bytes.Repeat([]byte{0xff, 'e', 'r', 'r', 'o', 'r', ' '}, 400)
	got, _ = AnalyzeTail(junk, true, genericProfile)
	if got.Verdict != Error || !utf8.ValidString(got.Line) || len(got.Line) > maxLineText+len("…") {
		t.Errorf("junk line: verdict %q, %d bytes, valid %v", got.Verdict, len(got.Line), utf8.ValidString(got.Line))
	}
}

// A result line's usage gives the run's tokens: input (cache writes
// included), read from the cache, output.
func TestClaudeUsage(t *testing.T) {
	got, err := Analyze(filepath.Join("testdata", "claude_success.jsonl"), claudeProfile)
	if err != nil || got.Claude == nil {
		t.Fatal(err)
	}
	if c := got.Claude; c.InputTokens != 120+2048 || c.CachedTokens != 51230 || c.OutputTokens != 1432 {
		t.Fatalf("tokens %d / %d / %d", c.InputTokens, c.CachedTokens, c.OutputTokens)
	}
}
