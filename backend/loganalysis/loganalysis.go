// Package loganalysis reads the tail of an agent's log and tells whether the
// agent completed, failed or was interrupted (SPEC "Log analysis and
// recovery"). It also learns what recovery needs from the log: for Claude
// Code's stream-json output, the session id of the latest run and the
// figures of its result line.
//
// The cost of an analysis does not grow with the log: Analyze reads at most
// the last TailBytes of the file. A Scanner does the same work on a log as it
// is written, so the supervisor learns the session id while the agent runs.
//
// Two profiles exist:
//
//   - "claude-stream-json": one JSON object per line. Only a parsed line of
//     type "result" decides completed or error, never a substring match. The
//     latest run decides: a result line followed by a later system/init line
//     (a resumed run still going) does not count.
//   - "generic" (also ""): error if the last non-empty line matches the error
//     pattern (default DefaultErrorPattern); else completed if a completion
//     pattern is set and any line of the tail matches it; else interrupted.
package loganalysis

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"shepherd/backend/logtail"
)

// Verdict is the outcome of an analysis.
type Verdict string

const (
	Completed   Verdict = "completed"   // the log shows the agent finished
	Error       Verdict = "error"       // the log shows the agent finished with an error
	Interrupted Verdict = "interrupted" // anything else: the log just stops
)

// TailBytes is the most Analyze reads of a log, from its end, and the longest
// line a Scanner keeps.
const TailBytes = 64 << 10

// Profile names.
const (
	ProfileClaude  = "claude-stream-json"
	ProfileGeneric = "generic"
)

// DefaultErrorPattern is the generic profile's error pattern when none is set.
// It is matched against the last non-empty line of the tail only.
const DefaultErrorPattern = `(?i)\b(error|fatal|panic|traceback)\b`

// Lengths kept of texts taken from the log, in bytes (cut on a rune boundary).
const (
	maxResultText = 500
	maxLineText   = 300
)

// Profile says how to read an agent's log.
type Profile struct {
	Name              string // "claude-stream-json" or "generic" ("" = generic)
	CompletionPattern string // generic: regexp matched per line on the tail; "" = none
	ErrorPattern      string // generic: regexp for the last non-empty line; "" = DefaultErrorPattern
}

// Claude is what a stream-json result line says.
type Claude struct {
	Subtype      string  `json:"subtype"`
	IsError      bool    `json:"isError"`
	NumTurns     int     `json:"numTurns"`
	DurationMs   int64   `json:"durationMs"`
	TotalCostUSD float64 `json:"totalCostUsd"`
	Result       string  `json:"result"` // the final text, cut to about 500 bytes
	SessionID    string  `json:"sessionId"`
	// Tokens of the run, from the result line's usage: input (cache
	// writes included), input read from the cache, output.
	InputTokens     int64 `json:"inputTokens"`
	CachedTokens    int64 `json:"cachedTokens"`
	OutputTokens    int64 `json:"outputTokens"`
	ReasoningTokens int64 `json:"reasoningTokens,omitempty"` // Codex
}

// Failed tells whether the result line reports an error: is_error true or a
// subtype starting with "error".
func (c *Claude) Failed() bool {
	return c.IsError || strings.HasPrefix(c.Subtype, "error")
}

// Result is the outcome of an analysis and what it learned.
type Result struct {
	Verdict Verdict
	// SessionID (claude-stream-json) is the session_id of the latest
	// system/init line in the tail; when the tail holds no init line (the
	// window cut it off), the session_id of the latest line carrying one.
	// "" for the generic profile or when the log names none.
	SessionID string
	// Claude is the deciding result line (claude-stream-json), nil if none.
	Claude *Claude
	// Line is the deciding line, cut to about 300 bytes, valid UTF-8, for
	// messages. For an interrupted verdict it is the last non-empty line
	// of the tail (context for a "silent since …" message), or "".
	Line string
	// Malformed counts the lines that looked like JSON events and were not
	// (codex-json): skipped, never a crash.
	Malformed int
}

// compiled is a validated profile.
type compiled struct {
	claude     bool
	codex      bool
	completion *regexp.Regexp // nil: none
	errorRe    *regexp.Regexp
}

// compile checks the profile and compiles the patterns it uses.
func (p Profile) compile() (*compiled, error) {
	c := &compiled{}
	switch p.Name {
	case ProfileClaude:
		c.claude = true
	case ProfileCodex:
		c.codex = true
	case "", ProfileGeneric:
	default:
		return nil, fmt.Errorf("unknown log profile %q (want %q, %q or %q)", p.Name, ProfileClaude, ProfileCodex, ProfileGeneric)
	}
	// The patterns are checked for both profiles: a bad one is a mistake
	// in the agent's settings even where this profile does not use it.
	if p.CompletionPattern != "" {
		re, err := compileCached(p.CompletionPattern)
		if err != nil {
			return nil, fmt.Errorf("invalid completion pattern %q: %w", p.CompletionPattern, err)
		}
		c.completion = re
	}
	errPat := p.ErrorPattern
	if errPat == "" {
		errPat = DefaultErrorPattern
	}
	re, err := compileCached(errPat)
	if err != nil {
		return nil, fmt.Errorf("invalid error pattern %q: %w", p.ErrorPattern, err)
	}
	c.errorRe = re
	return c, nil
}

