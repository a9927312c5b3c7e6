package supervisor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"shepherd/backend/answers"
	"shepherd/backend/permtool"
	"shepherd/internal/testutil"
)

func bashReq(cmd string) permtool.Request {
	return permtool.Request{ToolName: "Bash", Input: map[string]any{"command": cmd}}
}

type asked struct {
	a   permtool.Answer
	err error
}

func (h *harness) ask(ctx context.Context, id string, r permtool.Request) chan asked {
	ch := make(chan asked, 1)
	go func() {
		a, err := h.e.AskPermission(ctx, AgentRef{ProjectID: h.project.ID, AgentID: id}, r)
		ch <- asked{a, err}
	}()
	return ch
}

func (h *harness) waitQuestions(id string, n int) []answers.Asked {
	h.t.Helper()
	var qs []answers.Asked
	testutil.Eventually(h.t, "questions", func() bool {
		qs, _ = h.e.Questions(h.project.ID, id)
		return len(qs) == n
	})
	return qs
}

// Questions of one agent are queued in the order asked: the agent waits on
// the first (its attention says which), the next is shown once it is
// answered, and each call gets its own answer.
func TestQuestionsQueuedInOrder(t *testing.T) {
	h := newHarness(t)
	h.create(withID("w", sh("sleep 1000")))
	h.start("w")
	first := h.ask(t.Context(), "w", bashReq("rm -rf a"))
	h.waitQuestions("w", 1)
	second := h.ask(t.Context(), "w", bashReq("rm -rf b"))
	qs := h.waitQuestions("w", 2)
	if qs[0].Summary != "Bash: rm -rf a" || qs[1].Summary != "Bash: rm -rf b" || qs[0].Position != 1 || qs[1].Position != 2 {
		t.Fatalf("queue %+v", qs)
	}
	if got := h.get("w").Attention; got != "waiting: permission for Bash: rm -rf a" {
		t.Fatalf("attention %q", got)
	}
	if len(h.rec.notes("waiting")) == 0 {
		t.Fatal("no notification for the question")
	}
	res, err := h.e.AnswerQuestion(t.Context(), h.project.ID, "w", Answer{Action: AnswerDeny, Message: "no"})
	if err != nil || res.Pending != 1 || res.Question.Summary != "Bash: rm -rf a" {
		t.Fatalf("answer: %+v %v", res, err)
	}
	if got := <-first; got.a.Behavior != permtool.Deny || got.a.Message != "no" {
		t.Fatalf("first got %+v", got)
	}
	testutil.Eventually(t, "the second question shown", func() bool {
		return h.get("w").Attention == "waiting: permission for Bash: rm -rf b"
	})
	if _, err := h.e.AnswerQuestion(t.Context(), h.project.ID, "w", Answer{Action: AnswerAllow}); err != nil {
		t.Fatal(err)
	}
	if got := <-second; got.a.Behavior != permtool.Allow || got.a.UpdatedInput["command"] != "rm -rf b" {
		t.Fatalf("second got %+v", got)
	}
	testutil.Eventually(t, "the wait ended", func() bool { return h.get("w").Attention == "" })
	_, err = h.e.AnswerQuestion(t.Context(), h.project.ID, "w", Answer{Action: AnswerAllow})
	wantKind(t, err, ErrTransition, "asks nothing")
}

// A policy of "deny after N minutes" denies a question nobody answers when
// the engine's clock says so, not before.
func TestQuestionDeniedByPolicy(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, func(c *Config) { c.Clock = clk })
	h.create(withID("w", sh("sleep 1000")))
	h.start("w")
	if _, err := h.e.SetAnswerPolicy(t.Context(), h.project.ID, "w", 5); err != nil {
		t.Fatal(err)
	}
	_, err := h.e.SetAnswerPolicy(t.Context(), h.project.ID, "w", -1)
	wantKind(t, err, ErrValidation, "want 0")
	got := h.ask(t.Context(), "w", bashReq("rm -rf a"))
	qs := h.waitQuestions("w", 1)
	if qs[0].DenyAt == nil || !qs[0].DenyAt.Equal(clk.Now().Add(5*time.Minute).UTC()) {
		t.Fatalf("denyAt %v", qs[0].DenyAt)
	}
	clk.Advance(4*time.Minute + 59*time.Second)
	h.settle()
	if len(h.waitQuestions("w", 1)) != 1 {
		t.Fatal("denied early")
	}
	clk.Advance(time.Second)
	r := <-got
	if r.a.Behavior != permtool.Deny || !strings.Contains(r.a.Message, "No answer from the user in 5m0s") {
		t.Fatalf("got %+v", r)
	}
	if ev := h.events(); !strings.Contains(ev, `"by":"policy"`) {
		t.Fatalf("events:\n%s", ev)
	}
}

