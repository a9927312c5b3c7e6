package api

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shepherd/backend/answers"
	"shepherd/backend/notify/webhook"
	"shepherd/backend/permtool"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// Answers (SPEC "Answers"): what an agent's permission tool asks, answered
// by the agent's owner — the user, or the agent that created it, never the
// agent itself — and the always-allow rules kept per agent or project.

// Answers is what the API needs of the engine for them (*supervisor.Engine
// has it; an engine without it has no such endpoints).
type Answers interface {
	AskPermission(ctx context.Context, ref supervisor.AgentRef, r permtool.Request) (permtool.Answer, error)
	EndQuestions()
	Questions(projectID, agentID string) ([]answers.Asked, error)
	AnswerQuestion(ctx context.Context, projectID, agentID string, in supervisor.Answer) (*supervisor.Answered, error)
	AgentRules(projectID, agentID string) (*supervisor.Rules, error)
	ProjectRules(projectID string) ([]answers.Rule, error)
	AddRule(ctx context.Context, projectID, agentID, scope, rule string) (answers.Rule, error)
	RemoveRule(ctx context.Context, projectID, agentID, scope, rule string) error
	SetAnswerPolicy(ctx context.Context, projectID, agentID string, minutes int) (*supervisor.Rules, error)
}

// AnswerIn is the input of answerQuestion.
type AnswerIn struct {
	Project string `path:"project" doc:"the project's id"`
	Agent   string `path:"agent" doc:"the agent's id"`
	Body    supervisor.Answer
}

// RuleInput is the body of addRule and removeRule.
type RuleInput struct {
	Rule  string `json:"rule" doc:"a rule in Claude Code's syntax, e.g. Bash(npm test:*)"`
	Scope string `json:"scope,omitempty" enum:"agent,project," doc:"agent (default) or project (the user's alone)"`
}

// RuleIn is the input of addRule and removeRule.
type RuleIn struct {
	Project string `path:"project" doc:"the project's id"`
	Agent   string `path:"agent" doc:"the agent's id"`
	Body    RuleInput
}

// PolicyInput is the body of setAnswerPolicy.
type PolicyInput struct {
	DenyAfterMin int `json:"denyAfterMin" minimum:"0" maximum:"10080" doc:"deny a question nobody answers after that many minutes (0: wait for the answer)"`
}

// PolicyIn is the input of setAnswerPolicy.
type PolicyIn struct {
	Project string `path:"project" doc:"the project's id"`
	Agent   string `path:"agent" doc:"the agent's id"`
	Body    PolicyInput
}

func answersOp[I, T any](op *Op[I, Reply[T]], do func(an Answers, ctx context.Context, in *I) (T, error)) *Op[I, Reply[T]] {
	return define(op, func(h *handler, ctx context.Context, in *I) (*Reply[T], error) {
		an, ok := h.eng.(Answers)
		if !ok {
			return nil, noSuchEndpoint(ctx)
		}
		v, err := do(an, ctx, in)
		if err != nil {
			return nil, err
		}
		return &Reply[T]{v}, nil
	})
}

var ListQuestions = answersOp(&Op[AgentIn, Reply[[]answers.Asked]]{
	ID: "listQuestions", Method: http.MethodGet, Path: agentPath + "/questions", Access: Owned,
	Summary: "An agent's questions waiting for an answer (permissions and choices), the one it waits on first",
}, func(an Answers, _ context.Context, in *AgentIn) ([]answers.Asked, error) {
	return an.Questions(in.Project, in.Agent)
})

var AnswerQuestion = answersOp(&Op[AnswerIn, Reply[*supervisor.Answered]]{
	ID: "answerQuestion", Method: http.MethodPost, Path: agentPath + "/questions/answer", Access: Owned,
	Summary: "Answer an agent's question: allow once, always allow (keeping a rule), deny with a message, or choose (an AskUserQuestion)",
}, func(an Answers, ctx context.Context, in *AnswerIn) (*supervisor.Answered, error) {
	return an.AnswerQuestion(ctx, in.Project, in.Agent, in.Body)
})

var ListRules = answersOp(&Op[AgentIn, Reply[*supervisor.Rules]]{
	ID: "listRules", Method: http.MethodGet, Path: agentPath + "/rules", Access: Owned,
	Summary: "The always-allow rules that answer for an agent (its own and its project's), and its policy for questions nobody answers",
}, func(an Answers, _ context.Context, in *AgentIn) (*supervisor.Rules, error) {
	return an.AgentRules(in.Project, in.Agent)
})

