package loganalysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// The codex-json profile: OpenAI's Codex CLI run as `codex exec --json …`
// writes one JSON event per line on stdout (seen with codex-cli 0.169.0):
//
//	{"type":"thread.started","thread_id":"…"}            the session (a resumed run prints the same id)
//	{"type":"turn.started"}
//	{"type":"item.started"|"item.updated"|"item.completed","item":{"id":…,"type":…}}
//	{"type":"turn.completed","usage":{"input_tokens":…,"cached_input_tokens":…,"output_tokens":…,"reasoning_output_tokens":…}}
//	{"type":"error","message":…} then {"type":"turn.failed","error":{"message":…}}
//
// An item of type "error" is a non-fatal warning, never a failure; stderr's
// plain-text lines (WARNING: …) land in the same log and are skipped. A
// command_execution item started and not completed is a tool call in
// flight. A run's outcome is read the way Claude's result line is, into the
// same Claude struct (Subtype "turn.completed" or "turn.failed"), so the
// engine treats both profiles alike.

// ProfileCodex is the Codex CLI's profile name.
const ProfileCodex = "codex-json"

type codexLine struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage *struct {
		InputTokens           int64 `json:"input_tokens"`
		CachedInputTokens     int64 `json:"cached_input_tokens"`
		OutputTokens          int64 `json:"output_tokens"`
		ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
	} `json:"usage"`
	Item *struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Command string `json:"command"`
		Status  string `json:"status"`
	} `json:"item"`
}

// codexState follows a codex-json log line by line (Analyze and Scanner
// share it).
type codexState struct {
	thread     string   // the latest thread.started's id
	run        *Claude  // the current run's outcome so far (nil: no turn ended)
	runLine    []byte   // the line that decided it (Analyze only)
	turns      int      // turns ended in the current run
	tokens     [4]int64 // input, cached, output, reasoning of the current run
	lastErr    string   // the latest top-level error's message in the current turn
	tools      []Tool   // command executions started and not completed
	malformed  int      // lines that looked like JSON objects and were not
	sawAnyJSON bool
}

func (st *codexState) line(line []byte) (lineKind, *Claude) {
	line = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), utf8BOM))
	if len(line) == 0 || line[0] != '{' {
		return kindOther, nil // stderr's plain text
	}
	var cl codexLine
	if err := json.Unmarshal(line, &cl); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			st.malformed++
			return kindOther, nil
		}
	}
	st.sawAnyJSON = true
	switch cl.Type {
	case "thread.started":
		if cl.ThreadID != "" {
			st.thread = cl.ThreadID
		}
		// A new run (a resume prints the same id): what an earlier run
		// decided no longer does, and its calls in flight never end.
		st.run, st.runLine, st.turns, st.tokens, st.lastErr, st.tools = nil, nil, 0, [4]int64{}, "", nil
		return kindInit, nil
	case "turn.started":
		st.lastErr = ""
	case "error":
		st.lastErr = cl.Message
	case "turn.completed", "turn.failed":
		st.turns++
		if u := cl.Usage; u != nil {
			st.tokens[0] += u.InputTokens
			st.tokens[1] += u.CachedInputTokens
			st.tokens[2] += u.OutputTokens
			st.tokens[3] += u.ReasoningOutputTokens
		}
		c := &Claude{Subtype: cl.Type, NumTurns: st.turns, SessionID: st.thread,
			InputTokens: st.tokens[0], CachedTokens: st.tokens[1], OutputTokens: st.tokens[2], ReasoningTokens: st.tokens[3]}
		if cl.Type == "turn.failed" {
			c.IsError = true
			msg := st.lastErr
			if cl.Error != nil && cl.Error.Message != "" {
				msg = cl.Error.Message
			}
			c.Result = cut(msg, maxResultText)
		}
		st.run, st.runLine, st.tools = c, line, nil
		return kindResult, c
	case "item.started", "item.updated", "item.completed":
		it := cl.Item
		if it == nil || it.Type != "command_execution" || it.ID == "" {
			return kindOther, nil // an "error" item is a warning: nothing to do
		}
		if cl.Type == "item.completed" || it.Status == "completed" || it.Status == "failed" {
			for i := range st.tools {
				if st.tools[i].ID == it.ID {
					st.tools = append(st.tools[:i], st.tools[i+1:]...)
					break
				}
			}
			return kindOther, nil
		}
		for _, t := range st.tools {
			if t.ID == it.ID {
				return kindOther, nil
			}
		}
		name := "command"
		if f := strings.Fields(it.Command); len(f) > 0 {
			name = f[0]
			if (name == "bash" || name == "sh" || name == "/bin/bash" || name == "/bin/sh") && len(f) > 2 && f[1] == "-lc" {
				if g := strings.Fields(strings.Trim(strings.Join(f[2:], " "), `'"`)); len(g) > 0 {
					name = g[0]
				}
			}
		}
		st.tools = append(st.tools, Tool{ID: it.ID, Name: name})
	}
	return kindOther, nil
}

func analyzeCodex(tail []byte) Result {
	var st codexState
	var last []byte
	eachLine(tail, func(line []byte) {
		if !blank(line) {
			last = line
		}
		st.line(line)
	})
	res := Result{SessionID: st.thread, Malformed: st.malformed}
	if st.run == nil {
		res.Verdict = Interrupted
		res.Line = lineText(last)
		return res
	}
	res.Claude = st.run
	res.Line = lineText(st.runLine)
	res.Verdict = Completed
	if st.run.Failed() {
		res.Verdict = Error
	}
	return res
}
