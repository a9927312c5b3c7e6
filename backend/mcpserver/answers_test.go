package mcpserver_test

import (
	"context"
	"testing"
	"time"

	"shepherd/backend/permtool"
	"shepherd/backend/supervisor"
)

// The agent that created a process answers what it asks through the MCP
// tools; its own questions are not its to answer.
func TestOwnerAnswers(t *testing.T) {
	en := start(t)
	pid := en.becomeAgent(supervisorSpec("boss"))
	en.ok("create_process", map[string]any{"id": "child", "command": "sleep", "args": []string{"300"}})
	en.ok("start_process", map[string]any{"id": "child"})
	got := make(chan permtool.Answer, 1)
	go func() {
		a, err := en.host.Engine.AskPermission(context.Background(), supervisor.AgentRef{ProjectID: pid, AgentID: "child"},
			permtool.Request{ToolName: "Bash", Input: map[string]any{"command": "make clean"}})
		if err != nil {
			t.Error(err)
		}
		got <- a
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		qs := en.ok("list_questions", map[string]any{"id": "child"})["questions"].([]any)
		if len(qs) == 1 {
			if s := qs[0].(map[string]any)["summary"]; s != "Bash: make clean" {
				t.Fatalf("summary %v", s)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the question never came")
		}
		time.Sleep(10 * time.Millisecond)
	}
	en.fails("answer_question", map[string]any{"id": "boss", "action": "allow"}, "cannot")
	en.fails("answer_question", map[string]any{"id": "child", "action": "maybe"}, "action")
	out := en.ok("answer_question", map[string]any{"id": "child", "action": "deny", "message": "not now"})
	if out["behavior"] != "deny" {
		t.Fatalf("answered %v", out)
	}
	if a := <-got; a.Behavior != permtool.Deny || a.Message != "not now" {
		t.Fatalf("the child got %+v", a)
	}
}
