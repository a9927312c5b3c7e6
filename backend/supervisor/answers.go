package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"shepherd/backend/answers"
	"shepherd/backend/claudehooks"
	"shepherd/backend/lifecycle"
	"shepherd/backend/permrules"
	"shepherd/backend/permtool"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/hook"
)

// Answers (SPEC "Answers"): every Claude Code run the engine starts gets
// Shepherd's permission tool (--permission-prompt-tool, served on the API
// with the run's own credential). A call that no kept rule allows waits in
// the agent's queue of questions — the agent is `waiting: permission for
// Bash: rm -rf build/` in Needs you — until its owner answers: allow once,
// always allow (a rule kept for the agent or the project, never one that
// widens a sandboxed agent's grants), deny with a message, or the choices
// of an AskUserQuestion; or until the agent's policy denies it after N
// minutes. Every question and answer is an event. When the engine stops,
// what is still asked is denied with a reason (the CLI goes on).

// Actions of an answer.
const (
	AnswerAllow  = "allow"  // allow once
	AnswerAlways = "always" // allow, and keep a rule that allows it from now on
	AnswerDeny   = "deny"   // refuse, with an optional message the agent reads
	AnswerChoose = "answer" // an AskUserQuestion's choices
)

// Answer is the user's answer to an agent's question.
type Answer struct {
	// QuestionID: the question answered ("": the one the agent waits on).
	QuestionID string `json:"questionId,omitempty" doc:"the question answered (default: the one the agent waits on)"`
	Action     string `json:"action" enum:"allow,always,deny,answer" doc:"allow once, always allow (with rule), deny (with message), answer (an AskUserQuestion's choices)"`
	Rule       string `json:"rule,omitempty" doc:"always: the rule kept, in Claude Code's syntax, e.g. Bash(npm test:*) (default: the narrowest suggestion)"`
	Scope      string `json:"scope,omitempty" enum:"agent,project," doc:"always: keep the rule for this agent (default) or every agent of the project"`
	Message    string `json:"message,omitempty" doc:"deny: what the agent is told"`
	// Answers maps each question's text to the chosen option's label
	// (several joined by ", " where it allows many), or to free text.
	Answers map[string]string `json:"answers,omitempty" doc:"answer: each question's text to the chosen option's label (or free text with free)"`
	Free    bool              `json:"free,omitempty" doc:"answer: the answers are free text, not options' labels"`
}

// Answered is what an answer did.
type Answered struct {
	Question answers.Asked `json:"question"`
	Behavior string        `json:"behavior"` // allow or deny, as the agent reads it
	Rule     *answers.Rule `json:"rule,omitempty"`
	Pending  int           `json:"pending"` // questions of the agent still waiting
}

// Rules are an agent's always-allow rules, and its policy.
type Rules struct {
	Project []answers.Rule `json:"project"`
	Agent   []answers.Rule `json:"agent"`
	// DenyAfterMin: a question nobody answers is denied after that many
	// minutes (0: it waits).
	DenyAfterMin int `json:"denyAfterMin"`
}

type answersState struct {
	once  sync.Once
	q     *answers.Queue
	mu    sync.Mutex
	books map[string]*answers.Book
	// Questions are rate-limited per agent as hooks are (package
	// needsyou), in buckets of their own: each is an event and a
	// notification, and a box must not flood the user's disk or desk.
	limitMu sync.Mutex
	buckets map[AgentRef]*bucket
}

// bucket is a token bucket on the engine's clock.
type bucket struct {
	tokens float64
	at     time.Time
}

// Bounds of an agent's questions: at most MaxPending wait at once (the
// CLI asks one at a time, a few read-only ones in parallel); QuestionBurst
// may be asked at once and QuestionRate a second after that.
const (
	MaxPending    = 8
	QuestionBurst = 20
	QuestionRate  = 2.0
)

// allowQuestion takes a token of ref's bucket, or says it asks too fast.
func (e *Engine) allowQuestion(ref AgentRef) error {
	now := e.clock.Now()
	l := &e.ans
	l.limitMu.Lock()
	defer l.limitMu.Unlock()
	if l.buckets == nil {
		l.buckets = map[AgentRef]*bucket{}
	}
	b := l.buckets[ref]
	if b == nil {
		b = &bucket{tokens: QuestionBurst, at: now}
		l.buckets[ref] = b
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(QuestionBurst, b.tokens+d.Seconds()*QuestionRate)
	}
	b.at = now
	if b.tokens < 1 {
		return newErr(ErrTooMany, "agent '%s' asks faster than %d questions at once and %g a second: this one is refused", ref.AgentID, QuestionBurst, QuestionRate)
	}
	b.tokens--
	return nil
}

