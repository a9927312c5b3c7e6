// Package usagelimit reads when an agent CLI's subscription window ran out
// and when it resets (SPEC "Answers": usage limits wait), and schedules the
// resumption of the agents that wait for it, a few at a time.
//
// Claude Code (checked with the CLI from npm, 2.1.197, under a subscription
// login) prints in stream-json, after the first answer and whenever it
// changes:
//
//	{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"|"allowed_warning"|"rejected",
//	 "resetsAt":<epoch s>,"rateLimitType":"five_hour"|"seven_day"|…,"utilization":<0..1>?,
//	 "unifiedWindows":{"five_hour":{"utilization":…,"resetsAt":…},…}?,…}}
//
// and a run refused by the limit ends, after a rejected event, on
//
//	{"type":"result","subtype":"success","is_error":true,"api_error_status":429,
//	 "result":"You've hit your session limit · resets 8:41am (UTC)"}
//
// ("weekly limit" for seven_day; "resets Nov 28, 8:45am (UTC)" for a reset
// days away, with the year when it is not this one; the time in the CLI's
// time zone, named in parentheses). Older versions wrote "Claude AI usage
// limit reached|<epoch s>" or "5-hour limit reached ∙ resets 3pm".
//
// Codex (codex-rs/core/src/error.rs) ends a turn refused by its usage limit
// with {"type":"error","message":…} and {"type":"turn.failed",…}, the
// message "You've hit your usage limit. … Try again at 3:05 PM." (the same
// day) or "… Try again at Jan 2nd, 2027 3:05 PM." (another day), in the
// machine's local time with no zone named; older versions wrote "… or try
// again in 4 days 2 hours." and, with no reset known, "Try again later."
package usagelimit

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Window names, as Claude Code's rateLimitType says them.
const (
	FiveHour       = "five_hour"
	SevenDay       = "seven_day"
	SevenDayOpus   = "seven_day_opus"
	SevenDaySonnet = "seven_day_sonnet"
	Overage        = "overage"
)

// Statuses of a rate_limit_event.
const (
	Allowed        = "allowed"
	AllowedWarning = "allowed_warning"
	Rejected       = "rejected"
)

// Kind says what told of a limit.
type Kind string

const (
	KindEvent  Kind = "event"  // Claude's rate_limit_event with status rejected
	KindResult Kind = "result" // Claude's 429 result, its text naming the reset
	KindCodex  Kind = "codex"  // Codex's usage-limit error
)

// Limit is a window that ran out: the agent waits until ResetsAt.
type Limit struct {
	Kind     Kind      `json:"kind"`
	ResetsAt time.Time `json:"resetsAt"` // zero when the CLI named no reset
	Window   string    `json:"window,omitempty"`
	// Utilization of the window, 0..1; -1 when unknown.
	Utilization float64 `json:"utilization"`
	Message     string  `json:"message,omitempty"` // the CLI's words, when it said any
}

// Label is the window in words: "5-hour", "weekly", "weekly Opus", …; ""
// when unknown.
func (l Limit) Label() string { return Label(l.Window) }

// Label names a window in words.
func Label(window string) string {
	switch window {
	case FiveHour:
		return "5-hour"
	case SevenDay:
		return "weekly"
	case SevenDayOpus:
		return "weekly Opus"
	case SevenDaySonnet:
		return "weekly Sonnet"
	case Overage:
		return "extra usage"
	case "":
		return ""
	}
	return strings.ReplaceAll(window, "_", " ")
}

// Period is how long a window lasts, so the reset after a known one;
// 0 when unknown.
func Period(window string) time.Duration {
	switch window {
	case FiveHour:
		return 5 * time.Hour
	case SevenDay, SevenDayOpus, SevenDaySonnet:
		return 7 * 24 * time.Hour
	}
	return 0
}

// Window is what a rate_limit_event says of one window of the account.
type Window struct {
	Name        string    `json:"name"`             // five_hour, seven_day, …
	Status      string    `json:"status,omitempty"` // allowed, allowed_warning, rejected ("" for a window of unifiedWindows)
	ResetsAt    time.Time `json:"resetsAt"`         // zero when not said
	Utilization float64   `json:"utilization"`      // 0..1; -1 when not said
}

// Event is a parsed rate_limit_event.
type Event struct {
	Status string
	// Window is the one the event is about (rateLimitType), with the
	// top-level resetsAt and utilization.
	Window Window
	// Windows are every window the event carries: Window, and those of
	// unifiedWindows (newer CLIs), by name.
	Windows map[string]Window
}

