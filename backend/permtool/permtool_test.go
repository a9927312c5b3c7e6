package permtool

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shepherd/backend/permrules"
)

func question(multi bool) Request {
	return Request{ToolName: "AskUserQuestion", ToolUseID: "toolu_1", Input: map[string]any{"questions": []any{
		map[string]any{"question": "Which database?", "header": "DB", "multiSelect": false, "options": []any{
			map[string]any{"label": "Postgres"}, map[string]any{"label": "SQLite"}}},
		map[string]any{"question": "Which checks?", "header": "CI", "multiSelect": multi, "options": []any{
			map[string]any{"label": "lint"}, map[string]any{"label": "test"}, map[string]any{"label": "e2e"}}},
	}}}
}

func TestAnswerQuestions(t *testing.T) {
	r := question(true)
	a, err := AnswerQuestions(r, map[string]string{"Which database?": "SQLite", "Which checks?": "lint, test"}, false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"questions": r.Input["questions"], "answers": map[string]any{"Which database?": "SQLite", "Which checks?": "lint, test"}}
	if a.Behavior != Allow || !cmp.Equal(a.UpdatedInput, want) {
		t.Fatalf("%s", cmp.Diff(want, a.UpdatedInput))
	}
	for _, tc := range []struct {
		answers map[string]string
		free    bool
		says    string
	}{
		{map[string]string{"Which database?": "SQLite"}, false, `no answer to "Which checks?"`},
		{map[string]string{"Which database?": "MySQL", "Which checks?": "lint"}, false, `"MySQL" is not one of the choices of "Which database?" (Postgres, SQLite)`},
		{map[string]string{"Which database?": "SQLite", "Which checks?": "lint", "Why?": "x"}, false, `"Why?" was not asked`},
		{map[string]string{"Which database?": " ", "Which checks?": "lint"}, true, "no answer"},
	} {
		if _, err := AnswerQuestions(r, tc.answers, tc.free); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.says) {
			t.Fatalf("%v: %v, want %q", tc.answers, err, tc.says)
		}
	}
	// Free text, where the user may write their own.
	if _, err := AnswerQuestions(r, map[string]string{"Which database?": "DuckDB, embedded", "Which checks?": "none"}, true); err != nil {
		t.Fatal(err)
	}
	// One choice only where the question is not multiSelect.
	if _, err := AnswerQuestions(question(false), map[string]string{"Which database?": "SQLite", "Which checks?": "lint, test"}, false); err == nil {
		t.Fatal("two choices for a single-choice question")
	}
	if _, err := (Request{ToolName: "Bash", Input: map[string]any{}}).Questions(); !errors.Is(err, ErrInvalid) {
		t.Fatal(err)
	}
	if _, err := (Request{ToolName: "AskUserQuestion", Input: map[string]any{"questions": "x"}}).Questions(); !errors.Is(err, ErrInvalid) {
		t.Fatal(err)
	}
}

func TestSummary(t *testing.T) {
	for _, tc := range []struct {
		r    Request
		want string
	}{
		{Request{ToolName: "Bash", Input: map[string]any{"command": "rm -rf build/"}}, "Bash: rm -rf build/"},
		{Request{ToolName: "Bash", Input: map[string]any{"command": "echo a\nrm -rf /\x1b[2J"}}, "Bash: echo a rm -rf / [2J"},
		{Request{ToolName: "Bash", Input: map[string]any{"command": strings.Repeat("é", 100)}}, "Bash: " + strings.Repeat("é", 55) + "…"},
		{Request{ToolName: "Edit", Input: map[string]any{"file_path": "/w/src/main.go"}}, "Edit: src/main.go"},
		{Request{ToolName: "Write", Input: map[string]any{"file_path": "/etc/hosts"}}, "Write: /etc/hosts"},
		{Request{ToolName: "WebFetch", Input: map[string]any{"url": "https://example.com/a?b"}}, "WebFetch: example.com"},
		{Request{ToolName: "mcp__github__create_issue", Input: map[string]any{}}, "mcp__github__create_issue"},
		{question(false), "your choice"},
	} {
		if got := tc.r.Summary("/w"); got != tc.want {
			t.Fatalf("%v: %q, want %q", tc.r.Input, got, tc.want)
		}
		if len(tc.r.Summary("/w")) > MaxSummary {
			t.Fatal("too long")
		}
	}
}