func (e *Engine) answerQueue() *answers.Queue {
	e.ans.once.Do(func() {
		e.ans.q = answers.NewQueue()
		e.ans.books = map[string]*answers.Book{}
	})
	return e.ans.q
}

// book is the project's rules and policies.
func (e *Engine) book(projectID string) (*answers.Book, error) {
	e.answerQueue()
	e.ans.mu.Lock()
	defer e.ans.mu.Unlock()
	if b := e.ans.books[projectID]; b != nil {
		return b, nil
	}
	b, err := answers.Open(filepath.Join(e.st.ProjectDir(projectID), answers.FileName))
	if err != nil {
		return nil, err
	}
	e.ans.books[projectID] = b
	return b, nil
}

// withPermissionTool gives a Claude Code run Shepherd's permission tool,
// unless its args decide permissions their own way or there is no API on
// TCP: the tool is an MCP server over HTTP, which an engine on a Unix socket
// only (a host's) does not serve to its agents — they run as before it,
// refused what needs approval in -p.
func withPermissionTool(rec *store.Record, args []string, apiURL string) []string {
	if rec.Profile != store.ProfileClaudeJSON || apiURL == "" || strings.HasPrefix(apiURL, "unix://") || permtool.HasOwn(args) {
		return args
	}
	out := make([]string, 0, len(args)+4)
	i := 0
	for ; i < len(args) && args[i] != "--"; i++ {
		out = append(out, args[i])
	}
	out = append(out, "--mcp-config", permtool.Config(apiURL, EnvAgentToken),
		"--permission-prompt-tool", permtool.Flag(permtool.Server))
	return append(out, args[i:]...)
}

// askedOf is what a question needs of the agent's record.
type askedOf struct {
	rec     store.Record
	root    string
	rn      *run
	created time.Time
}

func (e *Engine) rulesContext(x askedOf) permrules.Context {
	home, _ := os.UserHomeDir()
	return permrules.Context{Cwd: x.rec.Cwd, Root: x.root, Home: home}
}

// usable are rules that may answer for the agent: all of them, or for a
// sandboxed agent those within its grants.
func usable(rs []permrules.Rule, rec *store.Record, ctx permrules.Context) []permrules.Rule {
	if rec.Sandbox == nil {
		return rs
	}
	return slices.DeleteFunc(rs, func(r permrules.Rule) bool { return permrules.Widens(r, *rec.Sandbox, ctx) != nil })
}