var ListProjectRules = answersOp(&Op[ProjectIn, Reply[[]answers.Rule]]{
	ID: "listProjectRules", Method: http.MethodGet, Path: projectPath + "/rules", Access: UserOnly,
	Summary: "The always-allow rules kept for every agent of a project",
}, func(an Answers, _ context.Context, in *ProjectIn) ([]answers.Rule, error) {
	return an.ProjectRules(in.Project)
})

var AddRule = answersOp(&Op[RuleIn, Reply[answers.Rule]]{
	ID: "addRule", Method: http.MethodPost, Path: agentPath + "/rules", Access: Owned,
	Summary: "Keep an always-allow rule for an agent or its project (refused when it would widen a sandboxed agent's grants)",
}, func(an Answers, ctx context.Context, in *RuleIn) (answers.Rule, error) {
	return an.AddRule(ctx, in.Project, in.Agent, in.Body.Scope, in.Body.Rule)
})

var RemoveRule = answersOp(&Op[RuleIn, Reply[*supervisor.Rules]]{
	ID: "removeRule", Method: http.MethodPost, Path: agentPath + "/rules/remove", Access: Owned,
	Summary: "Forget an always-allow rule of an agent or its project",
}, func(an Answers, ctx context.Context, in *RuleIn) (*supervisor.Rules, error) {
	if err := an.RemoveRule(ctx, in.Project, in.Agent, in.Body.Scope, in.Body.Rule); err != nil {
		return nil, err
	}
	return an.AgentRules(in.Project, in.Agent)
})

var SetAnswerPolicy = answersOp(&Op[PolicyIn, Reply[*supervisor.Rules]]{
	ID: "setAnswerPolicy", Method: http.MethodPut, Path: agentPath + "/answer-policy", Access: Owned,
	Summary: "Set an agent's policy for questions nobody answers: wait (0) or deny after N minutes",
}, func(an Answers, ctx context.Context, in *PolicyIn) (*supervisor.Rules, error) {
	return an.SetAnswerPolicy(ctx, in.Project, in.Agent, in.Body.DenyAfterMin)
})

// permissionEndpoint serves the permission tool (MCP over streamable
// HTTP, stateless) at permtool.Path to an agent's own run: its credential
// says which agent asks; the user's token and unknown ones are refused.
func (h *handler) permissionEndpoint() http.Handler {
	an, ok := h.eng.(Answers)
	mh := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		c := CallerOf(r)
		s := mcp.NewServer(&mcp.Implementation{Name: permtool.Server, Title: "Shepherd's answers", Version: h.opts.Version}, nil)
		permtool.AddTool(s, permtool.ToolName, func(ctx context.Context, _ *mcp.CallToolRequest, pr permtool.Request) (permtool.Answer, error) {
			return an.AskPermission(ctx, *c.Agent, pr)
		})
		return s
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ok {
			writeError(w, http.StatusNotFound, "NotFound", "no such endpoint: "+r.Method+" "+r.URL.Path)
			return
		}
		if CallerOf(r).Agent == nil {
			writeError(w, http.StatusForbidden, supervisor.KindName(supervisor.ErrPermissionDenied),
				"the permission tool is an agent's run's own (its credential, SHEPHERD_AGENT_TOKEN), not the user's")
			return
		}
		mh.ServeHTTP(w, r)
	})
}

// OnShutdown answers every question still asked (deny, saying the engine
// stopped) as the API server begins to shut down, so that each run's call
// gets its answer rather than a broken connection.
func (h *handler) OnShutdown() {
	if an, ok := h.eng.(Answers); ok {
		an.EndQuestions()
	}
}

// Messager sends an agent a message (*supervisor.Engine has it).
type Messager interface {
	SendMessage(ctx context.Context, projectID, agentID, message string) (*store.Record, error)
}

// MessageInput is the body of sendMessage.
type MessageInput struct {
	Message string `json:"message" doc:"what the agent is told: the prompt of its resumed session"`
}

// MessageIn is the input of sendMessage.
type MessageIn struct {
	Project string `path:"project" doc:"the project's id"`
	Agent   string `path:"agent" doc:"the agent's id"`
	Body    MessageInput
}

var SendMessage = define(&Op[MessageIn, Reply[*store.Record]]{
	ID: "sendMessage", Method: http.MethodPost, Path: agentPath + "/message", Access: Owned, Reveal: true,
	Summary: "Send a Claude Code or Codex agent whose run ended a message: it resumes in its session with it as the prompt, through the queue",
}, func(h *handler, ctx context.Context, in *MessageIn) (*Reply[*store.Record], error) {
	m, ok := h.eng.(Messager)
	if !ok {
		return nil, noSuchEndpoint(ctx)
	}
	return answer(ctx).record(m.SendMessage(ctx, in.Project, in.Agent, in.Body.Message))
})

