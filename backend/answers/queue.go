// Package answers keeps what the user answers for the agents (SPEC
// "Answers"): the questions a run's permission tool has asked and not yet
// had answered, queued in order for each agent, and the always-allow rules
// kept per agent or per project with each agent's policy for a question
// nobody answers. The engine (supervisor) asks and answers through it; the
// permission tool's shapes are package permtool's, the rules' syntax
// package permrules's.
package answers

import (
	"fmt"
	"sync"
	"time"

	"shepherd/backend/permtool"
)

// Key names one agent.
type Key struct{ ProjectID, AgentID string }

// Asked is one call of an agent's permission tool waiting for the user.
type Asked struct {
	ID        string         `json:"id"`
	ProjectID string         `json:"projectId"`
	AgentID   string         `json:"agentId"`
	Tool      string         `json:"tool"`
	Summary   string         `json:"summary"` // "Bash: rm -rf build/", "your choice"
	Input     map[string]any `json:"input"`
	ToolUseID string         `json:"toolUseId,omitempty"`
	// Questions are an AskUserQuestion's questions and their options.
	Questions []permtool.Question `json:"questions,omitempty"`
	// Suggestions are always-allow rules that allow this call, narrowest
	// first (none for a question).
	Suggestions []string  `json:"suggestions"`
	AskedAt     time.Time `json:"askedAt"`
	// DenyAt: the agent's policy denies it then if nobody answers.
	DenyAt *time.Time `json:"denyAt,omitempty"`
	// Position in the agent's queue: 1 is the one the agent waits on.
	Position int `json:"position"`
}

// Pending is a question and where its answer goes.
type Pending struct {
	Q       Asked
	Request permtool.Request
	done    chan Outcome
	settled bool
}

// Outcome is how a question was answered: the answer, and who or what
// gave it ("user", an agent id, "rule", "policy", "engine").
type Outcome struct {
	Answer permtool.Answer
	By     string
	Rule   string // an always-allow rule, when one was added or matched
}

// Done delivers the outcome once settled.
func (p *Pending) Done() <-chan Outcome { return p.done }

// Queue holds every agent's pending questions, in the order asked.
type Queue struct {
	mu   sync.Mutex
	seq  int
	byAg map[Key][]*Pending
}

// NewQueue returns an empty queue.
func NewQueue() *Queue { return &Queue{byAg: map[Key][]*Pending{}} }

// Add queues q for its agent and returns it with its id; first: it is the
// one the agent waits on now.
func (qu *Queue) Add(q Asked, r permtool.Request) (p *Pending, first bool) {
	qu.mu.Lock()
	defer qu.mu.Unlock()
	qu.seq++
	q.ID = fmt.Sprintf("q%d", qu.seq)
	k := Key{q.ProjectID, q.AgentID}
	p = &Pending{Q: q, Request: r, done: make(chan Outcome, 1)}
	qu.byAg[k] = append(qu.byAg[k], p)
	return p, len(qu.byAg[k]) == 1
}

// List is the agent's pending questions, the one it waits on first.
func (qu *Queue) List(k Key) []Asked {
	qu.mu.Lock()
	defer qu.mu.Unlock()
	out := make([]Asked, 0, len(qu.byAg[k]))
	for i, p := range qu.byAg[k] {
		q := p.Q
		q.Position = i + 1
		out = append(out, q)
	}
	return out
}

// Find is the agent's pending question id ("" : the first).
func (qu *Queue) Find(k Key, id string) (*Pending, bool) {
	qu.mu.Lock()
	defer qu.mu.Unlock()
	for _, p := range qu.byAg[k] {
		if id == "" || p.Q.ID == id {
			return p, true
		}
	}
	return nil, false
}

// Settle takes p out of the queue to be answered, once: false if it was
// answered already (or abandoned). next is the agent's question now first
// (nil: none). The caller records the answer, then Delivers it.
func (qu *Queue) Settle(k Key, p *Pending) (ok bool, next *Pending) {
	qu.mu.Lock()
	defer qu.mu.Unlock()
	if p.settled {
		return false, nil
	}
	p.settled = true
	return true, qu.remove(k, p)
}

// Deliver hands the outcome of a settled question to its caller.
func (p *Pending) Deliver(o Outcome) { p.done <- o }

// Abandon takes p out of the queue unanswered (its caller gave up); next
// as for Settle. False if it was settled already.
func (qu *Queue) Abandon(k Key, p *Pending) (ok bool, next *Pending) {
	qu.mu.Lock()
	defer qu.mu.Unlock()
	if p.settled {
		return false, nil
	}
	p.settled = true
	return true, qu.remove(k, p)
}

func (qu *Queue) remove(k Key, p *Pending) *Pending {
	ps := qu.byAg[k]
	for i, x := range ps {
		if x == p {
			ps = append(ps[:i:i], ps[i+1:]...)
			break
		}
	}
	if len(ps) == 0 {
		delete(qu.byAg, k)
		return nil
	}
	qu.byAg[k] = ps
	return ps[0]
}

// All is every pending question of every agent (for ending them).
func (qu *Queue) All() map[Key][]*Pending {
	qu.mu.Lock()
	defer qu.mu.Unlock()
	out := map[Key][]*Pending{}
	for k, ps := range qu.byAg {
		out[k] = append([]*Pending(nil), ps...)
	}
	return out
}
