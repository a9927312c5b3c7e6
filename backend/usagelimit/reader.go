package usagelimit

import (
	"bytes"
	"encoding/json"
	"sort"
	"sync"
	"time"
)

// Reader follows one agent's log line by line and keeps what it says of
// the account's windows and whether the current run was refused by one.
// Feed it complete lines (without their newline). Not safe for concurrent
// use.
type Reader struct {
	windows map[string]Window
	limit   *Limit
}

// NewReader returns an empty Reader.
func NewReader() *Reader { return &Reader{windows: map[string]Window{}} }

var (
	quotedInit          = []byte(`"init"`)
	quotedThreadStarted = []byte(`"thread.started"`)
)

// Claude takes one stream-json line; now is when it was written. It
// reports whether the line changed what the Reader knows.
func (r *Reader) Claude(line []byte, now time.Time) bool {
	if e, ok := ClaudeEvent(line); ok {
		for name, w := range e.Windows {
			r.windows[name] = w
		}
		if l, ok := e.Limit(); ok {
			if r.limit != nil && l.Message == "" {
				l.Message = r.limit.Message
			}
			r.limit = &l
		}
		return true
	}
	if l, ok := ClaudeResult(line, now); ok {
		if r.limit != nil {
			// The rejected event's reset is exact (seconds); the text's
			// only to the minute: keep the event's, add the words.
			ev := *r.limit
			ev.Message = l.Message
			if ev.ResetsAt.IsZero() {
				ev.ResetsAt = l.ResetsAt
			}
			if ev.Window == "" {
				ev.Window = l.Window
			}
			l = ev
		} else if w, ok := r.windows[l.Window]; ok {
			l.Utilization = w.Utilization
		}
		r.limit = &l
		return true
	}
	if bytes.Contains(line, quotedInit) && isType(line, "system", "init") {
		// A new run: a refusal of an earlier one no longer holds.
		changed := r.limit != nil
		r.limit = nil
		return changed
	}
	return false
}

// Codex takes one `codex exec --json` line; now is when it was written,
// loc the zone Codex ran in.
func (r *Reader) Codex(line []byte, now time.Time, loc *time.Location) bool {
	if l, ok := CodexLine(line, now, loc); ok {
		r.limit = &l
		return true
	}
	if bytes.Contains(line, quotedThreadStarted) && isType(line, "thread.started", "") {
		changed := r.limit != nil
		r.limit = nil
		return changed
	}
	return false
}

func isType(line []byte, typ, subtype string) bool {
	var v struct {
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
	}
	return decode(trimLine(line), &v) && v.Type == typ && (subtype == "" || v.Subtype == subtype)
}

// Limit is the limit that refused the current run, if one did.
func (r *Reader) Limit() (Limit, bool) {
	if r.limit == nil {
		return Limit{}, false
	}
	return *r.limit, true
}

// Windows are the account's windows as the latest events said, by name.
func (r *Reader) Windows() []Window {
	out := make([]Window, 0, len(r.windows))
	for _, w := range r.windows {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Accounts keeps the latest known windows of each account (a Claude login,
// a Codex login), for the header ("5-hour: 82 % · resets 14:00"). Safe for
// concurrent use.
type Accounts struct {
	mu sync.Mutex
	m  map[string]map[string]Window
}

// Observe records windows seen for account; a later observation of a
// window replaces the earlier one, except that a silent field (no reset,
// no utilization) keeps what was known.
func (a *Accounts) Observe(account string, ws ...Window) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[string]map[string]Window{}
	}
	m := a.m[account]
	if m == nil {
		m = map[string]Window{}
		a.m[account] = m
	}
	for _, w := range ws {
		old, ok := m[w.Name]
		if ok && old.ResetsAt.Equal(w.ResetsAt) || ok && w.ResetsAt.IsZero() {
			if w.ResetsAt.IsZero() {
				w.ResetsAt = old.ResetsAt
			}
			if w.Utilization < 0 {
				w.Utilization = old.Utilization
			}
			if w.Status == "" {
				w.Status = old.Status
			}
		}
		m[w.Name] = w
	}
}

// Names are the accounts with known windows, sorted.
func (a *Accounts) Names() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.m))
	for k := range a.m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Windows are account's known windows at now, by name: a window whose
// reset has passed is fresh again (allowed, nothing used, reset unknown).
func (a *Accounts) Windows(account string, now time.Time) []Window {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Window, 0, len(a.m[account]))
	for _, w := range a.m[account] {
		if !w.ResetsAt.IsZero() && !now.Before(w.ResetsAt) {
			w = Window{Name: w.Name, Status: Allowed, Utilization: 0}
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// MarshalJSON of a Limit keeps an unknown reset out of the JSON.
func (l Limit) MarshalJSON() ([]byte, error) {
	type plain Limit
	v := struct {
		plain
		ResetsAt *time.Time `json:"resetsAt,omitempty"`
		Label    string     `json:"label,omitempty"`
	}{plain: plain(l), Label: l.Label()}
	if !l.ResetsAt.IsZero() {
		v.ResetsAt = &l.ResetsAt
	}
	return json.Marshal(v)
}
