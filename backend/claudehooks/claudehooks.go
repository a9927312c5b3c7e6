// Package claudehooks is Shepherd's side of Claude Code's hooks (SPEC
// "Attention"): the settings that make a Claude Code agent POST its
// Notification, PermissionRequest, Stop and StopFailure hooks to the engine
// with the agent's own credential, and the reading of what it sends — which
// says, in words, what the agent waits for.
//
// The shapes are Claude Code's own (checked against the CLI from npm,
// version 2.1): every hook input carries session_id, transcript_path, cwd and
// hook_event_name; Notification adds message, title and notification_type
// (permission_prompt, idle_prompt, auth_success, elicitation_dialog, …);
// PermissionRequest adds tool_name and tool_input; StopFailure (a turn ended
// by an API error) adds error (rate_limit, overloaded,
// authentication_failed, billing_error, server_error, …) and error_details.
// An HTTP hook's answer of 200 with an empty body changes nothing in the
// agent: Shepherd only listens.
package claudehooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"shepherd/backend/jsonone"
)

// Events are the hooks Shepherd installs.
var Events = []string{"Notification", "PermissionRequest", "Stop", "StopFailure"}

// TokenEnv is the variable that holds the agent's credential, which Claude
// Code puts in the hook's Authorization header (only the variables a hook
// lists in allowedEnvVars are filled in).
const TokenEnv = "SHEPHERD_AGENT_TOKEN"

// Path is where the engine's API receives the hooks.
const Path = "/v1/hooks/claude"

// HookCommand is the command line of a command hook that posts its input
// (on stdin) to the engine's API on its Unix socket: this executable's
// `hook claude` (the shepherd-engine binary; tests replace it).
var HookCommand = func() string {
	exe, err := os.Executable()
	if err != nil {
		exe = "shepherd-engine"
	}
	return "'" + strings.ReplaceAll(exe, "'", `'\''`) + "' hook claude"
}

// Settings is the JSON for Claude Code's --settings that installs the hooks,
// posting to the engine's API at apiURL: an http hook for an API on TCP
// (http://127.0.0.1:PORT), a command hook (HookCommand, which reads the
// agent's SHEPHERD_API_URL and credential) for one on a Unix socket
// (unix://PATH: a host's engine, which listens on nothing else).
func Settings(apiURL string) string {
	hook := map[string]any{
		"type":           "http",
		"url":            strings.TrimSuffix(apiURL, "/") + Path,
		"headers":        map[string]string{"Authorization": "Bearer $" + TokenEnv},
		"allowedEnvVars": []string{TokenEnv},
		"timeout":        5,
	}
	if strings.HasPrefix(apiURL, "unix://") {
		hook = map[string]any{"type": "command", "command": HookCommand(), "timeout": 5}
	}
	hooks := map[string]any{}
	for _, ev := range Events {
		hooks[ev] = []any{map[string]any{"hooks": []any{hook}}}
	}
	b, _ := json.Marshal(map[string]any{"hooks": hooks})
	return string(b)
}

// HasSettings reports whether args already give Claude Code a --settings of
// their own (then Shepherd's are not added: the CLI takes one).
func HasSettings(args []string) bool {
	for _, a := range args {
		if a == "--settings" || strings.HasPrefix(a, "--settings=") {
			return true
		}
	}
	return false
}

// Interactive reports whether args run Claude Code as an interactive session
// (not -p/--print): only then does a finished turn wait for the user.
func Interactive(args []string) bool {
	for _, a := range args {
		if a == "-p" || a == "--print" || strings.HasPrefix(a, "--print=") {
			return false
		}
	}
	return true
}

// Input is one hook's input, as Claude Code posts it.
type Input struct {
	Event            string `json:"hook_event_name"`
	SessionID        string `json:"session_id"`
	TranscriptPath   string `json:"transcript_path"`
	Cwd              string `json:"cwd"`
	Message          string `json:"message"`
	Title            string `json:"title"`
	NotificationType string `json:"notification_type"`
	ToolName         string `json:"tool_name"`
	Error            string `json:"error"`
	ErrorDetails     string `json:"error_details"`
	StopHookActive   bool   `json:"stop_hook_active"`
}

// MaxBody bounds a hook's input. A PermissionRequest carries the tool's
// input, which can be a whole file, but Shepherd reads only a few short
// fields of it; a larger input is refused (413) and the agent goes on as
// it would.
const MaxBody = 256 << 10

// MaxField bounds each field Shepherd keeps of a hook's input: what it
// writes in the activity, a notification and events.jsonl is the agent's
// own text, so it is capped.
const MaxField = 256