// Usager says what is known of the accounts' usage windows.
type Usager interface {
	Usage() []supervisor.AccountUsage
}

var GetUsage = define(&Op[NoInput, Reply[[]supervisor.AccountUsage]]{
	ID: "getUsage", Method: http.MethodGet, Path: "/v1/usage", Access: UserOnly,
	Summary: "The subscription windows of the accounts the agents use (5-hour, weekly), as their last runs said: status, utilization, reset",
}, func(h *handler, ctx context.Context, _ *NoInput) (*Reply[[]supervisor.AccountUsage], error) {
	u, ok := h.eng.(Usager)
	if !ok {
		return nil, noSuchEndpoint(ctx)
	}
	out := u.Usage()
	if out == nil {
		out = []supervisor.AccountUsage{}
	}
	return &Reply[[]supervisor.AccountUsage]{out}, nil
})

// Webhooks are the engine's webhook channels (*supervisor.Engine has them).
type Webhooks interface {
	Webhooks() ([]webhook.View, error)
	AddWebhook(c webhook.Channel) (webhook.View, error)
	RemoveWebhook(id string) error
	TestWebhooks(ctx context.Context, id string) ([]supervisor.WebhookTest, error)
}

func webhooksOp[I, T any](op *Op[I, Reply[T]], do func(w Webhooks, ctx context.Context, in *I) (T, error)) *Op[I, Reply[T]] {
	return define(op, func(h *handler, ctx context.Context, in *I) (*Reply[T], error) {
		w, ok := h.eng.(Webhooks)
		if !ok {
			return nil, noSuchEndpoint(ctx)
		}
		v, err := do(w, ctx, in)
		if err != nil {
			return nil, err
		}
		return &Reply[T]{v}, nil
	})
}

// WebhookIn names a channel.
type WebhookIn struct {
	ID string `path:"id" doc:"the channel's id"`
}

// AddWebhookIn is the input of addWebhook.
type AddWebhookIn struct {
	Body webhook.Channel
}

// TestWebhooksInput is the optional body of testWebhooks.
type TestWebhooksInput struct {
	ID string `json:"id,omitempty" doc:"the channel to test (default: every channel)"`
}

// TestWebhooksIn is the input of testWebhooks.
type TestWebhooksIn struct {
	Body *TestWebhooksInput
}

var ListWebhooks = webhooksOp(&Op[NoInput, Reply[[]webhook.View]]{
	ID: "listWebhooks", Method: http.MethodGet, Path: "/v1/webhooks", Access: UserOnly,
	Summary: "The webhook channels notifications go to (URLs and headers masked), with how sending to each goes",
}, func(w Webhooks, _ context.Context, _ *NoInput) ([]webhook.View, error) { return w.Webhooks() })

var AddWebhook = webhooksOp(&Op[AddWebhookIn, Reply[webhook.View]]{
	ID: "addWebhook", Method: http.MethodPost, Path: "/v1/webhooks", Access: UserOnly,
	Summary: "Add a webhook channel (a URL and a format: json, ntfy, slack; the kinds it carries, default what enters Needs you)",
}, func(w Webhooks, _ context.Context, in *AddWebhookIn) (webhook.View, error) {
	return w.AddWebhook(in.Body)
})

var RemoveWebhook = webhooksOp(&Op[WebhookIn, Reply[[]webhook.View]]{
	ID: "removeWebhook", Method: http.MethodDelete, Path: "/v1/webhooks/{id}", Access: UserOnly,
	Summary: "Remove a webhook channel",
}, func(w Webhooks, _ context.Context, in *WebhookIn) ([]webhook.View, error) {
	if err := w.RemoveWebhook(in.ID); err != nil {
		return nil, err
	}
	return w.Webhooks()
})

var TestWebhooks = webhooksOp(&Op[TestWebhooksIn, Reply[[]supervisor.WebhookTest]]{
	ID: "testWebhooks", Method: http.MethodPost, Path: "/v1/webhooks/test", Access: UserOnly,
	Summary: "Send a test notification to a webhook channel (or every one) now, and say how each went",
}, func(w Webhooks, ctx context.Context, in *TestWebhooksIn) ([]supervisor.WebhookTest, error) {
	id := ""
	if in.Body != nil {
		id = in.Body.ID
	}
	return w.TestWebhooks(ctx, id)
})
