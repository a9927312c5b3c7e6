package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shepherd/backend/answers"
	"shepherd/backend/api"
	"shepherd/backend/supervisor"
)

// The owner's answers (SPEC "Answers"): an agent that created a Claude
// Code process answers what that process asks (never its own questions:
// the engine refuses an agent's credential on its own).

func addAnswerTools(srv *mcp.Server, s *server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "list_questions", Description: "What a process you created asks and waits for: permissions " +
		"for its tool calls (with suggested always-allow rules) and questions to choose from, the one it waits on first."}, s.listQuestions)
	mcp.AddTool(srv, &mcp.Tool{Name: "answer_question", Description: "Answer what a process you created asks: allow (once), " +
		"always (allow, and keep rule — Claude Code's syntax, e.g. Bash(npm test:*) — for it; never beyond its sandbox), deny " +
		"(with message), or answer (choices: each question's text to an option's label)."}, s.answerQuestion)
	mcp.AddTool(srv, &mcp.Tool{Name: "send_message", Description: "Send a Claude Code or Codex process you created, whose run " +
		"ended, a message: it resumes its session with the message as its prompt (through the queue)."}, s.sendMessage)
}

// Questions is list_questions' answer.
type Questions struct {
	Questions []answers.Asked `json:"questions"`
}

func (s *server) listQuestions(ctx context.Context, _ *mcp.CallToolRequest, in IDIn) (*mcp.CallToolResult, Questions, error) {
	e, pid, err := s.projectID()
	if err != nil {
		return nil, Questions{}, err
	}
	r, err := api.Call(ctx, e, api.ListQuestions, api.AgentIn{Project: pid, Agent: in.ID})
	if err != nil {
		return nil, Questions{}, toolError(err)
	}
	return nil, Questions{Questions: r.Body}, nil
}

// AnswerIn is answer_question's input.
type AnswerIn struct {
	ID         string            `json:"id" jsonschema:"the process's id"`
	QuestionID string            `json:"question_id,omitempty" jsonschema:"the question answered (default: the one it waits on)"`
	Action     string            `json:"action" jsonschema:"allow, always, deny or answer"`
	Rule       string            `json:"rule,omitempty" jsonschema:"always: the rule kept (default: the narrowest suggestion)"`
	Message    string            `json:"message,omitempty" jsonschema:"deny: what the process is told"`
	Answers    map[string]string `json:"answers,omitempty" jsonschema:"answer: each question's text to the chosen option's label"`
}

func (s *server) answerQuestion(ctx context.Context, _ *mcp.CallToolRequest, in AnswerIn) (*mcp.CallToolResult, supervisor.Answered, error) {
	e, pid, err := s.projectID()
	if err != nil {
		return nil, supervisor.Answered{}, err
	}
	r, err := api.Call(ctx, e, api.AnswerQuestion, api.AnswerIn{Project: pid, Agent: in.ID, Body: supervisor.Answer{
		QuestionID: in.QuestionID, Action: in.Action, Rule: in.Rule, Message: in.Message, Answers: in.Answers}})
	if err != nil {
		return nil, supervisor.Answered{}, toolError(err)
	}
	return nil, *r.Body, nil
}

// MessageIn is send_message's input.
type MessageIn struct {
	ID      string `json:"id" jsonschema:"the process's id (a Claude Code or Codex agent whose run ended)"`
	Message string `json:"message" jsonschema:"the prompt of its resumed session"`
}

func (s *server) sendMessage(ctx context.Context, _ *mcp.CallToolRequest, in MessageIn) (*mcp.CallToolResult, Process, error) {
	e, pid, err := s.projectID()
	if err != nil {
		return nil, Process{}, err
	}
	r, err := api.Call(ctx, e, api.SendMessage, api.MessageIn{Project: pid, Agent: in.ID, Body: api.MessageInput{Message: in.Message}})
	if err != nil {
		return nil, Process{}, toolError(err)
	}
	return nil, processOf(r.Body), nil
}