// Parse reads one hook input; it names what is wrong with one it cannot use.
// Fields Shepherd does not read are ignored (Claude Code adds more).
func Parse(b []byte) (Input, error) {
	var in Input
	if len(b) > MaxBody {
		return in, fmt.Errorf("hook input is larger than %d bytes", MaxBody)
	}
	if err := jsonone.Decode(b, &in, false); err != nil {
		return in, fmt.Errorf("hook input is not one JSON object: %w", err)
	}
	if in.Event == "" {
		return in, errors.New("hook input has no hook_event_name")
	}
	for _, f := range []*string{&in.SessionID, &in.TranscriptPath, &in.Cwd, &in.Message, &in.Title,
		&in.NotificationType, &in.ToolName, &in.Error, &in.ErrorDetails} {
		*f = Clip(*f, MaxField)
	}
	known := false
	for _, ev := range Events {
		known = known || ev == in.Event
	}
	if !known {
		return in, fmt.Errorf("hook_event_name %q is not one Shepherd installs (%s)", in.Event, strings.Join(Events, ", "))
	}
	return in, nil
}

// Kinds of waiting.
const (
	WaitPermission = "permission"
	WaitInput      = "input"
	WaitRateLimit  = "rate limit"
)

// Waiting is what an agent waits for, from a hook (or its log).
type Waiting struct {
	Kind string // WaitPermission, WaitInput, WaitRateLimit
	// What in words, after "waiting: ": "permission for Bash", "input",
	// "rate limit until 14:05".
	What  string
	Until *time.Time // rate limit: when it is retried, if known
	// NeedsYou: the user has something to do (a permission, a question);
	// a rate limit passes by itself.
	NeedsYou bool
	Since    time.Time
	// Held: the agent waits on Shepherd's permission tool, which alone ends
	// the wait (by its answer); the log growing or a hook does not.
	Held bool
}

// Verdict is what a hook input means for the agent: Wait set when it now
// waits; Clear when it no longer does (it went on); neither when the hook
// changes nothing.
type Verdict struct {
	Wait  *Waiting
	Clear bool
	// Failure: the turn ended on an API error that is not a rate limit
	// (authentication_failed, billing_error, …), in words.
	Failure string
}

// Judge reads a hook input at now; interactive says whether the agent is an
// interactive session (a finished turn then waits for input).
func Judge(in Input, now time.Time, interactive bool) Verdict {
	switch in.Event {
	case "PermissionRequest":
		what := "permission"
		if in.ToolName != "" {
			what += " for " + in.ToolName
		}
		return Verdict{Wait: &Waiting{Kind: WaitPermission, What: what, NeedsYou: true, Since: now}}
	case "Notification":
		switch in.NotificationType {
		case "permission_prompt":
			what := "permission"
			if tool := toolOf(in.Message); tool != "" {
				what += " for " + tool
			}
			return Verdict{Wait: &Waiting{Kind: WaitPermission, What: what, NeedsYou: true, Since: now}}
		case "idle_prompt", "elicitation_dialog":
			return Verdict{Wait: &Waiting{Kind: WaitInput, What: "input", NeedsYou: true, Since: now}}
		case "elicitation_complete", "elicitation_response", "auth_success":
			return Verdict{Clear: true}
		}
		return Verdict{}
	case "Stop":
		if interactive {
			return Verdict{Wait: &Waiting{Kind: WaitInput, What: "input", NeedsYou: true, Since: now}}
		}
		return Verdict{Clear: true}
	case "StopFailure":
		switch in.Error {
		case "rate_limit", "overloaded":
			return Verdict{Wait: RateLimit(in.Error, now, nil)}
		}
		what := in.Error
		if what == "" {
			what = "unknown"
		}
		if in.ErrorDetails != "" {
			what += ": " + in.ErrorDetails
		}
		v := Verdict{Failure: "API error " + what}
		if interactive {
			v.Wait = &Waiting{Kind: WaitInput, What: "input (API error " + in.Error + ")", NeedsYou: true, Since: now}
		}
		return v
	}
	return Verdict{}
}

// RateLimit is the waiting for a rate limit or an overloaded API (error is
// rate_limit or overloaded), retried at until when it is known.
func RateLimit(error string, now time.Time, until *time.Time) *Waiting {
	what := "rate limit"
	if error == "overloaded" {
		what = "API overloaded"
	}
	if until != nil {
		what += " until " + until.Local().Format("15:04:05")
	}
	return &Waiting{Kind: WaitRateLimit, What: what, Until: until, Since: now}
}

// toolOf finds the tool in Claude Code's permission message ("Claude needs
// your permission to use Bash").
func toolOf(msg string) string {
	const marker = "permission to use "
	i := strings.Index(msg, marker)
	if i < 0 {
		return ""
	}
	rest := strings.TrimSpace(msg[i+len(marker):])
	if j := strings.IndexAny(rest, " \t\n.,:;"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// Clip cuts s to at most n bytes, at a character boundary, marking a cut
// with "…".
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
