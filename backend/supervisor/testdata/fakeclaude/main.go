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
//	permission         a Bash tool_use, then the PermissionRequest and
//	                   Notification (permission_prompt) hooks, then waits
//	rate-limit         an api_retry line (429, retried in 60 s), then waits
//	                   $FAKE_CLAUDE_TOOL_SECONDS (default 2) and finishes
//	permission-tool, ask-question, usage-limit, usage-limit-weekly,
//	usage-warning      see permission.go
//
// Hooks are posted as the real CLI posts them (a command hook is run with the
// input on stdin): to the url of the http hook
// that --settings gives for the event, with its headers, $VARS filled in
// from the environment for those listed in allowedEnvVars.
//
// $FAKE_CLAUDE_COST and $FAKE_CLAUDE_TURNS set what a run reports it cost
// and how many turns it took (default 0.0123 and 3). Given --max-budget-usd
// or --max-turns, a run that reaches one ends, as the real CLI does, with
// an error_max_budget_usd or error_max_turns result and exit code 1 instead
// of its success result.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// hookConf is one hook of --settings: http, or command.
type hookConf struct {
	Type           string            `json:"type"`
	Command        string            `json:"command"`
	URL            string            `json:"url"`
	Headers        map[string]string `json:"headers"`
	AllowedEnvVars []string          `json:"allowedEnvVars"`
}

// postHook posts the hook input for event to every http hook --settings
// names for it; what the answer is does not matter here.
func postHook(event string, input map[string]any) {
	var settings struct {
		Hooks map[string][]struct {
			Hooks []hookConf `json:"hooks"`
		} `json:"hooks"`
	}
	for i, a := range os.Args {
		if a == "--settings" && i+1 < len(os.Args) {
			_ = json.Unmarshal([]byte(os.Args[i+1]), &settings)
		}
	}
	input["hook_event_name"] = event
	body, _ := json.Marshal(input)
	for _, m := range settings.Hooks[event] {
		for _, h := range m.Hooks {
			if h.Type == "command" {
				// As the real CLI runs one: through the shell, the input on
				// stdin, in this process's environment.
				cmd := exec.Command("sh", "-c", h.Command)
				cmd.Stdin = bytes.NewReader(body)
				_ = cmd.Run()
				continue
			}
			if h.Type != "http" {
				continue
			}
			req, err := http.NewRequest(http.MethodPost, h.URL, bytes.NewReader(body))
			if err != nil {
				continue
			}
			req.Header.Set("Content-Type", "application/json")
			for k, v := range h.Headers {
				for _, name := range h.AllowedEnvVars {
					v = strings.ReplaceAll(v, "${"+name+"}", os.Getenv(name))
					v = strings.ReplaceAll(v, "$"+name, os.Getenv(name))
				}
				req.Header.Set(k, v)
			}
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}
}

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
	// A resumed run may bring a new session id, as the real CLI does (a
	// UUID, as the engine takes no other).
	session := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
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
	case "permission":
		line(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{
			"content": []any{map[string]any{"type": "tool_use", "id": "toolu_p", "name": "Bash",
				"input": map[string]any{"command": "rm -rf build"}}}}})
		base := map[string]any{"session_id": session, "transcript_path": cwd + "/t.jsonl", "cwd": cwd}
		in := map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "rm -rf build"}, "permission_suggestions": []any{}}
		for k, v := range base {
			in[k] = v
		}
		postHook("PermissionRequest", in)
		note := map[string]any{"message": "Claude needs your permission to use Bash", "title": "Claude Code", "notification_type": "permission_prompt"}
		for k, v := range base {
			note[k] = v
		}
		postHook("Notification", note)
		time.Sleep(time.Hour)
	case "rate-limit":
		line(map[string]any{"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 10, "retry_delay_ms": 60000,
			"error_status": 429, "error": "rate_limit", "session_id": session, "uuid": "u1"})
		secs := 2
		if v, err := strconv.Atoi(os.Getenv("FAKE_CLAUDE_TOOL_SECONDS")); err == nil {
			secs = v
		}
		time.Sleep(time.Duration(secs) * time.Second)
		line(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{
			"content": []any{map[string]any{"type": "text", "text": "Done after the wait."}}}})
		result("success", false, "done")
	case "permission-tool", "ask-question":
		permissionMode(mode, session, cost, turns)
	case "usage-limit", "usage-limit-weekly", "usage-warning":
		usageMode(mode, session, cost, turns)
	default: // silent
		time.Sleep(time.Hour)
	}
}
