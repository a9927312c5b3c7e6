package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"shepherd/backend/secrets"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
	"shepherd/backend/workspace"
)

// Agents: each a command the engine runs, supervises and keeps the record,
// log and history of.

// StopInput is the optional body of POST …/stop.
type StopInput struct {
	GraceSec *int `json:"graceSec,omitempty" doc:"seconds between SIGTERM and SIGKILL, 0 to 3600 (default: the agent's own)"`
}

// BudgetInput is the body of POST …/budget: the user's answer to a budget
// pause — raise (the limit reached, to Limit, above what was reached),
// remove (that limit), once or stop.
type BudgetInput struct {
	Action string  `json:"action" enum:"raise,remove,once,stop"`
	Limit  float64 `json:"limit,omitempty" doc:"with raise: the new limit (dollars, or turns for a turns limit)"`
}

// Removed is the answer of DELETE …/{agent}.
type Removed struct {
	ProjectID  string `json:"projectId"`
	AgentID    string `json:"agentId"`
	Removed    bool   `json:"removed"`
	LogDeleted bool   `json:"logDeleted"`
}

// ListAgentsIn is the input of listAgents.
type ListAgentsIn struct {
	Project string `path:"project" doc:"the project's id"`
	Stats   bool   `query:"stats" doc:"true: sample the agents' CPU and memory now (and keep sampling them a while)"`
}

// CreateAgentIn is the input of createAgent.
type CreateAgentIn struct {
	Project string `path:"project" doc:"the project's id"`
	Body    supervisor.AgentSpec
}

// UpdateAgentIn is the input of updateAgent.
type UpdateAgentIn struct {
	Project string `path:"project" doc:"the project's id"`
	Agent   string `path:"agent" doc:"the agent's id"`
	Body    supervisor.AgentSpec
}

// RemoveAgentIn is the input of removeAgent.
type RemoveAgentIn struct {
	Project        string `path:"project" doc:"the project's id"`
	Agent          string `path:"agent" doc:"the agent's id"`
	Force          bool   `query:"force" doc:"true: stop it first if it runs"`
	DeleteLog      bool   `query:"deleteLog" doc:"true: delete its log too"`
	Worktree       string `query:"worktree" enum:"keep,merge,discard" doc:"a worktree agent's worktree: keep (its branch), merge into the base, or discard"`
	DiscardChanges bool   `query:"discardChanges" doc:"true: let the worktree's uncommitted changes go (keep, discard)"`
	Message        string `query:"message" doc:"with worktree=merge: the message of the commit of its uncommitted work"`
}

// StopAgentIn is the input of stopAgent.
type StopAgentIn struct {
	Project string `path:"project" doc:"the project's id"`
	Agent   string `path:"agent" doc:"the agent's id"`
	Body    *StopInput
}

// PauseAgentIn is the input of pauseAgent.
type PauseAgentIn struct {
	Project string `path:"project" doc:"the project's id"`
	Agent   string `path:"agent" doc:"the agent's id"`
	Body    *PauseInput
}

// BudgetIn is the input of answerBudget.
type BudgetIn struct {
	Project string `path:"project" doc:"the project's id"`
	Agent   string `path:"agent" doc:"the agent's id"`
	Body    BudgetInput
}

func recordOp(id, method, path string, access Access, summary string, act func(h *handler, ctx context.Context, in *AgentIn) (*store.Record, error)) *Op[AgentIn, Reply[*store.Record]] {
	return define(&Op[AgentIn, Reply[*store.Record]]{ID: id, Method: method, Path: path, Access: access, Reveal: true,
		EmptyBody: method == http.MethodPost, Summary: summary},
		func(h *handler, ctx context.Context, in *AgentIn) (*Reply[*store.Record], error) {
			return answer(ctx).record(act(h, ctx, in))
		})
}

var ListAgents = define(&Op[ListAgentsIn, Reply[[]*store.Record]]{
	ID: "listAgents", Method: http.MethodGet, Path: projectPath + "/agents", Access: InProject, Reveal: true,
	Summary: "A project's agents, oldest first (an agent sees itself and what it created)",
}, func(h *handler, ctx context.Context, in *ListAgentsIn) (*Reply[[]*store.Record], error) {
	if in.Stats {
		if err := h.eng.StatsNow(in.Project); err != nil {
			return nil, err
		}
	}
	recs, err := h.eng.ListAgents(in.Project)
	if err != nil {
		return nil, err
	}
	return &Reply[[]*store.Record]{masked(ctx, h.visible(callerIn(ctx), recs))}, nil
})

