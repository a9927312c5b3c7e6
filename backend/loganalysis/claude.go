package loganalysis

import (
	"bytes"
	"encoding/json"
	"errors"
)

// streamLine is the part of a Claude Code stream-json line we read. Other
// fields (the message itself, usage, …) are skipped.
type streamLine struct {
	Type         string  `json:"type"`
	Subtype      string  `json:"subtype"`
	SessionID    string  `json:"session_id"`
	IsError      bool    `json:"is_error"`
	NumTurns     int     `json:"num_turns"`
	DurationMs   int64   `json:"duration_ms"`
	TotalCostUSD float64 `json:"total_cost_usd"`
	Result       string  `json:"result"`
}

type lineKind int

const (
	kindOther  lineKind = iota // not JSON, or a line that decides nothing
	kindInit                   // {"type":"system","subtype":"init",…}: a run begins
	kindResult                 // {"type":"result",…}: a run ends
)

var utf8BOM = []byte("\xef\xbb\xbf")

// parseClaudeLine parses one line (without its newline). Lines that are not
// a JSON object are kindOther with no session id.
func parseClaudeLine(line []byte) (lineKind, string, *Claude) {
	line = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), utf8BOM))
	if len(line) < 2 || line[0] != '{' || line[len(line)-1] != '}' {
		return kindOther, "", nil // cheap reject of text, junk and cut lines
	}
	var sl streamLine
	if err := json.Unmarshal(line, &sl); err != nil {
		// A field of an unexpected type is skipped and the rest of the
		// object still decoded; anything else is not JSON.
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return kindOther, "", nil
		}
	}
	switch {
	case sl.Type == "system" && sl.Subtype == "init":
		return kindInit, sl.SessionID, nil
	case sl.Type == "result":
		return kindResult, sl.SessionID, &Claude{
			Subtype:      sl.Subtype,
			IsError:      sl.IsError,
			NumTurns:     sl.NumTurns,
			DurationMs:   sl.DurationMs,
			TotalCostUSD: sl.TotalCostUSD,
			Result:       cut(sl.Result, maxResultText),
			SessionID:    sl.SessionID,
		}
	default:
		return kindOther, sl.SessionID, nil
	}
}

// mayDecide reports whether a line may be an init or a result line: it
// names "init" or "result", or it has a \u escape that could spell either.
// Other lines need no parsing to be read for their verdict; this saves
// most of the cost, assistant and tool lines being most of a log.
func mayDecide(line []byte) bool {
	return bytes.Contains(line, quotedResult) || bytes.Contains(line, quotedInit) ||
		bytes.Contains(line, unicodeEscape)
}

var (
	quotedResult  = []byte(`"result"`)
	quotedInit    = []byte(`"init"`)
	unicodeEscape = []byte(`\u`)
)

// claudeState follows a stream-json log line by line; Analyze and Scanner
// share it so they agree.
type claudeState struct {
	initSID    string  // session_id of the latest init line
	anySID     string  // session_id of the latest line carrying one, while no init named one (all: true)
	result     *Claude // result of the latest run; nil if it has none (yet)
	resultLine []byte  // its line (Analyze only; a Scanner reuses its buffer)
}

// line takes one line and returns what it was. all parses every line, for
// anySID; otherwise only the lines that may be init or result lines.
func (st *claudeState) line(line []byte, all bool) (lineKind, *Claude) {
	if !all && !mayDecide(line) {
		return kindOther, nil
	}
	kind, sid, c := parseClaudeLine(line)
	if sid != "" {
		st.anySID = sid
	}
	switch kind {
	case kindInit:
		// A new run: an earlier result no longer decides, even when this
		// init names no session.
		if sid != "" {
			st.initSID = sid
		}
		st.result, st.resultLine = nil, nil
	case kindResult:
		st.result, st.resultLine = c, line
	}
	return kind, c
}

// sessionID is the latest init's session id or, when no init named one, the
// latest session id seen (valid only if every line was parsed while
// initSID was empty).
func (st *claudeState) sessionID() string {
	if st.initSID != "" {
		return st.initSID
	}
	return st.anySID
}
