package usagelimit

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

func lines(t *testing.T, name string) [][]byte {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestClaudeEvent(t *testing.T) {
	ls := lines(t, "claude-session-limit.jsonl")
	if _, ok := ClaudeEvent(ls[0]); ok {
		t.Fatal("an init line is an event")
	}
	warn, ok := ClaudeEvent(ls[2])
	if !ok || warn.Status != AllowedWarning || warn.Window.Name != FiveHour || warn.Window.Utilization != 0.91 ||
		!warn.Window.ResetsAt.Equal(utc("2025-11-28T08:41:00Z")) {
		t.Fatalf("%+v", warn)
	}
	if _, ok := warn.Limit(); ok {
		t.Fatal("a warning is a limit")
	}
	rej, ok := ClaudeEvent(ls[3])
	if !ok {
		t.Fatal("rejected event not read")
	}
	l, ok := rej.Limit()
	if !ok || l.Kind != KindEvent || l.Window != FiveHour || !l.ResetsAt.Equal(utc("2025-11-28T08:41:00Z")) || l.Utilization != -1 || l.Label() != "5-hour" {
		t.Fatalf("%+v", l)
	}
}

// Newer CLIs carry every window in unifiedWindows, utilization as a JSON
// integer too; the top level may be silent about it.
func TestClaudeEventUnifiedWindows(t *testing.T) {
	line := []byte(`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1788465600,"rateLimitType":"five_hour","isUsingOverage":false,` +
		`"unifiedWindows":{"five_hour":{"utilization":1,"resetsAt":1788465600},"seven_day":{"utilization":0.49,"resetsAt":1789005600}}},"uuid":"u","session_id":"s"}`)
	e, ok := ClaudeEvent(line)
	if !ok {
		t.Fatal("not read")
	}
	if e.Window.Utilization != 1 || len(e.Windows) != 2 || e.Windows[SevenDay].Utilization != 0.49 ||
		!e.Windows[SevenDay].ResetsAt.Equal(time.Unix(1789005600, 0)) || e.Windows[FiveHour].Status != Rejected {
		t.Fatalf("%+v", e)
	}
	l, _ := e.Limit()
	if l.Utilization != 1 {
		t.Fatalf("%+v", l)
	}
}

func TestClaudeEventJunk(t *testing.T) {
	for _, s := range []string{
		`{"type":"rate_limit_event"}`,
		`{"type":"rate_limit_event","rate_limit_info":{}}`,
		`{"type":"assistant","text":"rate_limit_event"}`,
		`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":"soon","rateLimitType":"five_hour"}`,
		`not json "rate_limit_event"`,
	} {
		if e, ok := ClaudeEvent([]byte(s)); ok && !e.Window.ResetsAt.IsZero() {
			t.Fatalf("%s: %+v", s, e)
		}
	}
	e, ok := ClaudeEvent([]byte(`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":"soon","rateLimitType":"five_hour","utilization":"x"}}`))
	if !ok || !e.Window.ResetsAt.IsZero() || e.Window.Utilization != -1 {
		t.Fatalf("a string reset: %+v %v", e, ok)
	}
}

func TestClaudeResult(t *testing.T) {
	now := utc("2025-11-28T05:00:00Z")
	l, ok := ClaudeResult(lines(t, "claude-session-limit.jsonl")[5], now)
	if !ok || l.Kind != KindResult || l.Window != FiveHour || !l.ResetsAt.Equal(utc("2025-11-28T08:41:00Z")) ||
		l.Message != "You've hit your session limit · resets 8:41am (UTC)" {
		t.Fatalf("%+v %v", l, ok)
	}
	wk, ok := ClaudeResult(lines(t, "claude-weekly-limit.jsonl")[1], utc("2025-11-24T10:00:00Z"))
	if !ok || wk.Window != SevenDay || !wk.ResetsAt.Equal(utc("2025-11-28T07:45:00Z")) || wk.Label() != "weekly" {
		t.Fatalf("%+v %v", wk, ok)
	}
	for _, s := range []string{
		`{"type":"result","subtype":"success","is_error":false,"result":"You've hit your session limit · resets 8:41am (UTC)"}`,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error: Request rejected (429) · temporarily limiting requests"}`,
		`{"type":"result","subtype":"error_during_execution","is_error":true,"api_error_status":500,"result":"You've hit your session limit · resets 8:41am (UTC)"}`,
		`{"type":"assistant","result":"You've hit your session limit · resets 8:41am (UTC)"}`,
	} {
		if l, ok := ClaudeResult([]byte(s), now); ok {
			t.Fatalf("%s read as %+v", s, l)
		}
	}
}

func TestClaudeText(t *testing.T) {
	now := utc("2025-11-28T05:00:00Z") // a Friday
	for _, tc := range []struct {
		text   string
		window string
		at     string // RFC 3339; "" = not a limit
	}{
		{"You've hit your session limit · resets 8:41am (UTC)", FiveHour, "2025-11-28T08:41:00Z"},
		{"You've hit your session limit · resets 9am (UTC)", FiveHour, "2025-11-28T09:00:00Z"},
		{"You've hit your session limit · resets 4:30am (UTC)", FiveHour, "2025-11-29T04:30:00Z"}, // the next one
		{"You've hit your session limit · resets 12am (UTC)", FiveHour, "2025-11-29T00:00:00Z"},
		{"You've hit your session limit · resets 12:15pm (UTC)", FiveHour, "2025-11-28T12:15:00Z"},
		{"You've hit your session limit · resets 8:41am (America/New_York)", FiveHour, "2025-11-28T13:41:00Z"},
		{"You've hit your session limit · resets 2:00pm (Asia/Tokyo)", FiveHour, "2025-11-28T05:00:00Z"},
		{"You've hit your session limit · resets 8:41\u202fAM (UTC)", FiveHour, "2025-11-28T08:41:00Z"},
		{"You've hit your session limit · resets 8:41am (Nowhere/Else)", FiveHour, "2025-11-28T08:41:00Z"}, // an unknown zone reads as UTC
		{"You've hit your session limit · resets 8:41am", FiveHour, "2025-11-28T08:41:00Z"},
		{"You've hit your weekly limit · resets Dec 2, 8:45am (UTC)", SevenDay, "2025-12-02T08:45:00Z"},
		{"You've hit your weekly limit · resets Jan 2, 2026, 9am (UTC)", SevenDay, "2026-01-02T09:00:00Z"},
		{"You've hit your weekly limit · resets Nov 27, 9am (UTC)", SevenDay, "2025-11-27T09:00:00Z"}, // a day late: this year still
		{"You've hit your weekly limit · resets Jan 3, 9am (UTC)", SevenDay, "2026-01-03T09:00:00Z"},  // past for this year: the next
		{"You've hit your Opus limit · resets Dec 1, 10pm (UTC)", SevenDayOpus, "2025-12-01T22:00:00Z"},
		{"You've hit your Sonnet limit · resets Dec 1, 10pm (UTC)", SevenDaySonnet, "2025-12-01T22:00:00Z"},
		{"You've hit your limit · resets 3pm (UTC)", "", "2025-11-28T15:00:00Z"},
		{"5-hour limit reached ∙ resets 3pm", FiveHour, "2025-11-28T15:00:00Z"},
		{"Weekly limit reached · resets Dec 3, 9am", SevenDay, "2025-12-03T09:00:00Z"},
		{"Claude AI usage limit reached|1764319260", "", "2025-11-28T08:41:00Z"},
		{"You've hit your session limit", "", ""}, // no reset named
		{"The build resets 8:41am", "", ""},       // no limit named
		{"You've hit your session limit · resets 13:41pm (UTC)", "", ""},
		{"You've hit your weekly limit · resets Feb 31, 9am (UTC)", "", ""},
		{"", "", ""},
	} {
		t.Run(tc.text, func(t *testing.T) {
			l, ok := ClaudeText(tc.text, now)
			if tc.at == "" {
				if ok {
					t.Fatalf("read as %+v", l)
				}
				return
			}
			if !ok || !l.ResetsAt.Equal(utc(tc.at)) || l.Window != tc.window {
				t.Fatalf("got %v %s %q, want %s %q", ok, l.ResetsAt.Format(time.RFC3339), l.Window, tc.at, tc.window)
			}
		})
	}
}

func TestCodex(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	// Lines of codex-cli 0.169.0 refused by its usage limit (a stand-in
	// API answering 429 usage_limit_reached), run with TZ=America/New_York.
	written := utc("2026-11-26T12:34:00Z")
	for file, reset := range map[string]string{
		"codex-usage-limit.jsonl":           "2026-11-26T14:36:00Z", // "try again at 9:36 AM."
		"codex-usage-limit-other-day.jsonl": "2026-11-29T12:49:00Z", // "try again at Nov 29th, 2026 7:49 AM."
	} {
		ls := lines(t, file)
		for i, want := range []bool{false, false, true, true} {
			l, ok := CodexLine(ls[i], written, ny)
			if ok != want {
				t.Fatalf("%s line %d: %v", file, i, ok)
			}
			if ok && (l.Kind != KindCodex || !l.ResetsAt.Equal(utc(reset)) || !strings.HasPrefix(l.Message, "You’ve hit your usage limit.")) {
				t.Fatalf("%s line %d: %+v", file, i, l)
			}
		}
	}
	now := utc("2025-11-28T15:00:00Z") // 10:00 in New York
	for _, tc := range []struct{ text, at string }{
		{"You've hit your usage limit. Try again at 3:05 PM.", "2025-11-28T20:05:00Z"},
		{"You’ve hit your usage limit. Try again at 3:05 PM.", "2025-11-28T20:05:00Z"},
		{"You've hit your usage limit. Try again at Dec 2nd, 2025 9:00 AM.", "2025-12-02T14:00:00Z"},
		{"You've hit your usage limit. Try again at Jan 1st, 2026 12:30 AM.", "2026-01-01T05:30:00Z"},
		{"You've hit your usage limit. To get more access now, send a request to your admin or try again at Nov 29th, 2025 1:00 PM.", "2025-11-29T18:00:00Z"},
		{"You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 4 days 2 hours.", "2025-12-02T17:00:00Z"},
		{"You've hit your usage limit. Try again in 4 days, 5 hours, 31 minutes.", "2025-12-02T20:31:00Z"},
		{"You've hit your usage limit. Try again in 30 minutes.", "2025-11-28T15:30:00Z"},
		{"You've hit your usage limit. Try again later.", ""},
		{"You've hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/explore/plus).", ""},
		{"stream error: try again at 3:05 PM", ""},
	} {
		l, ok := CodexText(tc.text, now, ny)
		if tc.at == "" {
			if ok {
				t.Fatalf("%q read as %+v", tc.text, l)
			}
			continue
		}
		if !ok || !l.ResetsAt.Equal(utc(tc.at)) {
			t.Fatalf("%q: %v %s, want %s", tc.text, ok, l.ResetsAt.Format(time.RFC3339), tc.at)
		}
	}
}

// Lines of the real CLI (2.1.197, subscription login, a stand-in API
// answering 429 with the unified headers, TZ=Europe/Paris): the rejected
// event's reset and the result's words agree; a warning carries the
// utilization.
func TestClaudeCLILines(t *testing.T) {
	written := utc("2026-11-26T12:30:41Z")
	r := NewReader()
	ls := lines(t, "claude-session-limit-cli.jsonl")
	for _, l := range ls {
		r.Claude(l, written)
	}
	l, ok := r.Limit()
	if !ok || l.Window != FiveHour || !l.ResetsAt.Equal(time.Unix(1795707041, 0)) ||
		l.Message != "You've hit your session limit · resets 4:30pm (Europe/Paris)" {
		t.Fatalf("%+v %v", l, ok)
	}
	text, ok := ClaudeResult(ls[len(ls)-1], written)
	if !ok || !text.ResetsAt.Equal(utc("2026-11-26T15:30:00Z")) {
		t.Fatalf("the words alone: %+v", text)
	}
	e, ok := ClaudeEvent(lines(t, "claude-warning-cli.jsonl")[0])
	if !ok || e.Status != AllowedWarning || e.Window.Utilization != 0.91 || e.Window.Name != FiveHour {
		t.Fatalf("%+v", e)
	}
}

// The Reader puts a run's event and result together: the exact reset of
// the event, the words of the result; a new run forgets the refusal.
func TestReader(t *testing.T) {
	now := utc("2025-11-28T05:00:00Z")
	r := NewReader()
	for _, l := range lines(t, "claude-session-limit.jsonl") {
		r.Claude(l, now)
	}
	l, ok := r.Limit()
	if !ok || l.Kind != KindEvent || l.Window != FiveHour || !l.ResetsAt.Equal(utc("2025-11-28T08:41:00Z")) || !strings.Contains(l.Message, "session limit") {
		t.Fatalf("%+v %v", l, ok)
	}
	ws := r.Windows()
	if len(ws) != 1 || ws[0].Status != Rejected {
		t.Fatalf("%+v", ws)
	}
	if !r.Claude([]byte(`{"type":"system","subtype":"init","session_id":"7f1c"}`), now) {
		t.Fatal("a new run changes nothing")
	}
	if _, ok := r.Limit(); ok {
		t.Fatal("a new run is still refused")
	}
	// A result alone (no event before it) still makes a limit.
	r.Claude(lines(t, "claude-session-limit.jsonl")[5], now)
	if l, ok := r.Limit(); !ok || l.Kind != KindResult {
		t.Fatalf("%+v", l)
	}
	// Codex.
	c := NewReader()
	for _, l := range lines(t, "codex-usage-limit.jsonl") {
		c.Codex(l, now, time.UTC)
	}
	if l, ok := c.Limit(); !ok || l.Kind != KindCodex {
		t.Fatalf("%+v", l)
	}
	c.Codex([]byte(`{"type":"thread.started","thread_id":"x"}`), now, time.UTC)
	if _, ok := c.Limit(); ok {
		t.Fatal("a new Codex run is still refused")
	}
}

func TestAccounts(t *testing.T) {
	var a Accounts
	reset := utc("2025-11-28T08:41:00Z")
	a.Observe("me", Window{Name: FiveHour, Status: AllowedWarning, ResetsAt: reset, Utilization: 0.82})
	a.Observe("me", Window{Name: FiveHour, Status: Allowed, ResetsAt: reset, Utilization: -1}) // silent on utilization
	ws := a.Windows("me", utc("2025-11-28T06:00:00Z"))
	if len(ws) != 1 || ws[0].Utilization != 0.82 || ws[0].Status != Allowed {
		t.Fatalf("%+v", ws)
	}
	ws = a.Windows("me", reset)
	if len(ws) != 1 || ws[0].Utilization != 0 || !ws[0].ResetsAt.IsZero() {
		t.Fatalf("after the reset: %+v", ws)
	}
	if len(a.Windows("other", reset)) != 0 {
		t.Fatal("another account has windows")
	}
}

func TestLimitJSON(t *testing.T) {
	b, err := json.Marshal(Limit{Kind: KindEvent, ResetsAt: utc("2025-11-28T08:41:00Z"), Window: FiveHour, Utilization: -1})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"resetsAt":"2025-11-28T08:41:00Z"`) || !strings.Contains(s, `"label":"5-hour"`) {
		t.Fatal(s)
	}
	var back Limit
	if err := json.Unmarshal(b, &back); err != nil || !back.ResetsAt.Equal(utc("2025-11-28T08:41:00Z")) || back.Window != FiveHour {
		t.Fatalf("%+v %v", back, err)
	}
	b, _ = json.Marshal(Limit{Kind: KindResult})
	if strings.Contains(string(b), "resetsAt") {
		t.Fatal(string(b))
	}
}