// AskPermission is a call of the permission tool by the agent ref's run: it
// returns the answer the run follows, once there is one. ctx ends when the
// run's call is abandoned.
func (e *Engine) AskPermission(ctx context.Context, ref AgentRef, r permtool.Request) (permtool.Answer, error) {
	q := e.answerQueue()
	p, a, err := e.agent(ref.ProjectID, ref.AgentID)
	if err != nil {
		return permtool.Answer{}, err
	}
	a.mu.Lock()
	x := askedOf{rec: *a.rec, rn: a.run, created: a.rec.CreatedAt}
	live := !a.gone() && a.run != nil && a.rec.Status == lifecycle.Running
	a.mu.Unlock()
	if !live {
		return permtool.Answer{}, newErr(ErrNotRunning, "agent '%s' is not running", ref.AgentID)
	}
	if err := e.allowQuestion(ref); err != nil {
		return permtool.Answer{}, err
	}
	k := answers.Key{ProjectID: ref.ProjectID, AgentID: ref.AgentID}
	if n := len(q.List(k)); n >= MaxPending {
		return permtool.Answer{}, newErr(ErrTooMany, "agent '%s' has %d questions waiting for the user already: answer them first", ref.AgentID, n)
	}
	p.mu.Lock()
	x.root = p.info.Path
	p.mu.Unlock()
	b, err := e.book(ref.ProjectID)
	if err != nil {
		return permtool.Answer{}, err
	}
	pctx := e.rulesContext(x)
	now := e.clock.Now()
	question := answers.Asked{ProjectID: ref.ProjectID, AgentID: ref.AgentID, Tool: r.ToolName,
		Summary: r.Summary(x.rec.Cwd), Input: r.Input, ToolUseID: r.ToolUseID, AskedAt: now.UTC(), Suggestions: []string{}}
	if r.IsQuestion() {
		qs, err := r.Questions()
		if err != nil {
			return permtool.Answer{}, err
		}
		question.Questions = qs
	} else {
		rules := usable(answers.Parsed(b.Rules(ref.AgentID, x.created)), &x.rec, pctx)
		if m, ok := permrules.Match(rules, r.Call(), pctx); ok {
			rule := m[0].String()
			e.appendEvent(ref.ProjectID, store.Event{Time: now.UTC(), Event: "answer", AgentID: ref.AgentID, Reason: "allowed by " + rule,
				Data: map[string]any{"tool": r.ToolName, "summary": question.Summary, "behavior": permtool.Allow, "by": "rule", "rule": rule}})
			return permtool.AllowAnswer(r.Input), nil
		}
		for _, s := range permtool.Suggest(r, x.rec.Cwd) {
			if len(usable([]permrules.Rule{permrules.MustParse(s)}, &x.rec, pctx)) == 1 {
				question.Suggestions = append(question.Suggestions, s)
			}
		}
	}
	denyAfter := b.DenyAfter(ref.AgentID, x.created)
	if denyAfter > 0 {
		t := now.Add(denyAfter).UTC()
		question.DenyAt = &t
	}
	pend, first := q.Add(question, r)
	e.appendEvent(ref.ProjectID, store.Event{Time: now.UTC(), Event: "question", AgentID: ref.AgentID, Reason: question.Summary,
		Data: map[string]any{"question": pend.Q.ID, "tool": r.ToolName, "summary": question.Summary}})
	if first {
		e.showQuestion(k, pend)
	}
	if denyAfter > 0 {
		t := e.after(e.ctx, denyAfter, func() {
			e.settleQuestion(k, pend, answers.Outcome{By: "policy",
				Answer: permtool.DenyAnswer(fmt.Sprintf("No answer from the user in %s: denied by this agent's policy.", denyAfter))})
		})
		defer t.Stop()
	}
	select {
	case o := <-pend.Done():
		return o.Answer, nil
	case <-ctx.Done():
		if ok, next := q.Abandon(k, pend); ok {
			e.appendEvent(ref.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "answer", AgentID: ref.AgentID,
				Reason: "the agent stopped asking", Data: map[string]any{"question": pend.Q.ID, "by": "agent"}})
			e.showQuestion(k, next)
		}
		return permtool.Answer{}, ctx.Err()
	case <-e.ctx.Done():
		e.settleQuestion(k, pend, answers.Outcome{By: "engine", Answer: permtool.DenyAnswer(engineStopped)})
		return (<-pend.Done()).Answer, nil
	}
}

const engineStopped = "Shepherd's engine stopped while this waited for the user's answer: not allowed. Ask again if it is still needed."

// EndQuestions denies every question still asked (the engine stops): each
// run's call gets its answer before the API goes away.
func (e *Engine) EndQuestions() {
	for k, ps := range e.answerQueue().All() {
		for _, p := range ps {
			e.settleQuestion(k, p, answers.Outcome{By: "engine", Answer: permtool.DenyAnswer(engineStopped)})
		}
	}
}

// settleQuestion answers p, records it, and shows the agent's next
// question or its wait ended; false if p was answered already.
func (e *Engine) settleQuestion(k answers.Key, p *answers.Pending, o answers.Outcome) bool {
	ok, next := e.answerQueue().Settle(k, p)
	if !ok {
		return false
	}
	defer p.Deliver(o) // once the answer is recorded and the next question shown
	data := map[string]any{"question": p.Q.ID, "tool": p.Q.Tool, "summary": p.Q.Summary, "behavior": o.Answer.Behavior, "by": o.By}
	reason := o.Answer.Behavior
	if o.Answer.Behavior == permtool.Deny && o.Answer.Message != "" {
		data["message"] = o.Answer.Message
	}
	if o.Rule != "" {
		data["rule"] = o.Rule
		reason += " always: " + o.Rule
	}
	if ans, ok := o.Answer.UpdatedInput["answers"]; ok && p.Request.IsQuestion() {
		data["answers"] = ans
	}
	e.appendEvent(k.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "answer", AgentID: k.AgentID, Reason: reason, Data: data})
	e.showQuestion(k, next)
	return true
}

// showQuestion makes the agent wait on p (nil: its wait on a question
// ends).
func (e *Engine) showQuestion(k answers.Key, p *answers.Pending) {
	_, a, err := e.agent(k.ProjectID, k.AgentID)
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gone() || a.rec.Status != lifecycle.Running {
		return
	}
	if p == nil {
		e.needs.Hold(a, nil)
		return
	}
	w := &claudehooks.Waiting{Kind: claudehooks.WaitPermission, What: "permission for " + p.Q.Summary, NeedsYou: true,
		Since: p.Q.AskedAt}
	if p.Request.IsQuestion() {
		w.Kind, w.What = claudehooks.WaitInput, "your choice"
	}
	e.needs.Hold(a, w)
}