// Limit is the event as a limit, if its status is rejected.
func (e Event) Limit() (Limit, bool) {
	if e.Status != Rejected {
		return Limit{}, false
	}
	return Limit{Kind: KindEvent, ResetsAt: e.Window.ResetsAt, Window: e.Window.Name, Utilization: e.Window.Utilization}, true
}

// number reads a JSON number (integer or not), or reports it missing.
type number struct {
	v  float64
	ok bool
}

func (n *number) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil // a string or junk: as if not said
	}
	n.v, n.ok = v, true
	return nil
}

type windowJSON struct {
	ResetsAt    number `json:"resetsAt"`
	Utilization number `json:"utilization"`
}

type eventLine struct {
	Type string `json:"type"`
	Info *struct {
		Status         string                `json:"status"`
		ResetsAt       number                `json:"resetsAt"`
		RateLimitType  string                `json:"rateLimitType"`
		Utilization    number                `json:"utilization"`
		UnifiedWindows map[string]windowJSON `json:"unifiedWindows"`
	} `json:"rate_limit_info"`
}

func epoch(n number) time.Time {
	// Seconds, within what a reset can be (1970..2200); anything else is
	// not a time.
	if !n.ok || n.v <= 0 || n.v > 7e9 {
		return time.Time{}
	}
	sec, frac := math.Modf(n.v)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC()
}

func util(n number) float64 {
	if !n.ok || n.v < 0 {
		return -1
	}
	// Some reports give a percent; the CLI gives a fraction.
	if n.v > 1.5 && n.v <= 100 {
		return n.v / 100
	}
	if n.v > 1.5 {
		return -1
	}
	return n.v
}

var (
	quotedRateLimitEvent = []byte(`"rate_limit_event"`)
	quotedResultType     = []byte(`"result"`)
)

func trimLine(line []byte) []byte {
	return bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), []byte("\xef\xbb\xbf")))
}

func decode(line []byte, v any) bool {
	if len(line) < 2 || line[0] != '{' || line[len(line)-1] != '}' {
		return false
	}
	if err := json.Unmarshal(line, v); err != nil {
		var te *json.UnmarshalTypeError
		return errors.As(err, &te) // a field of another type: the rest still counts
	}
	return true
}

// ClaudeEvent parses a stream-json rate_limit_event line (without its
// newline); ok is false for any other line.
func ClaudeEvent(line []byte) (Event, bool) {
	line = trimLine(line)
	if !bytes.Contains(line, quotedRateLimitEvent) {
		return Event{}, false
	}
	var el eventLine
	if !decode(line, &el) || el.Type != "rate_limit_event" || el.Info == nil || el.Info.Status == "" {
		return Event{}, false
	}
	in := el.Info
	e := Event{Status: in.Status, Windows: map[string]Window{}}
	e.Window = Window{Name: in.RateLimitType, Status: in.Status, ResetsAt: epoch(in.ResetsAt), Utilization: util(in.Utilization)}
	for name, w := range in.UnifiedWindows {
		if name == "" {
			continue
		}
		e.Windows[name] = Window{Name: name, ResetsAt: epoch(w.ResetsAt), Utilization: util(w.Utilization)}
	}
	if e.Window.Name != "" {
		// The event's own window: its status, and what unifiedWindows
		// adds where the top level is silent.
		w := e.Window
		if u, ok := e.Windows[w.Name]; ok {
			if w.ResetsAt.IsZero() {
				w.ResetsAt = u.ResetsAt
			}
			if w.Utilization < 0 {
				w.Utilization = u.Utilization
			}
		}
		e.Window = w
		e.Windows[w.Name] = w
	}
	return e, true
}

type resultLine struct {
	Type           string `json:"type"`
	IsError        bool   `json:"is_error"`
	APIErrorStatus int    `json:"api_error_status"`
	Result         string `json:"result"`
}

// ClaudeResult reads a stream-json result line (without its newline): a
// run refused by a usage limit (is_error, api_error_status 429, or a text
// that says a limit was hit) whose text names the reset. now is when the
// line was written: "resets 8:41am" is the next 8:41 after it. ok is false
// for any other line, and for a 429 whose text names no reset (an API
// rate limit, not a subscription window).
func ClaudeResult(line []byte, now time.Time) (Limit, bool) {
	line = trimLine(line)
	if !bytes.Contains(line, quotedResultType) {
		return Limit{}, false
	}
	var rl resultLine
	if !decode(line, &rl) || rl.Type != "result" || !rl.IsError {
		return Limit{}, false
	}
	l, ok := ClaudeText(rl.Result, now)
	if !ok {
		return Limit{}, false
	}
	if rl.APIErrorStatus != 429 && rl.APIErrorStatus != 0 {
		return Limit{}, false
	}
	return l, true
}

