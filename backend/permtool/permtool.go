// Package permtool is Shepherd's side of Claude Code's permission prompt
// tool (SPEC "Answers"): `claude -p --permission-prompt-tool
// mcp__<server>__<tool> --mcp-config …` calls that MCP tool for every tool
// call that needs approval, and for the agent's questions
// (AskUserQuestion), and follows the JSON text of its result.
//
// The shapes are the CLI's own (checked with the CLI from npm, 2.1.197):
// the tool is called with {"tool_name":…,"input":{…},"tool_use_id":"toolu_…"}
// (and _meta "claudecode/toolUseId"), one call at a time for Bash, and
// waits as long as the tool takes (MCP_TOOL_TIMEOUT, else about 27.8 h).
// The answer is one of
//
//	{"behavior":"allow","updatedInput":{…}}          run it, with this input
//	{"behavior":"deny","message":"…"}                 refused: the message is the tool's result; the run goes on
//	{"behavior":"deny","message":"…","interrupt":true} refused, and the run stops (error_during_execution)
//
// and an AskUserQuestion is answered by allowing it with its questions and
// {"answers":{"<question>":"<choice>"}} added to its input.
package permtool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shepherd/backend/permrules"
)

// ToolName is the name Shepherd serves its permission tool under; a run
// gets `--permission-prompt-tool mcp__<server>__approve`.
const ToolName = "approve"

// Flag is the --permission-prompt-tool value for the tool served by the
// MCP server named server in the run's --mcp-config.
func Flag(server string) string { return "mcp__" + server + "__" + ToolName }

// Behaviors of an answer.
const (
	Allow = "allow"
	Deny  = "deny"
)

// ErrInvalid is the kind of a request or an answer that is not what the
// CLI sends or reads.
var ErrInvalid = errors.New("invalid permission request")

// Request is one call of the tool: the agent wants to use ToolName with
// Input.
type Request struct {
	ToolName  string         `json:"tool_name"`
	Input     map[string]any `json:"input"`
	ToolUseID string         `json:"tool_use_id,omitempty"`
}

// Call is the request as permrules matches it.
func (r Request) Call() permrules.Call {
	return permrules.Call{ToolName: r.ToolName, Input: r.Input, ToolUseID: r.ToolUseID}
}

// IsQuestion: the agent asks the user to choose (AskUserQuestion).
func (r Request) IsQuestion() bool { return r.ToolName == permrules.AskUserQuestion }

// Answer is what the tool returns, as JSON text.
type Answer struct {
	Behavior     string         `json:"behavior"`
	UpdatedInput map[string]any `json:"updatedInput,omitempty"`
	Message      string         `json:"message,omitempty"`
	Interrupt    bool           `json:"interrupt,omitempty"`
}

// AllowAnswer allows the call with input (the request's own, or a changed
// one: what runs is what the answer says).
func AllowAnswer(input map[string]any) Answer {
	if input == nil {
		input = map[string]any{}
	}
	return Answer{Behavior: Allow, UpdatedInput: input}
}

// DenyAnswer refuses the call; the agent reads message and goes on.
func DenyAnswer(message string) Answer {
	if strings.TrimSpace(message) == "" {
		message = "The user denied this."
	}
	return Answer{Behavior: Deny, Message: message}
}

// InterruptAnswer refuses the call and stops the run.
func InterruptAnswer(message string) Answer {
	a := DenyAnswer(message)
	a.Interrupt = true
	return a
}

// Text is the answer as the tool's result text.
func (a Answer) Text() string {
	b, _ := json.Marshal(a)
	return string(b)
}

// Question is one question of an AskUserQuestion call.
type Question struct {
	Question    string   `json:"question"`
	Header      string   `json:"header,omitempty"`
	Options     []Option `json:"options"`
	MultiSelect bool     `json:"multiSelect,omitempty"`
}

// Option is one choice of a question.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Questions reads the questions of an AskUserQuestion request.
func (r Request) Questions() ([]Question, error) {
	if !r.IsQuestion() {
		return nil, fmt.Errorf("%w: %s asks no question", ErrInvalid, r.ToolName)
	}
	b, _ := json.Marshal(r.Input["questions"])
	var qs []Question
	if err := json.Unmarshal(b, &qs); err != nil || len(qs) == 0 {
		return nil, fmt.Errorf("%w: the question has no questions in its input", ErrInvalid)
	}
	for _, q := range qs {
		if strings.TrimSpace(q.Question) == "" {
			return nil, fmt.Errorf("%w: a question without its text", ErrInvalid)
		}
	}
	return qs, nil
}