// Questions are the agent's questions waiting for an answer, the one it
// waits on first.
func (e *Engine) Questions(projectID, agentID string) ([]answers.Asked, error) {
	if _, _, err := e.agent(projectID, agentID); err != nil {
		return nil, err
	}
	return e.answerQueue().List(answers.Key{ProjectID: projectID, AgentID: agentID}), nil
}

// AnswerQuestion answers one of the agent's questions (ctx says who: the
// user, or an agent that owns it — never the agent itself, which the API
// keeps out).
func (e *Engine) AnswerQuestion(ctx context.Context, projectID, agentID string, in Answer) (*Answered, error) {
	q := e.answerQueue()
	if _, _, err := e.agent(projectID, agentID); err != nil {
		return nil, err
	}
	k := answers.Key{ProjectID: projectID, AgentID: agentID}
	p, ok := q.Find(k, in.QuestionID)
	if !ok {
		if in.QuestionID != "" {
			return nil, newErr(ErrNotFound, "agent '%s' has no question '%s' waiting (answered already, or never asked)", agentID, in.QuestionID)
		}
		return nil, newErr(ErrTransition, "agent '%s' asks nothing: no question waits for an answer", agentID)
	}
	by := "user"
	if c := hook.CallerOf(ctx); c != nil {
		by = c.AgentID
	}
	o := answers.Outcome{By: by}
	out := &Answered{Question: p.Q}
	switch in.Action {
	case AnswerAllow, AnswerAlways:
		if p.Request.IsQuestion() {
			return nil, newErr(ErrValidation, "agent '%s' asks you to choose (%s): answer with its choices, or deny", agentID, p.Q.Summary)
		}
		if in.Action == AnswerAlways {
			rule := strings.TrimSpace(in.Rule)
			if rule == "" && len(p.Q.Suggestions) > 0 {
				rule = p.Q.Suggestions[0]
			}
			kept, err := e.AddRule(ctx, projectID, agentID, in.Scope, rule)
			if err != nil {
				return nil, err
			}
			out.Rule, o.Rule = &kept, kept.Rule
		}
		o.Answer = permtool.AllowAnswer(p.Request.Input)
	case AnswerDeny:
		o.Answer = permtool.DenyAnswer(in.Message)
	case AnswerChoose:
		if !p.Request.IsQuestion() {
			return nil, newErr(ErrValidation, "agent '%s' asks permission (%s), not to choose: allow or deny it", agentID, p.Q.Summary)
		}
		a, err := permtool.AnswerQuestions(p.Request, in.Answers, in.Free)
		if err != nil {
			return nil, newErr(ErrValidation, "%v", err)
		}
		o.Answer = a
	default:
		return nil, newErr(ErrValidation, "action %q: want allow, always, deny or answer", in.Action)
	}
	if !e.settleQuestion(k, p, o) {
		return nil, newErr(ErrNotFound, "agent '%s' has no question '%s' waiting (answered already)", agentID, p.Q.ID)
	}
	out.Behavior = o.Answer.Behavior
	out.Pending = len(q.List(k))
	return out, nil
}

// agentFacts are what rules of an agent are checked against.
func (e *Engine) agentFacts(projectID, agentID string) (askedOf, error) {
	p, a, err := e.agent(projectID, agentID)
	if err != nil {
		return askedOf{}, err
	}
	a.mu.Lock()
	x := askedOf{rec: *a.rec, created: a.rec.CreatedAt}
	a.mu.Unlock()
	p.mu.Lock()
	x.root = p.info.Path
	p.mu.Unlock()
	return x, nil
}

// AgentRules are the rules that may answer for the agent, and its policy.
func (e *Engine) AgentRules(projectID, agentID string) (*Rules, error) {
	x, err := e.agentFacts(projectID, agentID)
	if err != nil {
		return nil, err
	}
	b, err := e.book(projectID)
	if err != nil {
		return nil, err
	}
	out := &Rules{Project: []answers.Rule{}, Agent: []answers.Rule{}, DenyAfterMin: int(b.DenyAfter(agentID, x.created) / time.Minute)}
	for _, r := range b.Rules(agentID, x.created) {
		if r.Scope == answers.ScopeAgent {
			out.Agent = append(out.Agent, r)
		} else {
			out.Project = append(out.Project, r)
		}
	}
	return out, nil
}

// ProjectRules are the rules kept for every agent of the project.
func (e *Engine) ProjectRules(projectID string) ([]answers.Rule, error) {
	if _, err := e.project(projectID); err != nil {
		return nil, err
	}
	b, err := e.book(projectID)
	if err != nil {
		return nil, err
	}
	return b.Rules("", time.Time{}), nil
}