var (
	// "You've hit your session limit · resets 8:41am (UTC)",
	// "5-hour limit reached ∙ resets 3pm", "Weekly limit reached · resets Oct 3, 9am".
	claudeResets = regexp.MustCompile(`(?i)\bresets\s+` +
		`(?:(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2}),?\s+(?:(\d{4}),?\s+)?(?:at\s+)?)?` +
		`(\d{1,2})(?::(\d{2}))?[\s\x{202f}\x{a0}]*([ap])\.?m\b\.?` +
		`(?:\s*\(([^)]{1,64})\))?`)
	// "Claude AI usage limit reached|1755434100"
	claudePipe = regexp.MustCompile(`(?i)usage limit reached\|(\d{9,11})`)
	// "You've hit your session limit", "… your limit", "Weekly limit reached".
	claudeLimit = regexp.MustCompile(`(?i)\b(?:hit|reached) your\s+(?:([a-z0-9 -]{1,40}?)\s+)?limit\b|\b([a-z0-9-]{1,20})\s+limit reached\b`)
)

// ClaudeText reads the text of Claude's usage-limit message: the window
// (from "session limit", "weekly limit", …) and the reset it names. The
// time is in the zone named in parentheses (an IANA name, as the CLI
// prints it); without one, or one unknown here, in UTC. now is when the
// text was written.
func ClaudeText(text string, now time.Time) (Limit, bool) {
	if m := claudePipe.FindStringSubmatch(text); m != nil {
		sec, _ := strconv.ParseInt(m[1], 10, 64)
		return Limit{Kind: KindResult, ResetsAt: time.Unix(sec, 0).UTC(), Utilization: -1, Message: cutText(text)}, true
	}
	lm := claudeLimit.FindStringSubmatch(text)
	if lm == nil {
		return Limit{}, false
	}
	m := claudeResets.FindStringSubmatch(text)
	if m == nil {
		return Limit{}, false
	}
	loc := time.UTC
	if m[7] != "" {
		if l, err := time.LoadLocation(strings.TrimSpace(m[7])); err == nil {
			loc = l
		}
	}
	at, ok := clockTime(m[1], m[2], m[3], m[4], m[5], m[6], now, loc)
	if !ok {
		return Limit{}, false
	}
	window := ""
	switch words := strings.ToLower(lm[1] + lm[2]); {
	case strings.Contains(words, "session") || strings.Contains(words, "5-hour"):
		window = FiveHour
	case strings.Contains(words, "opus"):
		window = SevenDayOpus
	case strings.Contains(words, "sonnet"):
		window = SevenDaySonnet
	case strings.Contains(words, "weekly"):
		window = SevenDay
	}
	return Limit{Kind: KindResult, ResetsAt: at.UTC(), Window: window, Utilization: -1, Message: cutText(text)}, true
}

var months = map[string]time.Month{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

// clockTime builds a reset from a clock time (hour, minute, am/pm) and
// maybe a date (month, day, year) in loc: without a date, the next such
// time after now; with a date but no year, the year of now in loc (or the
// next, when that date has passed by more than a day: a reset is never in
// the past).
func clockTime(mon, day, year, hour, minute, ampm string, now time.Time, loc *time.Location) (time.Time, bool) {
	h, err := strconv.Atoi(hour)
	if err != nil || h < 1 || h > 12 {
		return time.Time{}, false
	}
	mi := 0
	if minute != "" {
		if mi, err = strconv.Atoi(minute); err != nil || mi > 59 {
			return time.Time{}, false
		}
	}
	h %= 12
	if strings.EqualFold(ampm, "p") {
		h += 12
	}
	local := now.In(loc)
	if mon == "" {
		t := time.Date(local.Year(), local.Month(), local.Day(), h, mi, 0, 0, loc)
		if t.Before(local.Add(-time.Minute)) {
			t = time.Date(local.Year(), local.Month(), local.Day()+1, h, mi, 0, 0, loc)
		}
		return t, true
	}
	mo := months[strings.ToLower(mon[:3])]
	d, err := strconv.Atoi(day)
	if err != nil || d < 1 || d > 31 {
		return time.Time{}, false
	}
	y := local.Year()
	if year != "" {
		// A reset is this year or the next, never another.
		if y, err = strconv.Atoi(year); err != nil || y < local.Year() || y > local.Year()+1 {
			return time.Time{}, false
		}
	}
	t := time.Date(y, mo, d, h, mi, 0, 0, loc)
	if t.Day() != d {
		return time.Time{}, false // Feb 31
	}
	if year == "" && t.Before(local.Add(-24*time.Hour)) {
		t = time.Date(y+1, mo, d, h, mi, 0, 0, loc)
	}
	return t, true
}

const maxMessage = 300

func cutText(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