// Every suggestion is a valid rule that allows the request it came from.
func TestSuggest(t *testing.T) {
	ctx := permrules.Context{Cwd: "/w"}
	for _, tc := range []struct {
		r    Request
		want []string
	}{
		{Request{ToolName: "Bash", Input: map[string]any{"command": "npm test --watch"}}, []string{"Bash(npm test --watch)", "Bash(npm test:*)", "Bash(npm:*)"}},
		{Request{ToolName: "Bash", Input: map[string]any{"command": "rm -rf build"}}, []string{"Bash(rm -rf build)", "Bash(rm:*)"}},
		{Request{ToolName: "Bash", Input: map[string]any{"command": "echo (a)"}}, nil}, // a subshell: no rule can say it
		{Request{ToolName: "Bash", Input: map[string]any{"command": "git diff && rm x"}}, nil},
		{Request{ToolName: "Edit", Input: map[string]any{"file_path": "/w/src/a[1].go"}}, []string{"Edit(src/a[[]1].go)", "Edit(src/**)", "Edit(./**)"}},
		{Request{ToolName: "Write", Input: map[string]any{"file_path": "/etc/hosts"}}, []string{"Edit(//etc/hosts)", "Edit(//etc/**)"}},
		{Request{ToolName: "WebFetch", Input: map[string]any{"url": "https://Docs.Example.com/x"}}, []string{"WebFetch(domain:docs.example.com)"}},
		{Request{ToolName: "mcp__github__create_issue", Input: map[string]any{}}, []string{"mcp__github__create_issue"}},
		{Request{ToolName: "TodoWrite", Input: map[string]any{}}, []string{"TodoWrite"}},
		{question(false), nil},
	} {
		got := Suggest(tc.r, "/w")
		if !cmp.Equal(got, tc.want) {
			t.Fatalf("%v: %s", tc.r.Input, cmp.Diff(tc.want, got))
		}
		for _, s := range got {
			rule, err := permrules.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			if !rule.Matches(tc.r.Call(), ctx) {
				t.Fatalf("%s does not allow %v", s, tc.r.Input)
			}
		}
	}
}

// A request that is not what the CLI sends, or a handler's error, is a
// tool error; an allow without input allows the input as asked.
func TestAddToolErrors(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	AddTool(srv, ToolName, func(ctx context.Context, req *mcp.CallToolRequest, r Request) (Answer, error) {
		switch r.ToolName {
		case "Fail":
			return Answer{}, errors.New("the engine is closing")
		case "Odd":
			return Answer{Behavior: "maybe"}, nil
		}
		return Answer{Behavior: Allow}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	s, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	callText := func(args string) (string, bool) {
		res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolName, Arguments: json.RawMessage(args)})
		if err != nil {
			return err.Error(), true
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	if txt, isErr := callText(`{"tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t"}`); isErr || txt != `{"behavior":"allow","updatedInput":{"command":"ls"}}` {
		t.Fatalf("%s %v", txt, isErr)
	}
	for args, says := range map[string]string{
		`{"tool_name":"Fail","input":{}}`: "the engine is closing",
		`{"tool_name":"Odd","input":{}}`:  `behavior "maybe"`,
		`{"input":{}}`:                    "invalid permission request",
	} {
		if txt, isErr := callText(args); !isErr || !strings.Contains(txt, says) {
			t.Fatalf("%s: %q %v, want %q", args, txt, isErr, says)
		}
	}
}

func TestFlagAndAnswers(t *testing.T) {
	if Flag("shepherd") != "mcp__shepherd__approve" {
		t.Fatal(Flag("shepherd"))
	}
	if DenyAnswer("").Message == "" || !InterruptAnswer("x").Interrupt {
		t.Fatal("deny")
	}
	if got := DenyAnswer("no").Text(); got != `{"behavior":"deny","message":"no"}` {
		t.Fatal(got)
	}
}
