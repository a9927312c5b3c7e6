package usagelimit

import (
	"testing"
	"time"
)

// The parsers never panic; a reset they read from a clock time is never
// before the text was written by more than a day, nor years after it.
func FuzzClaudeText(f *testing.F) {
	for _, s := range []string{
		"You've hit your session limit · resets 8:41am (UTC)", "You've hit your weekly limit · resets Jan 2, 2026, 9am (Europe/Paris)",
		"5-hour limit reached ∙ resets 3pm", "Claude AI usage limit reached|1764319260", "hit your limit · resets 12:00\u202fpm (x)",
	} {
		f.Add(s)
	}
	now := utc("2025-11-28T05:00:00Z")
	f.Fuzz(func(t *testing.T, s string) {
		l, ok := ClaudeText(s, now)
		if !ok {
			return
		}
		if l.ResetsAt.IsZero() || l.Kind != KindResult {
			t.Fatalf("%q: %+v", s, l)
		}
		if claudePipe.MatchString(s) {
			return // an epoch says what it says
		}
		if l.ResetsAt.Before(now.Add(-50*time.Hour)) || l.ResetsAt.After(now.AddDate(10000, 0, 0)) {
			t.Fatalf("%q: reset %v", s, l.ResetsAt)
		}
	})
}

func FuzzStreamLines(f *testing.F) {
	for _, s := range []string{
		`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1764319260,"rateLimitType":"five_hour","unifiedWindows":{"seven_day":{"utilization":1}}}}`,
		`{"type":"result","is_error":true,"api_error_status":429,"result":"You've hit your session limit · resets 8:41am (UTC)"}`,
		`{"type":"error","message":"You've hit your usage limit. Try again in 4 days 2 hours."}`,
		`{"type":"turn.failed","error":{"message":"You've hit your usage limit. Try again at Dec 2nd, 2025 9:00 AM."}}`,
	} {
		f.Add([]byte(s))
	}
	now := utc("2025-11-28T05:00:00Z")
	f.Fuzz(func(t *testing.T, line []byte) {
		r := NewReader()
		r.Claude(line, now)
		r.Codex(line, now, time.UTC)
		if e, ok := ClaudeEvent(line); ok {
			if _, ok := e.Limit(); ok != (e.Status == Rejected) {
				t.Fatalf("%s", line)
			}
		}
		if l, ok := CodexLine(line, now, time.UTC); ok && l.ResetsAt.IsZero() {
			t.Fatalf("%s: no reset", line)
		}
	})
}