// AnswerQuestions answers an AskUserQuestion request: answers maps each
// question's text to the chosen option's label (several labels joined by
// ", " for a multiSelect question), or to free text when free is true.
// Every question must be answered, with one of its options unless free.
// The answer allows the call with its questions as given and the answers
// added (leaving the questions out is a schema error to the CLI).
func AnswerQuestions(r Request, answers map[string]string, free bool) (Answer, error) {
	qs, err := r.Questions()
	if err != nil {
		return Answer{}, err
	}
	out := map[string]any{}
	for _, q := range qs {
		a, ok := answers[q.Question]
		if !ok || strings.TrimSpace(a) == "" {
			return Answer{}, fmt.Errorf("%w: no answer to %q", ErrInvalid, q.Question)
		}
		if !free {
			for _, choice := range choices(a, q.MultiSelect) {
				if !slices.ContainsFunc(q.Options, func(o Option) bool { return o.Label == choice }) {
					return Answer{}, fmt.Errorf("%w: %q is not one of the choices of %q (%s)", ErrInvalid, choice, q.Question, labels(q))
				}
			}
		}
		out[q.Question] = a
	}
	for text := range answers {
		if !slices.ContainsFunc(qs, func(q Question) bool { return q.Question == text }) {
			return Answer{}, fmt.Errorf("%w: %q was not asked", ErrInvalid, text)
		}
	}
	input := map[string]any{}
	for k, v := range r.Input {
		input[k] = v
	}
	input["answers"] = out
	return AllowAnswer(input), nil
}