// AddRule keeps an always-allow rule for the agent (scope agent, the
// default) or its project (scope project: the user's alone). A rule that
// does not parse, or that would widen the sandboxed agent's grants, is
// refused, saying why.
func (e *Engine) AddRule(ctx context.Context, projectID, agentID, scope, rule string) (answers.Rule, error) {
	if scope == "" {
		scope = answers.ScopeAgent
	}
	if scope != answers.ScopeAgent && scope != answers.ScopeProject {
		return answers.Rule{}, newErr(ErrValidation, "scope %q: want agent or project", scope)
	}
	if c := hook.CallerOf(ctx); c != nil && scope == answers.ScopeProject {
		return answers.Rule{}, newErr(ErrPermissionDenied, "agent '%s' cannot keep a rule for the whole project: only the user can", c.AgentID)
	}
	x, err := e.agentFacts(projectID, agentID)
	if err != nil {
		return answers.Rule{}, err
	}
	if strings.TrimSpace(rule) == "" {
		return answers.Rule{}, newErr(ErrValidation, "always allow needs a rule, e.g. Bash(npm test:*)")
	}
	parsed, err := permrules.Parse(rule)
	if err != nil {
		return answers.Rule{}, newErr(ErrValidation, "%v", err)
	}
	if parsed.Tool == permrules.AskUserQuestion {
		return answers.Rule{}, newErr(ErrValidation, "rule %s: the agent's questions are never answered by a rule", rule)
	}
	if x.rec.Sandbox != nil {
		if err := permrules.Widens(parsed, *x.rec.Sandbox, e.rulesContext(x)); err != nil {
			return answers.Rule{}, newErr(ErrPermissionDenied, "rule %s for sandboxed agent '%s': %v", parsed.String(), agentID, err)
		}
	}
	b, err := e.book(projectID)
	if err != nil {
		return answers.Rule{}, err
	}
	kept := answers.Rule{Rule: parsed.String(), Scope: scope, AgentID: agentID, AddedAt: e.clock.Now().UTC()}
	if scope == answers.ScopeProject {
		kept.AgentID = ""
	}
	added, err := b.Add(kept, x.created)
	if err != nil {
		return answers.Rule{}, err
	}
	if added {
		e.appendEvent(projectID, store.Event{Time: kept.AddedAt, Event: "rule-added", AgentID: agentID, Reason: kept.Rule,
			Data: map[string]any{"rule": kept.Rule, "scope": scope}})
	}
	return kept, nil
}

// RemoveRule forgets a kept rule (scope as for AddRule).
func (e *Engine) RemoveRule(ctx context.Context, projectID, agentID, scope, rule string) error {
	if scope == "" {
		scope = answers.ScopeAgent
	}
	if scope != answers.ScopeAgent && scope != answers.ScopeProject {
		return newErr(ErrValidation, "scope %q: want agent or project", scope)
	}
	if c := hook.CallerOf(ctx); c != nil && scope == answers.ScopeProject {
		return newErr(ErrPermissionDenied, "agent '%s' cannot remove a rule of the whole project: only the user can", c.AgentID)
	}
	x, err := e.agentFacts(projectID, agentID)
	if err != nil {
		return err
	}
	b, err := e.book(projectID)
	if err != nil {
		return err
	}
	if parsed, err := permrules.Parse(rule); err == nil {
		rule = parsed.String()
	}
	ok, err := b.Remove(scope, agentID, x.created, rule)
	if err != nil {
		return err
	}
	if !ok {
		return newErr(ErrNotFound, "no rule %s kept for %s", rule, scopeWords(scope, agentID))
	}
	e.appendEvent(projectID, store.Event{Time: e.clock.Now().UTC(), Event: "rule-removed", AgentID: agentID, Reason: rule,
		Data: map[string]any{"rule": rule, "scope": scope}})
	return nil
}

func scopeWords(scope, agentID string) string {
	if scope == answers.ScopeProject {
		return "the project"
	}
	return "agent '" + agentID + "'"
}

// SetAnswerPolicy sets what happens to the agent's question nobody
// answers: denied after minutes (0: it waits, the default).
func (e *Engine) SetAnswerPolicy(ctx context.Context, projectID, agentID string, minutes int) (*Rules, error) {
	x, err := e.agentFacts(projectID, agentID)
	if err != nil {
		return nil, err
	}
	b, err := e.book(projectID)
	if err != nil {
		return nil, err
	}
	if err := b.SetDenyAfter(agentID, x.created, minutes); err != nil {
		return nil, newErr(ErrValidation, "%v", err)
	}
	return e.AgentRules(projectID, agentID)
}
