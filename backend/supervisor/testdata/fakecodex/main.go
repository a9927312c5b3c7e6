// Command fakecodex stands in for OpenAI's Codex CLI in tests: run as
// `codex exec --json [options] [resume <thread_id>] <prompt>`, it writes the
// same JSON events on stdout (codex-cli 0.169.0's shapes) and plain-text
// WARNING lines on stderr, and appends one JSON line per run to
// $FAKE_CODEX_RECORD saying how it was called (args, cwd, resumed thread).
// Like the real CLI with a non-TTY stdin, it reads stdin to EOF before it
// starts: an agent given an open pipe would hang here.
//
// $FAKE_CODEX_MODE (first run) and $FAKE_CODEX_RESUME_MODE (resumed runs,
// default: the same):
//
//	success       a command, an agent message, turn.completed, exit 0
//	turn-failed   a top-level error, then turn.failed, exit 1
//	warning       an error item (a warning), then turn.completed, exit 0
//	silent        thread.started, turn.started, then hangs
//	long-command  a command_execution that runs a silent child for
//	              $FAKE_CODEX_COMMAND_SECONDS (default 2), or until the
//	              file $FAKE_CODEX_RELEASE exists, then turn.completed
//	usage-limit   the usage-limit error and turn.failed, exit 1; the reset
//	              is $FAKE_CODEX_RESETS_AT (epoch s; default in 2 h)
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"
)

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func main() {
	_, _ = io.Copy(io.Discard, os.Stdin) // as the real CLI does with a non-TTY stdin
	resume := ""
	for i, a := range os.Args {
		if a == "resume" && i+1 < len(os.Args) {
			resume = os.Args[i+1]
		}
	}
	mode := os.Getenv("FAKE_CODEX_MODE")
	if m := os.Getenv("FAKE_CODEX_RESUME_MODE"); resume != "" && m != "" {
		mode = m
	}
	cwd, _ := os.Getwd()
	n := 1
	if rec := os.Getenv("FAKE_CODEX_RECORD"); rec != "" {
		if b, err := os.ReadFile(rec); err == nil {
			for _, c := range b {
				if c == '\n' {
					n++
				}
			}
		}
		if f, err := os.OpenFile(rec, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
			b, _ := json.Marshal(map[string]any{"args": os.Args[1:], "cwd": cwd, "resume": resume, "pid": os.Getpid()})
			f.Write(append(b, '\n'))
			f.Close()
		}
	}
	thread := fmt.Sprintf("0199a213-0000-7000-8000-%012d", n)
	if resume != "" {
		thread = resume // a resumed run prints the same id
	}
	fmt.Fprintln(os.Stderr, "WARNING: proceeding, even though we could not update PATH: Permission denied (os error 13)")
	emit(map[string]any{"type": "thread.started", "thread_id": thread})
	emit(map[string]any{"type": "turn.started"})
	done := func() {
		emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_9", "type": "agent_message", "text": "Done; no error remains."}})
		emit(map[string]any{"type": "turn.completed", "usage": map[string]any{"input_tokens": 1000, "cached_input_tokens": 800,
			"output_tokens": 50, "reasoning_output_tokens": 20}})
	}
	switch mode {
	case "success":
		emit(map[string]any{"type": "item.started", "item": map[string]any{"id": "item_1", "type": "command_execution",
			"command": "bash -lc 'ls'", "aggregated_output": "", "exit_code": nil, "status": "in_progress"}})
		emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_1", "type": "command_execution",
			"command": "bash -lc 'ls'", "aggregated_output": "README.md\n", "exit_code": 0, "status": "completed"}})
		done()
	case "turn-failed":
		emit(map[string]any{"type": "error", "message": "stream error: unexpected status 401 Unauthorized"})
		emit(map[string]any{"type": "turn.failed", "error": map[string]any{"message": "stream error: unexpected status 401 Unauthorized"}})
		os.Exit(1)
	case "warning":
		emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_0", "type": "error",
			"message": "Model metadata for `local` not found. Defaulting to fallback metadata."}})
		done()
	case "long-command":
		secs := 2
		if v, err := strconv.Atoi(os.Getenv("FAKE_CODEX_COMMAND_SECONDS")); err == nil {
			secs = v
		}
		emit(map[string]any{"type": "item.started", "item": map[string]any{"id": "item_2", "type": "command_execution",
			"command": "bash -lc 'make test'", "aggregated_output": "", "exit_code": nil, "status": "in_progress"}})
		if f := os.Getenv("FAKE_CODEX_RELEASE"); f != "" {
			// The command runs until the test creates this file.
			_ = exec.Command("sh", "-c", `while [ ! -e "$0" ]; do sleep 0.05; done`, f).Run()
		} else {
			_ = exec.Command("sleep", strconv.Itoa(secs)).Run()
		}
		emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_2", "type": "command_execution",
			"command": "bash -lc 'make test'", "aggregated_output": "PASS\n", "exit_code": 0, "status": "completed"}})
		done()
	case "usage-limit":
		msg := usageLimitMessage()
		emit(map[string]any{"type": "error", "message": msg})
		emit(map[string]any{"type": "turn.failed", "error": map[string]any{"message": msg}})
		os.Exit(1)
	default: // silent
		time.Sleep(time.Hour)
	}
}

// usageLimitMessage is what codex-cli 0.169.0 says when its usage limit is
// reached (a Plus plan), the reset $FAKE_CODEX_RESETS_AT (epoch s; default
// in 2 h) in local time: "9:36 AM" the same day, "Nov 29th, 2026 7:49 AM"
// another.
func usageLimitMessage() string {
	now := time.Now()
	reset := now.Add(2 * time.Hour)
	if v, err := strconv.ParseInt(os.Getenv("FAKE_CODEX_RESETS_AT"), 10, 64); err == nil {
		reset = time.Unix(v, 0)
	}
	reset = reset.Local()
	at := reset.Format("3:04 PM")
	if y, m, d := reset.Date(); y != now.Year() || m != now.Month() || d != now.Day() {
		suffix := "th"
		switch {
		case d%100 >= 11 && d%100 <= 13:
		case d%10 == 1:
			suffix = "st"
		case d%10 == 2:
			suffix = "nd"
		case d%10 == 3:
			suffix = "rd"
		}
		at = reset.Format("Jan 2") + suffix + reset.Format(", 2006 3:04 PM")
	}
	return "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at " + at + "."
}