func choices(a string, multi bool) []string {
	if !multi {
		return []string{a}
	}
	var out []string
	for _, c := range strings.Split(a, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

func labels(q Question) string {
	var ls []string
	for _, o := range q.Options {
		ls = append(ls, o.Label)
	}
	return strings.Join(ls, ", ")
}

// MaxSummary is the longest Summary, in bytes.
const MaxSummary = 120

// Summary says in a line what the request asks, for the agent's activity
// ("waiting: permission for Bash: rm -rf build/") and notifications:
// "Bash: rm -rf build/", "Edit: src/main.go", "WebFetch: example.com",
// "your choice" for a question. Control characters are dropped; the text
// is cut to MaxSummary.
func (r Request) Summary(cwd string) string {
	s := r.ToolName
	switch r.ToolName {
	case permrules.AskUserQuestion:
		return "your choice"
	case "Bash":
		if c, _ := r.Input["command"].(string); c != "" {
			s += ": " + c
		}
	case "Edit", "MultiEdit", "Write", "Read", "NotebookEdit", "NotebookRead":
		p, _ := r.Input["file_path"].(string)
		if p == "" {
			p, _ = r.Input["notebook_path"].(string)
		}
		if p != "" {
			if rel, err := filepath.Rel(cwd, p); cwd != "" && err == nil && !strings.HasPrefix(rel, "..") {
				p = rel
			}
			s += ": " + p
		}
	case "WebFetch":
		if u, err := url.Parse(str(r.Input, "url")); err == nil && u.Host != "" {
			s += ": " + u.Host
		}
	case "WebSearch":
		if q := str(r.Input, "query"); q != "" {
			s += ": " + q
		}
	}
	return oneLine(s, MaxSummary)
}

func str(m map[string]any, k string) string {
	v, _ := m[k].(string)
	return v
}

func oneLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Suggest offers "always allow" rules for a request, narrowest first, each
// valid for permrules.Parse and allowing the request: for Bash the command itself and the prefix of
// its program (and subcommand: `npm test:*`); for a file tool its file and
// its folder (relative to cwd when inside it); for WebFetch its domain; for
// an MCP tool its name. A question gets none.
func Suggest(r Request, cwd string) []string {
	var out []string
	// Only rules that parse and allow this very request.
	add := func(s string) {
		rule, err := permrules.Parse(s)
		if err == nil && rule.Matches(r.Call(), permrules.Context{Cwd: cwd}) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	switch r.ToolName {
	case permrules.AskUserQuestion:
		return nil
	case "Bash":
		c := strings.TrimSpace(str(r.Input, "command"))
		if c == "" || strings.ContainsAny(c, "\n") {
			break
		}
		add("Bash(" + escape(c) + ")")
		f := strings.Fields(c)
		if len(f) >= 2 && !strings.HasPrefix(f[1], "-") && !strings.ContainsAny(f[1], `'"$\/*;&|<>(){}`+"`") {
			add("Bash(" + escape(f[0]+" "+f[1]) + ":*)")
		}
		if len(f) >= 1 && !strings.ContainsAny(f[0], `'"$\*;&|<>(){}=`+"`") {
			add("Bash(" + escape(f[0]) + ":*)")
		}
	case "Edit", "MultiEdit", "Write", "NotebookEdit", "Read", "NotebookRead":
		p := str(r.Input, "file_path")
		if p == "" {
			p = str(r.Input, "notebook_path")
		}
		if p == "" || !filepath.IsAbs(p) {
			break
		}
		tool := r.ToolName
		if tool == "MultiEdit" || tool == "Write" || tool == "NotebookEdit" {
			tool = "Edit"
		}
		if tool == "NotebookRead" {
			tool = "Read"
		}
		rel, err := filepath.Rel(cwd, p)
		inside := cwd != "" && err == nil && !strings.HasPrefix(rel, "..")
		if inside {
			add(tool + "(" + escape(globEscape(filepath.ToSlash(rel))) + ")")
			if d := filepath.ToSlash(filepath.Dir(rel)); d != "." {
				add(tool + "(" + escape(globEscape(d)) + "/**)")
			}
			add(tool + "(./**)")
		} else {
			add(tool + "(/" + escape(globEscape(filepath.ToSlash(p))) + ")")
			add(tool + "(/" + escape(globEscape(filepath.ToSlash(filepath.Dir(p)))) + "/**)")
		}
	case "WebFetch":
		if u, err := url.Parse(str(r.Input, "url")); err == nil && u.Hostname() != "" {
			add("WebFetch(domain:" + strings.ToLower(u.Hostname()) + ")")
		}
	default:
		add(r.ToolName) // an MCP tool, or one that takes no pattern
	}
	return out
}

func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s)
}

// globEscape makes a path's glob characters literal ([*], [?], [[]).
func globEscape(p string) string {
	return strings.NewReplacer("*", "[*]", "?", "[?]", "[", "[[]").Replace(p)
}

// Handler decides a request. It may wait as long as the user takes; ctx
// ends when the run's call is abandoned (the CLI stopped, the engine
// closes). req carries the HTTP request's header (req.Extra.Header): the
// run's own credential says who asks. An error is returned to the CLI as
// a tool error: the call fails and the run goes on.
type Handler func(ctx context.Context, req *mcp.CallToolRequest, r Request) (Answer, error)

// inputSchema is what the CLI sends: tool_name and input, tool_use_id.
var inputSchema = json.RawMessage(`{"type":"object","properties":{"tool_name":{"type":"string"},` +
	`"input":{"type":"object"},"tool_use_id":{"type":"string"}},"required":["tool_name","input"]}`)

// AddTool serves the permission tool on s under name (ToolName unless the
// integration says otherwise), answering with h.
func AddTool(s *mcp.Server, name string, h Handler) {
	s.AddTool(&mcp.Tool{Name: name, Description: "Asks the user of Shepherd whether a tool call may run.", InputSchema: inputSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var r Request
			if err := json.Unmarshal(req.Params.Arguments, &r); err != nil || r.ToolName == "" || r.Input == nil {
				return errorResult(fmt.Sprintf("%v: want {\"tool_name\":…,\"input\":{…}}", ErrInvalid)), nil
			}
			if r.ToolUseID == "" {
				if id, ok := req.Params.Meta["claudecode/toolUseId"].(string); ok {
					r.ToolUseID = id
				}
			}
			a, err := h(ctx, req, r)
			if err != nil {
				return errorResult(err.Error()), nil
			}
			if a.Behavior != Allow && a.Behavior != Deny {
				return errorResult(fmt.Sprintf("%v: behavior %q", ErrInvalid, a.Behavior)), nil
			}
			if a.Behavior == Allow && a.UpdatedInput == nil {
				a.UpdatedInput = r.Input
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text()}}}, nil
		})
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// Path is where the engine's API serves the permission tool (streamable
// HTTP, an agent's own credential only).
const Path = "/v1/mcp/permission"

// Server is the name of the tool's MCP server in a run's --mcp-config.
const Server = "shepherd-answers"

// Config is the --mcp-config JSON (inline) that points a run at the
// engine's API at apiURL, sending the run's own credential from the
// variable tokenEnv (the CLI fills in ${VAR} in an MCP server's headers
// from its environment).
func Config(apiURL, tokenEnv string) string {
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{Server: map[string]any{
		"type":    "http",
		"url":     strings.TrimSuffix(apiURL, "/") + Path,
		"headers": map[string]string{"Authorization": "Bearer ${" + tokenEnv + "}"},
	}}})
	return string(b)
}

// HasOwn reports whether args already decide permissions without a prompt
// tool of Shepherd's: a --permission-prompt-tool of their own, or every
// call allowed (--dangerously-skip-permissions, --permission-mode
// bypassPermissions).
func HasOwn(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--permission-prompt-tool" || strings.HasPrefix(a, "--permission-prompt-tool="),
			a == "--dangerously-skip-permissions",
			a == "--permission-mode=bypassPermissions",
			a == "--permission-mode" && i+1 < len(args) && args[i+1] == "bypassPermissions":
			return true
		}
	}
	return false
}
