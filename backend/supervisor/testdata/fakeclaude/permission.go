package main

// The permission-tool and usage-limit modes, written as Claude Code 2.1.197
// writes them (checked against the real CLI, with a local MCP server and a
// stand-in of the API).
//
//	permission-tool   asks the tool named by --permission-prompt-tool
//	                  (mcp__<server>__<tool>, the server from --mcp-config:
//	                  JSON or a file, streamable HTTP, its headers' ${VAR}
//	                  and ${VAR:-default} filled in from the environment)
//	                  about each call of $FAKE_CLAUDE_CALLS (a JSON list of
//	                  {"tool":…,"input":{…}}; default one Bash `rm -rf
//	                  build`), one at a time, each after the previous one
//	                  ran, waiting as long as the tool takes; it follows the
//	                  JSON text of the answer: allow runs the call (with the
//	                  updatedInput, if any; a Bash command through sh -c),
//	                  deny writes the message as an is_error tool_result and
//	                  lists the call in the result's permission_denials,
//	                  deny with interrupt ends the run (error_during_execution,
//	                  exit 1)
//	ask-question      the same with one AskUserQuestion call (two options)
//	                  unless $FAKE_CLAUDE_CALLS says otherwise
//	usage-limit       a rejected five_hour rate_limit_event, the synthetic
//	                  assistant line, and the 429 result "You've hit your
//	                  session limit · resets 8:41am (UTC)", exit 1; the reset
//	                  is $FAKE_CLAUDE_RESETS_AT (epoch s; default in 2 h),
//	                  written in $TZ's zone (default UTC) as the CLI writes it
//	usage-limit-weekly  the same for seven_day ("weekly limit"; default in 3 days)
//	usage-warning     an allowed_warning rate_limit_event (utilization 0.91),
//	                  then a success result
//
// $FAKE_CLAUDE_PERMISSION_LOG, if set, gets one JSON line per call:
// {"call":{tool_name,input,tool_use_id},"answer":<the tool's text>}.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// out writes one stream-json line as the CLI does (no HTML escaping).
func out(v map[string]any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	os.Stdout.Write(b.Bytes())
}