// Compiled patterns, kept across analyses: an agent's patterns are compiled
// once, not on every stale check. Bounded: cleared when full.
var reCache struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}

const reCacheMax = 256

func compileCached(pattern string) (*regexp.Regexp, error) {
	reCache.Lock()
	re, ok := reCache.m[pattern]
	reCache.Unlock()
	if ok {
		return re, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	reCache.Lock()
	if reCache.m == nil || len(reCache.m) >= reCacheMax {
		reCache.m = make(map[string]*regexp.Regexp)
	}
	reCache.m[pattern] = re
	reCache.Unlock()
	return re, nil
}

// Validate reports an unknown profile name or a pattern that is not a valid
// regular expression, naming the pattern and why.
func (p Profile) Validate() error {
	_, err := p.compile()
	return err
}

// Analyze reads at most the last TailBytes of the log at path and analyzes
// them. A missing log is Interrupted with no error (the agent wrote nothing
// we can see); a log that cannot be read, or is not a regular file, is an
// error. An invalid profile is an error.
func Analyze(path string, p Profile) (Result, error) {
	c, err := p.compile()
	if err != nil {
		return Result{}, err
	}
	tail, off, err := logtail.Last(path, TailBytes)
	if err != nil {
		return Result{}, fmt.Errorf("log analysis: %w", err)
	}
	return analyze(tail, off == 0, c), nil
}

// AnalyzeTail analyzes a tail of a log already in memory. fromStart says the
// tail begins at the start of the log; when false its first line may be cut
// and is ignored. The last line needs no newline. Only an invalid profile is
// an error.
func AnalyzeTail(tail []byte, fromStart bool, p Profile) (Result, error) {
	c, err := p.compile()
	if err != nil {
		return Result{}, err
	}
	return analyze(tail, fromStart, c), nil
}

func analyze(tail []byte, fromStart bool, c *compiled) Result {
	if !fromStart {
		i := bytes.IndexByte(tail, '\n')
		if i < 0 {
			tail = nil // all one cut line
		} else {
			tail = tail[i+1:]
		}
	}
	switch {
	case c.claude:
		return analyzeClaude(tail)
	case c.codex:
		return analyzeCodex(tail)
	}
	return analyzeGeneric(tail, c)
}

// eachLine calls fn for each line of b, without its "\n" or "\r\n"; the
// last line needs no newline.
func eachLine(b []byte, fn func(line []byte)) {
	for len(b) > 0 {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		fn(bytes.TrimSuffix(line, []byte{'\r'}))
	}
}

func blank(line []byte) bool {
	return len(bytes.TrimSpace(line)) == 0
}

func analyzeClaude(tail []byte) Result {
	var st claudeState
	var last []byte
	eachLine(tail, func(line []byte) {
		if !blank(line) {
			last = line
		}
		st.line(line, false)
	})
	res := Result{SessionID: st.initSID}
	if res.SessionID == "" {
		// No init line in the tail (the window cut it off): the latest
		// line carrying a session id, looked for from the end.
		res.SessionID = lastSessionID(tail)
	}
	if st.result == nil {
		res.Verdict = Interrupted
		res.Line = lineText(last)
		return res
	}
	res.Claude = st.result
	res.Line = lineText(st.resultLine)
	res.Verdict = Completed
	if st.result.Failed() {
		res.Verdict = Error
	}
	return res
}

// lastSessionID returns the session_id of the last line of b carrying one.
func lastSessionID(b []byte) string {
	for len(b) > 0 {
		line := b
		if i := bytes.LastIndexByte(b[:len(b)-1], '\n'); i >= 0 {
			line, b = b[i+1:], b[:i+1]
		} else {
			b = nil
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte{'\n'}), []byte{'\r'})
		if _, sid, _ := parseClaudeLine(line); sid != "" {
			return sid
		}
	}
	return ""
}

func analyzeGeneric(tail []byte, c *compiled) Result {
	var last, done []byte
	eachLine(tail, func(line []byte) {
		if !blank(line) {
			last = line
		}
		if c.completion != nil && c.completion.Match(line) {
			done = line
		}
	})
	switch {
	case last != nil && c.errorRe.Match(last):
		return Result{Verdict: Error, Line: lineText(last)}
	case done != nil:
		return Result{Verdict: Completed, Line: lineText(done)}
	default:
		return Result{Verdict: Interrupted, Line: lineText(last)}
	}
}

// lineText makes a log line fit for a message: trimmed, valid UTF-8, short.
func lineText(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > maxLineText*4 { // bound the UTF-8 repair below
		b = b[:maxLineText*4]
	}
	return cut(strings.ToValidUTF8(string(b), "\uFFFD"), maxLineText)
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
