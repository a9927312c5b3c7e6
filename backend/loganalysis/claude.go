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
	Usage        struct {
		InputTokens              int64 `json:"input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
	} `json:"usage"`
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
			InputTokens:  sl.Usage.InputTokens + sl.Usage.CacheCreationInputTokens,
			CachedTokens: sl.Usage.CacheReadInputTokens,
			OutputTokens: sl.Usage.OutputTokens,
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

	trackTools bool   // follow tool calls (Scanner)
	tools      []Tool // calls started and not finished, oldest first
	retry      *Retry // the API call being retried, while no other line followed (Scanner)
}

// Retry is Claude Code's stream-json {"type":"system","subtype":"api_retry"}
// line: an API call failed and is retried after RetryDelayMs. Error is
// rate_limit, overloaded, authentication_failed, server_error or unknown.
type Retry struct {
	Attempt      int    `json:"attempt"`
	MaxRetries   int    `json:"max_retries"`
	RetryDelayMs int64  `json:"retry_delay_ms"`
	ErrorStatus  int    `json:"error_status"`
	Error        string `json:"error"`
}

// RateLimited: the retry waits for a rate limit or an overloaded API (not a
// failure of the agent).
func (r Retry) RateLimited() bool {
	return r.Error == "rate_limit" || r.Error == "overloaded" || r.ErrorStatus == 429 || r.ErrorStatus == 529
}

var quotedAPIRetry = []byte(`"api_retry"`)

// retryLine follows api_retry lines: one sets the retry, any other line
// that is not blank ends it (the call went through, or the run went on).
func (st *claudeState) retryLine(line []byte) {
	if !bytes.Contains(line, quotedAPIRetry) {
		if len(bytes.TrimSpace(line)) > 0 {
			st.retry = nil
		}
		return
	}
	var rl struct {
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
		Retry
	}
	line = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), utf8BOM))
	if err := json.Unmarshal(line, &rl); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			st.retry = nil
			return
		}
	}
	if rl.Type != "system" || rl.Subtype != "api_retry" {
		st.retry = nil
		return
	}
	r := rl.Retry
	st.retry = &r
}

// Tool is a tool call in flight: an assistant tool_use without its
// tool_result yet, or a background task (system task_started) without its
// task_notification.
type Tool struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Task bool   `json:"task,omitempty"` // a task_started (a long Bash tool) rather than the tool_use alone

	onlyTask bool // known from its task_started only
}

// toolLine is the part of a line that says a tool call started or ended.
type toolLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	ToolUseID string `json:"tool_use_id"`
	TaskID    string `json:"task_id"`
	TaskType  string `json:"task_type"`
	Message   struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type contentItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	ToolUseID string `json:"tool_use_id"`
}

// mayTouchTools: a line that may start or end a tool call.
func mayTouchTools(line []byte) bool {
	return bytes.Contains(line, quotedToolUse) || bytes.Contains(line, toolResult) || bytes.Contains(line, taskPrefix) ||
		bytes.Contains(line, unicodeEscape)
}

var (
	quotedToolUse = []byte(`"tool_use"`)
	toolResult    = []byte(`tool_result`)
	taskPrefix    = []byte(`"task_`)
)

// tool updates the calls in flight with one line.
func (st *claudeState) tool(line []byte) {
	line = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), utf8BOM))
	if len(line) < 2 || line[0] != '{' {
		return
	}
	var tl toolLine
	if err := json.Unmarshal(line, &tl); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return
		}
	}
	switch {
	case tl.Type == "assistant" || tl.Type == "user":
		var items []contentItem
		if json.Unmarshal(tl.Message.Content, &items) != nil {
			return // a plain string content: no tool
		}
		for _, it := range items {
			switch {
			case it.Type == "tool_use" && it.ID != "":
				st.tools = append(st.tools, Tool{ID: it.ID, Name: it.Name})
			case it.Type == "tool_result":
				st.endTool(it.ToolUseID, false)
			}
		}
	case tl.Type == "system" && tl.Subtype == "task_started":
		id := firstOf(tl.ToolUseID, tl.TaskID)
		for i := range st.tools {
			if st.tools[i].ID == id {
				st.tools[i].Task = true
				return
			}
		}
		st.tools = append(st.tools, Tool{ID: id, Name: firstOf(tl.TaskType, "task"), Task: true, onlyTask: true})
	case tl.Type == "system" && tl.Subtype == "task_notification":
		st.endTool(firstOf(tl.ToolUseID, tl.TaskID), true)
	}
}

// endTool ends the call id (with task, only its background task: the
// tool_use stays in flight until its tool_result). A task's end that names
// no id ends the latest task.
func (st *claudeState) endTool(id string, task bool) {
	for i := len(st.tools) - 1; i >= 0; i-- {
		t := &st.tools[i]
		if id != "" && t.ID != id || id == "" && !(task && t.Task) {
			continue
		}
		if task && !t.onlyTask {
			t.Task = false
			return
		}
		st.tools = append(st.tools[:i], st.tools[i+1:]...)
		return
	}
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// line takes one line and returns what it was. all parses every line, for
// anySID; otherwise only the lines that may be init or result lines.
func (st *claudeState) line(line []byte, all bool) (lineKind, *Claude) {
	if st.trackTools && mayTouchTools(line) {
		st.tool(line)
	}
	if st.trackTools {
		st.retryLine(line)
	}
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
		st.tools = nil // a new run: calls of an earlier one will never end
	case kindResult:
		st.result, st.resultLine = c, line
		st.tools = nil
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
