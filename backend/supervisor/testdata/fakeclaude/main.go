// Command fakeclaude stands in for the Claude Code CLI in tests: it writes
// the same stream-json lines (`claude -p --verbose --output-format
// stream-json`), takes `--resume ID`, and appends one JSON line per run to
// $FAKE_CLAUDE_RECORD saying how it was called (args, cwd, resumed id).
//
// $FAKE_CLAUDE_MODE (first run) and $FAKE_CLAUDE_RESUME_MODE (resumed runs,
// default: the same) choose what it does:
//
//	success            a success result whose text mentions "error", exit 0
//	error              an error_during_execution result, exit 1
//	silent             init and an assistant line, then hangs without a result
//	hang-after-result  a success result, then stays alive (as MCP servers make it)
//	tool               a Bash tool_use, task_started, a silent child process for
//	                   $FAKE_CLAUDE_TOOL_SECONDS (default 2), task_notification,
//	                   the tool_result, then a success result: a long test suite
//	                   (with $FAKE_CLAUDE_AFTER_TOOL=hang it hangs after the
//	                   tool_result instead of finishing)
//
// $FAKE_CLAUDE_COST and $FAKE_CLAUDE_TURNS set what a run reports it cost
// and how many turns it took (default 0.0123 and 3). Given --max-budget-usd
// or --max-turns, a run that reaches one ends, as the real CLI does, with
// an error_max_budget_usd or error_max_turns result and exit code 1 instead
// of its success result.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"
)

func line(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func main() {
	resume := ""
	maxBudget, maxTurns := 0.0, 0
	for i, a := range os.Args {
		if i+1 >= len(os.Args) {
			break
		}
		switch a {
		case "--resume":
			resume = os.Args[i+1]
		case "--max-budget-usd":
			maxBudget, _ = strconv.ParseFloat(os.Args[i+1], 64)
		case "--max-turns":
			maxTurns, _ = strconv.Atoi(os.Args[i+1])
		}
	}
	cost, turns := 0.0123, 3
	if v, err := strconv.ParseFloat(os.Getenv("FAKE_CLAUDE_COST"), 64); err == nil {
		cost = v
	}
	if v, err := strconv.Atoi(os.Getenv("FAKE_CLAUDE_TURNS")); err == nil {
		turns = v
	}
	mode := os.Getenv("FAKE_CLAUDE_MODE")
	if m := os.Getenv("FAKE_CLAUDE_RESUME_MODE"); resume != "" && m != "" {
		mode = m
	}
	cwd, _ := os.Getwd()
	n := 1
	if rec := os.Getenv("FAKE_CLAUDE_RECORD"); rec != "" {
		if b, err := os.ReadFile(rec); err == nil {
			for _, c := range b {
				if c == '\n' {
					n++
				}
			}
		}
		f, err := os.OpenFile(rec, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err == nil {
			b, _ := json.Marshal(map[string]any{"args": os.Args[1:], "cwd": cwd, "resume": resume, "pid": os.Getpid()})
			f.Write(append(b, '\n'))
			f.Close()
		}
	}
	// A resumed run may bring a new session id, as the real CLI does.
	session := fmt.Sprintf("sess-%d", n)
	line(map[string]any{"type": "system", "subtype": "init", "session_id": session, "cwd": cwd, "model": "fake"})
	line(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{
		"content": []any{map[string]any{"type": "text", "text": "Looking at the error handling now."}}}})
	result := func(subtype string, isError bool, text string) {
		limited := ""
		switch {
		case maxBudget > 0 && cost >= maxBudget:
			limited = "error_max_budget_usd"
		case maxTurns > 0 && turns >= maxTurns:
			limited = "error_max_turns"
		}
		if limited != "" {
			subtype, isError, text = limited, true, ""
		}
		line(map[string]any{"type": "result", "subtype": subtype, "is_error": isError, "session_id": session,
			"duration_ms": 1234, "num_turns": turns, "total_cost_usd": cost, "result": text,
			"usage": map[string]any{"input_tokens": 100, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 300, "output_tokens": 50}})
		if limited != "" {
			os.Exit(1)
		}
	}
	switch mode {
	case "success":
		result("success", false, "Fixed the error in main.go; no errors remain.")
	case "error":
		result("error_during_execution", true, "tool failed")
		os.Exit(1)
	case "hang-after-result":
		result("success", false, "done")
		time.Sleep(time.Hour)
	case "tool":
		secs := 2
		if v, err := strconv.Atoi(os.Getenv("FAKE_CLAUDE_TOOL_SECONDS")); err == nil {
			secs = v
		}
		id := "toolu_" + session
		line(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{
			"content": []any{map[string]any{"type": "tool_use", "id": id, "name": "Bash",
				"input": map[string]any{"command": "make test"}}}}})
		child := exec.Command("sleep", strconv.Itoa(secs))
		if err := child.Start(); err != nil {
			os.Exit(2)
		}
		time.Sleep(100 * time.Millisecond)
		line(map[string]any{"type": "system", "subtype": "task_started", "tool_use_id": id, "task_type": "local_bash", "session_id": session})
		_ = child.Wait()
		line(map[string]any{"type": "system", "subtype": "task_notification", "status": "completed", "tool_use_id": id, "session_id": session})
		line(map[string]any{"type": "user", "session_id": session, "message": map[string]any{
			"content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": "PASS"}}}})
		if os.Getenv("FAKE_CLAUDE_AFTER_TOOL") == "hang" {
			time.Sleep(time.Hour)
		}
		result("success", false, "All tests pass.")
	default: // silent
		time.Sleep(time.Hour)
	}
}