var CreateAgent = define(&Op[CreateAgentIn, Reply[*store.Record]]{
	ID: "createAgent", Method: http.MethodPost, Path: projectPath + "/agents", Access: InProject, Reveal: true, Status: http.StatusCreated,
	Summary: "Create an agent (not started); an agent's agents are sandboxed, with at most its own grants",
}, func(h *handler, ctx context.Context, in *CreateAgentIn) (*Reply[*store.Record], error) {
	spec := in.Body
	if spec.TimeoutSec < 0 || spec.GraceSec < 0 {
		return nil, problem(http.StatusBadRequest, "ValidationError", "timeoutSec and graceSec must not be negative")
	}
	if c := callerIn(ctx); !c.User {
		// On the agent's behalf: sandboxed, at most its own grants, and its.
		spec.Caller, spec.Parent = c.Agent, c.Agent.AgentID
	}
	return answer(ctx).record(h.eng.CreateAgent(in.Project, spec))
})

var GetAgent = recordOp("getAgent", http.MethodGet, agentPath, OwnedOrSelf, "One agent's record",
	func(h *handler, ctx context.Context, in *AgentIn) (*store.Record, error) {
		return h.eng.GetAgent(in.Project, in.Agent)
	})

var UpdateAgent = define(&Op[UpdateAgentIn, Reply[*store.Record]]{
	ID: "updateAgent", Method: http.MethodPut, Path: agentPath, Access: Owned, Reveal: true,
	Summary: "Change the user-set fields of an agent that is not live (the body is the whole spec)",
}, func(h *handler, ctx context.Context, in *UpdateAgentIn) (*Reply[*store.Record], error) {
	spec := in.Body
	if spec.ID != "" && spec.ID != in.Agent {
		return nil, problem(http.StatusBadRequest, "ValidationError", "the body's id differs from the agent in the path")
	}
	spec.ID = in.Agent
	if c := callerIn(ctx); !c.User {
		cur, err := h.eng.GetAgent(in.Project, spec.ID)
		if err != nil {
			return nil, err
		}
		spec.Caller, spec.Parent = c.Agent, cur.Parent
	}
	return answer(ctx).record(h.eng.UpdateAgent(in.Project, spec))
})

var RemoveAgent = define(&Op[RemoveAgentIn, Reply[Removed]]{
	ID: "removeAgent", Method: http.MethodDelete, Path: agentPath, Access: Owned,
	Summary: "Forget an agent (a live one needs force); its log is kept unless deleteLog; a worktree is kept, merged or discarded",
}, func(h *handler, ctx context.Context, in *RemoveAgentIn) (*Reply[Removed], error) {
	o := supervisor.RemoveOptions{Force: in.Force, DeleteLog: in.DeleteLog, Worktree: in.Worktree,
		DiscardChanges: in.DiscardChanges, Message: in.Message}
	if o.Message != "" && o.Worktree != workspace.Merge {
		return nil, problem(http.StatusBadRequest, "ValidationError", "query parameter message goes with worktree=merge")
	}
	if c := callerIn(ctx); !c.User && o.Worktree == workspace.Merge {
		return nil, problem(http.StatusForbidden, supervisor.KindName(supervisor.ErrPermissionDenied),
			"agent '"+c.Agent.AgentID+"' cannot merge a branch into the user's checkout: only the user can")
	}
	var err error
	if h.wt != nil {
		err = h.wt.Remove(ctx, in.Project, in.Agent, o)
	} else {
		err = h.eng.RemoveAgent(ctx, in.Project, in.Agent, in.Force, in.DeleteLog)
	}
	if err != nil {
		return nil, err
	}
	return &Reply[Removed]{Removed{ProjectID: in.Project, AgentID: in.Agent, Removed: true, LogDeleted: in.DeleteLog}}, nil
})

var StartAgent = recordOp("startAgent", http.MethodPost, agentPath+"/start", Owned, "Start an agent with its arguments",
	func(h *handler, ctx context.Context, in *AgentIn) (*store.Record, error) {
		return h.eng.StartAgent(ctx, in.Project, in.Agent)
	})

var StopAgent = define(&Op[StopAgentIn, Reply[*store.Record]]{
	ID: "stopAgent", Method: http.MethodPost, Path: agentPath + "/stop", Access: Owned, Reveal: true,
	Summary: "Stop a live agent: SIGTERM to its process group, SIGKILL after the grace",
}, func(h *handler, ctx context.Context, in *StopAgentIn) (*Reply[*store.Record], error) {
	var grace *time.Duration
	if in.Body != nil && in.Body.GraceSec != nil {
		g := *in.Body.GraceSec
		if g < 0 {
			return nil, problem(http.StatusBadRequest, "ValidationError", "graceSec must not be negative")
		}
		// More would wrap around to a negative duration: an immediate SIGKILL.
		if int64(g) > maxGraceSec {
			return nil, problem(http.StatusBadRequest, "ValidationError",
				fmt.Sprintf("graceSec must be between 0 and %d, not %d", maxGraceSec, g))
		}
		d := time.Duration(g) * time.Second
		grace = &d
	}
	return answer(ctx).record(h.eng.StopAgent(ctx, in.Project, in.Agent, grace))
})

var ResumeAgent = recordOp("resumeAgent", http.MethodPost, agentPath+"/resume", Owned,
	"Run the agent's resume arguments with its session id",
	func(h *handler, ctx context.Context, in *AgentIn) (*store.Record, error) {
		return h.eng.ResumeAgent(ctx, in.Project, in.Agent)
	})