// A call abandoned by its run (the CLI stopped waiting) leaves the queue.
func TestQuestionAbandoned(t *testing.T) {
	h := newHarness(t)
	h.create(withID("w", sh("sleep 1000")))
	h.start("w")
	ctx, cancel := context.WithCancel(t.Context())
	got := h.ask(ctx, "w", bashReq("rm -rf a"))
	h.waitQuestions("w", 1)
	cancel()
	if r := <-got; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("got %+v", r)
	}
	h.waitQuestions("w", 0)
	testutil.Eventually(t, "the wait ended", func() bool { return h.get("w").Attention == "" })
}

// Rules: kept per agent or project, they answer by themselves; a sandboxed
// agent's rule that would widen its grants is refused, and a project rule
// that would is not used for it; an agent cannot keep a project rule.
func TestRulesAnswerAndNeverWiden(t *testing.T) {
	h := newHarness(t)
	h.create(withID("free", sh("sleep 1000")))
	h.start("free")
	boxed := withID("boxed", sh("sleep 1000"))
	boxed.Permissions = &[]string{}
	h.create(boxed)
	h.start("boxed")

	_, err := h.e.AddRule(t.Context(), h.project.ID, "boxed", "", "Bash(rm:*)")
	wantKind(t, err, ErrPermissionDenied, "rule Bash(rm:*) for sandboxed agent 'boxed'")
	_, err = h.e.AddRule(t.Context(), h.project.ID, "free", "", "Bash(rm:")
	wantKind(t, err, ErrValidation, "")
	_, err = h.e.AddRule(AsAgent(t.Context(), AgentRef{ProjectID: h.project.ID, AgentID: "x"}), h.project.ID, "free", answers.ScopeProject, "Bash(ls:*)")
	wantKind(t, err, ErrPermissionDenied, "only the user")
	if _, err := h.e.AddRule(t.Context(), h.project.ID, "free", answers.ScopeProject, "Bash(rm:*)"); err != nil {
		t.Fatal(err)
	}
	// The project's rule answers for the free agent at once...
	if r := <-h.ask(t.Context(), "free", bashReq("rm -rf x")); r.err != nil || r.a.Behavior != permtool.Allow {
		t.Fatalf("free got %+v", r)
	}
	// ...and not for the boxed one, whose grants it would widen.
	got := h.ask(t.Context(), "boxed", bashReq("rm -rf x"))
	qs := h.waitQuestions("boxed", 1)
	for _, s := range qs[0].Suggestions {
		if strings.HasPrefix(s, "Bash(rm") {
			t.Errorf("suggested %s to a boxed agent", s)
		}
	}
	if _, err := h.e.AnswerQuestion(t.Context(), h.project.ID, "boxed", Answer{Action: AnswerAlways, Rule: "Bash(rm -rf x)"}); !errors.Is(err, ErrPermissionDenied) {
		t.Fatalf("always for boxed: %v", err)
	}
	if _, err := h.e.AnswerQuestion(t.Context(), h.project.ID, "boxed", Answer{Action: AnswerDeny}); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.a.Behavior != permtool.Deny || r.a.Message == "" {
		t.Fatalf("boxed got %+v", r)
	}
	// Kept across engines: a new engine reads the rules file.
	rs, err := h.e.AgentRules(h.project.ID, "free")
	if err != nil || len(rs.Project) != 1 || rs.Project[0].Rule != "Bash(rm:*)" {
		t.Fatalf("rules %+v %v", rs, err)
	}
}

// An agent cannot pile up questions: at most MaxPending wait at once, and
// it cannot ask faster than its bucket lets it.
func TestQuestionsBounded(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, func(c *Config) { c.Clock = clk })
	h.create(withID("w", sh("sleep 1000")))
	h.start("w")
	for i := range MaxPending {
		h.ask(t.Context(), "w", bashReq(fmt.Sprint("rm ", i)))
		h.waitQuestions("w", i+1)
	}
	r := <-h.ask(t.Context(), "w", bashReq("rm one-too-many"))
	wantKind(t, r.err, ErrTooMany, "questions waiting for the user already")
	for range MaxPending {
		if _, err := h.e.AnswerQuestion(t.Context(), h.project.ID, "w", Answer{Action: AnswerDeny}); err != nil {
			t.Fatal(err)
		}
	}
	// The burst is spent (MaxPending+1 asked); the rest of it, then refused.
	for i := MaxPending + 1; i < QuestionBurst; i++ {
		ctx, cancel := context.WithCancel(t.Context())
		got := h.ask(ctx, "w", bashReq("rm x"))
		h.waitQuestions("w", 1)
		cancel()
		<-got
		h.waitQuestions("w", 0)
	}
	r = <-h.ask(t.Context(), "w", bashReq("rm flood"))
	wantKind(t, r.err, ErrTooMany, "asks faster than")
	clk.Advance(time.Second) // two more tokens
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	h.ask(ctx, "w", bashReq("rm later"))
	h.waitQuestions("w", 1)
}