func flagValue(name string) string {
	for i, a := range os.Args {
		if a == name && i+1 < len(os.Args) {
			return os.Args[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// expand fills in ${VAR} and ${VAR:-default} from the environment, as the
// CLI does for an MCP server's url and headers.
func expand(s string) string {
	return envRef.ReplaceAllStringFunc(s, func(m string) string {
		g := envRef.FindStringSubmatch(m)
		if v, ok := os.LookupEnv(g[1]); ok {
			return v
		}
		return g[2]
	})
}

type serverConf struct {
	Type    string            `json:"type"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// mcpServer finds the server named name in --mcp-config (each value JSON
// or a file).
func mcpServer(name string) (serverConf, error) {
	for i, a := range os.Args {
		if a != "--mcp-config" || i+1 >= len(os.Args) {
			continue
		}
		raw := []byte(os.Args[i+1])
		if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			b, err := os.ReadFile(os.Args[i+1])
			if err != nil {
				return serverConf{}, err
			}
			raw = b
		}
		var cfg struct {
			MCPServers map[string]serverConf `json:"mcpServers"`
		}
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return serverConf{}, fmt.Errorf("--mcp-config: %w", err)
		}
		if s, ok := cfg.MCPServers[name]; ok {
			if s.Type != "http" {
				return serverConf{}, fmt.Errorf("MCP server %q: type %q (only http here)", name, s.Type)
			}
			s.URL = expand(s.URL)
			for k, v := range s.Headers {
				s.Headers[k] = expand(v)
			}
			return s, nil
		}
	}
	return serverConf{}, fmt.Errorf("no MCP server %q in --mcp-config", name)
}

type headerTransport struct{ headers map[string]string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	r.Header.Set("User-Agent", "claude-code/2.1.197 (sdk-cli)")
	return http.DefaultTransport.RoundTrip(r)
}

// permissionTool connects to the permission tool's server.
func permissionTool(ctx context.Context) (*mcp.ClientSession, string, error) {
	full := flagValue("--permission-prompt-tool")
	rest, ok := strings.CutPrefix(full, "mcp__")
	server, tool, ok2 := strings.Cut(rest, "__")
	if !ok || !ok2 || server == "" || tool == "" {
		return nil, "", fmt.Errorf("--permission-prompt-tool %q: want mcp__<server>__<tool>", full)
	}
	conf, err := mcpServer(server)
	if err != nil {
		return nil, "", err
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "2.1.197"}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: conf.URL,
		HTTPClient: &http.Client{Transport: headerTransport{conf.Headers}}}, nil)
	if err != nil {
		return nil, "", fmt.Errorf("MCP server %q: %w", server, err)
	}
	return s, tool, nil
}

type call struct {
	Tool  string         `json:"tool"`
	Input map[string]any `json:"input"`
}

type answer struct {
	Behavior     string         `json:"behavior"`
	UpdatedInput map[string]any `json:"updatedInput"`
	Message      string         `json:"message"`
	Interrupt    bool           `json:"interrupt"`
}

func defaultCalls(mode string) []call {
	if mode == "ask-question" {
		return []call{{Tool: "AskUserQuestion", Input: map[string]any{"questions": []any{map[string]any{
			"question": "Which database should the service use?", "header": "Database", "multiSelect": false,
			"options": []any{
				map[string]any{"label": "Postgres", "description": "A server, shared by the team"},
				map[string]any{"label": "SQLite", "description": "A file, nothing to run"},
			}}}}}}
	}
	return []call{{Tool: "Bash", Input: map[string]any{"command": "rm -rf build", "description": "Remove the build folder"}}}
}

func uuid(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

// permissionMode runs the calls through the permission tool.
func permissionMode(mode, session string, cost float64, turns int) {
	calls := defaultCalls(mode)
	if v := os.Getenv("FAKE_CLAUDE_CALLS"); v != "" {
		calls = nil
		if err := json.Unmarshal([]byte(v), &calls); err != nil {
			fmt.Fprintln(os.Stderr, "FAKE_CLAUDE_CALLS:", err)
			os.Exit(2)
		}
	}
	ctx := context.Background()
	sess, tool, err := permissionTool(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
	defer sess.Close()
	denials := []any{}
	start := time.Now()
	for i, c := range calls {
		id := fmt.Sprintf("toolu_%s_%d", session, i+1)
		out(map[string]any{"type": "assistant", "message": map[string]any{
			"content": []any{map[string]any{"id": id, "input": c.Input, "name": c.Tool, "type": "tool_use"}},
			"id":      fmt.Sprintf("msg_%s_%d", session, i+1), "model": "fake", "role": "assistant", "stop_reason": nil, "type": "message",
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 1}, "context_management": nil},
			"parent_tool_use_id": nil, "session_id": session, "uuid": uuid(2 * i)})
		// The arguments in the CLI's order: tool_name, input, tool_use_id.
		args := json.RawMessage(mustJSON(struct {
			ToolName  string         `json:"tool_name"`
			Input     map[string]any `json:"input"`
			ToolUseID string         `json:"tool_use_id"`
		}{c.Tool, c.Input, id}))
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args,
			Meta: mcp.Meta{"claudecode/toolUseId": id, "progressToken": i + 2}})
		text := ""
		if err == nil {
			for _, ct := range res.Content {
				if t, ok := ct.(*mcp.TextContent); ok {
					text += t.Text
				}
			}
		}
		logCall(c, id, text, err)
		var a answer
		if err == nil {
			err = json.Unmarshal([]byte(text), &a)
		}
		if err == nil && a.Behavior != "allow" && a.Behavior != "deny" {
			err = fmt.Errorf("behavior %q", a.Behavior)
		}
		tr := func(content string, isError bool, tur any) {
			item := map[string]any{"tool_use_id": id, "type": "tool_result", "content": content}
			if isError || c.Tool == "Bash" {
				item["is_error"] = isError
			}
			out(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{item}},
				"parent_tool_use_id": nil, "session_id": session, "uuid": uuid(2*i + 1),
				"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), "tool_use_result": tur})
		}
		switch {
		case err != nil:
			msg := "<tool_use_error>Permission prompt tool failed: " + err.Error() + "</tool_use_error>"
			tr(msg, true, "Error: "+msg)
		case a.Behavior == "deny" && a.Interrupt:
			denials = append(denials, map[string]any{"tool_name": c.Tool, "tool_use_id": id, "tool_input": c.Input})
			tr("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.", true, "User rejected tool use")
			out(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "[Request interrupted by user for tool use]"}}},
				"parent_tool_use_id": nil, "session_id": session, "uuid": uuid(1000),
				"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z")})
			out(map[string]any{"type": "result", "subtype": "error_during_execution", "duration_ms": time.Since(start).Milliseconds(),
				"duration_api_ms": 100, "is_error": true, "num_turns": i + 2, "stop_reason": "tool_use", "session_id": session,
				"total_cost_usd": cost, "usage": map[string]any{"input_tokens": 100, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 300, "output_tokens": 50},
				"modelUsage": map[string]any{}, "permission_denials": denials, "terminal_reason": "aborted_tools",
				"errors": []any{"[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use"}, "uuid": uuid(1001)})
			os.Exit(1)
		case a.Behavior == "deny":
			denials = append(denials, map[string]any{"tool_name": c.Tool, "tool_use_id": id, "tool_input": c.Input})
			tr(a.Message, true, "Error: "+a.Message)
		default:
			input := c.Input
			if a.UpdatedInput != nil {
				input = a.UpdatedInput
			}
			content, isError, tur := run(c.Tool, input)
			tr(content, isError, tur)
		}
	}
	out(map[string]any{"type": "assistant", "message": map[string]any{
		"content": []any{map[string]any{"text": "Done.", "type": "text"}}, "id": "msg_" + session + "_end", "model": "fake",
		"role": "assistant", "stop_reason": nil, "type": "message", "usage": map[string]any{"input_tokens": 10, "output_tokens": 1},
		"context_management": nil}, "parent_tool_use_id": nil, "session_id": session, "uuid": uuid(2000)})
	out(map[string]any{"type": "result", "subtype": "success", "is_error": false, "api_error_status": nil,
		"duration_ms": time.Since(start).Milliseconds(), "duration_api_ms": 100, "num_turns": turns, "result": "Done.",
		"stop_reason": "end_turn", "session_id": session, "total_cost_usd": cost,
		"usage":      map[string]any{"input_tokens": 100, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 300, "output_tokens": 50},
		"modelUsage": map[string]any{}, "permission_denials": denials, "terminal_reason": "completed", "uuid": uuid(2001)})
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// run carries out an allowed call and returns its tool_result.
func run(tool string, input map[string]any) (content string, isError bool, tur any) {
	switch tool {
	case "Bash":
		cmd, _ := input["command"].(string)
		c := exec.Command("/bin/sh", "-c", cmd)
		var stdout, stderr bytes.Buffer
		c.Stdout, c.Stderr = &stdout, &stderr
		err := c.Run()
		so, se := strings.TrimRight(stdout.String(), "\n"), strings.TrimRight(stderr.String(), "\n")
		both := strings.TrimLeft(so+"\n"+se, "\n")
		both = strings.TrimRight(both, "\n")
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			msg := fmt.Sprintf("Exit code %d", ee.ExitCode())
			if both != "" {
				msg += "\n" + both
			}
			return msg, true, "Error: " + msg
		}
		if err != nil {
			return err.Error(), true, "Error: " + err.Error()
		}
		if both == "" {
			both = "(Bash completed with no output)"
		}
		return both, false, map[string]any{"stdout": so, "stderr": se, "interrupted": false, "isImage": false, "noOutputExpected": false}
	case "AskUserQuestion":
		qs, ok := input["questions"].([]any)
		if !ok {
			msg := "<tool_use_error>The permission handler returned updatedInput for AskUserQuestion that failed schema validation: AskUserQuestion failed due to the following issue:\nThe required parameter `questions` is missing\nThis is a configuration issue in your canUseTool callback, PermissionRequest hook, or permission-prompt tool — updatedInput must satisfy the tool's input schema.</tool_use_error>"
			return msg, true, "InputValidationError: permission handler updatedInput failed schema for AskUserQuestion"
		}
		answers, _ := input["answers"].(map[string]any)
		var parts []string
		for _, q := range qs {
			qm, _ := q.(map[string]any)
			text, _ := qm["question"].(string)
			if a, ok := answers[text]; ok {
				parts = append(parts, fmt.Sprintf("%q=%q", text, fmt.Sprint(a)))
			}
		}
		if answers == nil {
			answers = map[string]any{}
		}
		tur := map[string]any{"questions": qs, "answers": answers}
		if len(parts) == 0 {
			return "The user did not answer the questions.", false, tur
		}
		return "Your questions have been answered: " + strings.Join(parts, ", ") + ". You can now continue with these answers in mind.", false, tur
	}
	return "(" + tool + " completed)", false, map[string]any{}
}

func logCall(c call, id, text string, err error) {
	p := os.Getenv("FAKE_CLAUDE_PERMISSION_LOG")
	if p == "" {
		return
	}
	entry := map[string]any{"call": map[string]any{"tool_name": c.Tool, "input": c.Input, "tool_use_id": id}, "answer": text}
	if err != nil {
		entry["error"] = err.Error()
	}
	f, ferr := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if ferr != nil {
		return
	}
	defer f.Close()
	f.Write(append(mustJSON(entry), '\n'))
}

// usageMode prints what the CLI prints when a subscription window is
// reached (or nearly).
func usageMode(mode, session string, cost float64, turns int) {
	zone := os.Getenv("TZ")
	if zone == "" {
		zone = "UTC"
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		loc, zone = time.UTC, "UTC"
	}
	window, words, def := "five_hour", "session limit", 2*time.Hour
	if mode == "usage-limit-weekly" {
		window, words, def = "seven_day", "weekly limit", 3*24*time.Hour
	}
	now := time.Now()
	reset := now.Add(def).Truncate(time.Minute)
	if v, err := strconv.ParseInt(os.Getenv("FAKE_CLAUDE_RESETS_AT"), 10, 64); err == nil {
		reset = time.Unix(v, 0)
	}
	if mode == "usage-warning" {
		out(map[string]any{"type": "rate_limit_event", "rate_limit_info": map[string]any{"status": "allowed_warning",
			"resetsAt": reset.Unix(), "rateLimitType": window, "utilization": 0.91, "isUsingOverage": false, "surpassedThreshold": 0.9},
			"uuid": uuid(1), "session_id": session})
		out(map[string]any{"type": "result", "subtype": "success", "is_error": false, "api_error_status": nil, "duration_ms": 1234,
			"num_turns": turns, "result": "Done.", "session_id": session, "total_cost_usd": cost,
			"usage":              map[string]any{"input_tokens": 100, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 300, "output_tokens": 50},
			"permission_denials": []any{}, "terminal_reason": "completed", "uuid": uuid(2)})
		return
	}
	text := "You've hit your " + words + " · resets " + resetWords(reset, now, loc) + " (" + zone + ")"
	out(map[string]any{"type": "rate_limit_event", "rate_limit_info": map[string]any{"status": "rejected",
		"resetsAt": reset.Unix(), "rateLimitType": window, "isUsingOverage": false}, "uuid": uuid(1), "session_id": session})
	out(map[string]any{"type": "assistant", "message": map[string]any{"id": uuid(2), "container": nil, "model": "<synthetic>",
		"role": "assistant", "stop_details": nil, "stop_reason": "stop_sequence", "stop_sequence": "", "type": "message",
		"usage":   map[string]any{"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
		"content": []any{map[string]any{"type": "text", "text": text}}, "context_management": nil},
		"parent_tool_use_id": nil, "session_id": session, "uuid": uuid(3), "error": "rate_limit"})
	out(map[string]any{"type": "result", "subtype": "success", "is_error": true, "api_error_status": 429, "duration_ms": 239,
		"duration_api_ms": 0, "num_turns": 1, "result": text, "stop_reason": "stop_sequence", "session_id": session,
		"total_cost_usd": 0, "usage": map[string]any{"input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 0},
		"modelUsage": map[string]any{}, "permission_denials": []any{}, "terminal_reason": "completed", "uuid": uuid(4)})
	os.Exit(1)
}

// resetWords writes a reset as the CLI does: "8:41am", "9am" within a day;
// "Nov 28, 8:45am" further, with the year when it is not this one.
func resetWords(t, now time.Time, loc *time.Location) string {
	t = t.In(loc)
	clock := t.Format("3:04pm")
	if t.Minute() == 0 {
		clock = t.Format("3pm")
	}
	if t.Sub(now) <= 24*time.Hour {
		return clock
	}
	day := t.Format("Jan 2")
	if t.Year() != now.In(loc).Year() {
		day += t.Format(", 2006")
	}
	return day + ", " + clock
}
