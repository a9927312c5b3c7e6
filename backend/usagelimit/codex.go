package usagelimit

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"time"
)

type codexLine struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
}

var quotedUsageLimit = []byte("usage limit")

// CodexLine reads a `codex exec --json` line (without its newline): an
// error or turn.failed event whose message says the usage limit was hit
// and names when to try again. now is when the line was written; loc is
// the time zone Codex ran in (it names none: its local time).
func CodexLine(line []byte, now time.Time, loc *time.Location) (Limit, bool) {
	line = trimLine(line)
	if !bytes.Contains(bytes.ToLower(line), quotedUsageLimit) {
		return Limit{}, false
	}
	var cl codexLine
	if !decode(line, &cl) {
		return Limit{}, false
	}
	msg := ""
	switch cl.Type {
	case "error":
		msg = cl.Message
	case "turn.failed":
		if cl.Error != nil {
			msg = cl.Error.Message
		}
	default:
		return Limit{}, false
	}
	return CodexText(msg, now, loc)
}

var (
	codexLimit = regexp.MustCompile(`(?i)\b(?:hit|reached) your usage limit\b|\busage limit reached\b`)
	// "Try again at 3:05 PM." / "… or try again at Jan 2nd, 2027 3:05 PM."
	codexAt = regexp.MustCompile(`(?i)\btry again at\s+` +
		`(?:(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(?:(\d{4}),?\s+)?)?` +
		`(\d{1,2})(?::(\d{2}))?[\s\x{202f}\x{a0}]*([ap])\.?m\b`)
	// "… or try again in 4 days 2 hours." / "Try again in 30 minutes."
	codexIn   = regexp.MustCompile(`(?i)\btry again in\s+((?:\d+(?:\.\d+)?\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b[,\s]*(?:and\s+)?)+)`)
	codexUnit = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b`)
)

// CodexText reads Codex's usage-limit message. ok is false for any other
// text, and for "Try again later." (no reset named).
func CodexText(text string, now time.Time, loc *time.Location) (Limit, bool) {
	if !codexLimit.MatchString(text) {
		return Limit{}, false
	}
	if loc == nil {
		loc = time.Local
	}
	if m := codexAt.FindStringSubmatch(text); m != nil {
		at, ok := clockTime(m[1], m[2], m[3], m[4], m[5], m[6], now, loc)
		if !ok {
			return Limit{}, false
		}
		return Limit{Kind: KindCodex, ResetsAt: at.UTC(), Utilization: -1, Message: cutText(text)}, true
	}
	if m := codexIn.FindStringSubmatch(text); m != nil {
		var d time.Duration
		for _, u := range codexUnit.FindAllStringSubmatch(m[1], -1) {
			v, err := strconv.ParseFloat(u[1], 64)
			if err != nil {
				return Limit{}, false
			}
			unit := time.Second
			switch strings.ToLower(u[2])[0] {
			case 'd':
				unit = 24 * time.Hour
			case 'h':
				unit = time.Hour
			case 'm':
				unit = time.Minute
			}
			d += time.Duration(v * float64(unit))
		}
		if d <= 0 || d > 60*24*time.Hour {
			return Limit{}, false
		}
		return Limit{Kind: KindCodex, ResetsAt: now.Add(d).UTC(), Utilization: -1, Message: cutText(text)}, true
	}
	return Limit{}, false
}