// AckAgent acknowledges what the agent needed of the user (SPEC
// "Attention"): it leaves Needs you until it needs them again.
var AckAgent = recordOp("ackAgent", http.MethodPost, agentPath+"/ack", UserOnly,
	"Acknowledge what an agent needed of the user: it leaves Needs you until it needs them again",
	func(h *handler, ctx context.Context, in *AgentIn) (*store.Record, error) {
		return h.eng.AckAgent(in.Project, in.Agent)
	})

var PauseAgent = define(&Op[PauseAgentIn, Reply[*store.Record]]{
	ID: "pauseAgent", Method: http.MethodPost, Path: agentPath + "/pause", Access: Owned, Reveal: true,
	Summary: "Pause one agent: a running one at a safe point (unless now), its session kept; a queued one leaves the queue",
}, func(h *handler, ctx context.Context, in *PauseAgentIn) (*Reply[*store.Record], error) {
	var p PauseInput
	if in.Body != nil {
		p = *in.Body
	}
	return answer(ctx).record(h.eng.PauseAgent(ctx, in.Project, in.Agent, p.Now, p.Note))
})

var UnpauseAgent = recordOp("unpauseAgent", http.MethodPost, agentPath+"/unpause", Owned,
	"Resume a paused agent (its session when it can be resumed), through the queue",
	func(h *handler, ctx context.Context, in *AgentIn) (*store.Record, error) {
		return h.eng.UnpauseAgent(ctx, in.Project, in.Agent)
	})

// AnswerBudget is the user's alone: no agent raises its own budget.
var AnswerBudget = define(&Op[BudgetIn, Reply[*store.Record]]{
	ID: "answerBudget", Method: http.MethodPost, Path: agentPath + "/budget", Access: UserOnly, Reveal: true,
	Summary: "Answer a budget pause: raise the limit reached (above what was reached), remove it, resume once past it, or stop",
}, func(h *handler, ctx context.Context, in *BudgetIn) (*Reply[*store.Record], error) {
	return answer(ctx).record(h.eng.AnswerBudget(ctx, in.Project, in.Agent, in.Body.Action, in.Body.Limit))
})

var GetStats = define(&Op[AgentIn, Reply[[]store.Stats]]{
	ID: "getStats", Method: http.MethodGet, Path: agentPath + "/stats", Access: OwnedOrSelf,
	Summary: "An agent's recent CPU and memory samples (the last minutes while watched), oldest first",
}, func(h *handler, ctx context.Context, in *AgentIn) (*Reply[[]store.Stats], error) {
	hist, err := h.eng.StatsHistory(in.Project, in.Agent)
	return &Reply[[]store.Stats]{hist}, err
})

// runsEngine is what listRuns needs of the engine (*supervisor.Engine has
// it; an engine without it answers as if the operation did not exist).
type runsEngine interface {
	Runs(projectID, agentID string) ([]supervisor.Run, error)
}

var _ runsEngine = (*supervisor.Engine)(nil)

var ListRuns = define(&Op[AgentIn, Reply[[]supervisor.Run]]{
	ID: "listRuns", Method: http.MethodGet, Path: agentPath + "/runs", Access: UserOnly,
	Summary: "An agent's runs, oldest first: when and why each started, its session, where its lines begin in the log, how it ended",
}, func(h *handler, ctx context.Context, in *AgentIn) (*Reply[[]supervisor.Run], error) {
	e, ok := h.eng.(runsEngine)
	if !ok {
		return nil, noSuchEndpoint(ctx)
	}
	runs, err := e.Runs(in.Project, in.Agent)
	return &Reply[[]supervisor.Run]{runs}, err
})

// answerer makes answers of a request's results.
type answerer struct{ ctx context.Context }

func answer(ctx context.Context) answerer { return answerer{ctx} }

// record is a record as an answer, its secrets masked unless revealed.
func (a answerer) record(rec *store.Record, err error) (*Reply[*store.Record], error) {
	if err != nil {
		return nil, err
	}
	return &Reply[*store.Record]{masked(a.ctx, rec)}, nil
}

// masked masks the secret environment values of the records in v (a
// record, a list of them, stop results) unless the request asked for them
// with ?reveal=true. Lists are never null.
func masked[T any](ctx context.Context, v T) T {
	show := revealed(ctx)
	var out any = v
	switch x := any(v).(type) {
	case *store.Record:
		if !show {
			out = secrets.MaskRecord(x)
		}
	case []*store.Record:
		recs := make([]*store.Record, len(x))
		for i, rec := range x {
			if recs[i] = rec; !show {
				recs[i] = secrets.MaskRecord(rec)
			}
		}
		out = recs
	case []supervisor.StopResult:
		res := make([]supervisor.StopResult, len(x))
		for i, r := range x {
			if !show {
				r.Record = secrets.MaskRecord(r.Record)
			}
			res[i] = r
		}
		out = res
	}
	return out.(T)
}
