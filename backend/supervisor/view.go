package supervisor

import (
	"shepherd/backend/store"
	"shepherd/backend/supervisor/figures"
	"time"
)

// ProjectView is a project with its state: the pause and the run queue.
type ProjectView struct {
	store.Project
	Paused       bool       `json:"paused"`
	PausedAt     *time.Time `json:"pausedAt,omitempty"`
	PauseNote    string     `json:"pauseNote,omitempty"`
	PauseProblem string     `json:"pauseProblem,omitempty"`
	Live         int        `json:"live"`
	Queued       int        `json:"queued"`
	MaxRunning   int        `json:"maxRunning"`
	Loaded       bool       `json:"loaded"`
	// FolderMissing: the project's folder is gone (moved, deleted, an
	// unmounted disk). Its agents are still supervised by their records; the
	// project is flagged, never dropped.
	FolderMissing string `json:"folderMissing,omitempty"`
	// What its agents' runs cost: the user's own agents' (all their runs,
	// and today's cost, which the daily budget counts), and what agents
	// created by agents reported (claims, counted against their creators'
	// trees only).
	Totals        *store.RunFigures `json:"totals,omitempty"`
	CostToday     float64           `json:"costToday"`
	ClaimedTotals *store.RunFigures `json:"claimedTotals,omitempty"`
	// The daily budget (0: none) and whether today's cost reached it: its
	// running agents were paused and its starts wait (budget.go).
	DailyBudgetUsd float64 `json:"dailyBudgetUsd,omitempty"`
	BudgetHeld     bool    `json:"budgetHeld,omitempty"`
	// The counts the project switcher shows, of a loaded project (0 for
	// one not loaded yet): its agents, those live, and those in Needs you
	// (Record.Attention: acknowledged ones are not, waiting and
	// crash-looping ones are).
	// In lists and answers, not in project:state.
	Agents    int `json:"agents,omitempty"`
	Running   int `json:"running,omitempty"`
	Attention int `json:"attention,omitempty"`
}

func (e *Engine) view(p *project) ProjectView {
	paused, at, note, problem := p.q.Paused()
	live, queued, _ := p.q.Counts()
	p.mu.Lock()
	defer p.mu.Unlock()
	v := ProjectView{Project: p.info, Paused: paused, PauseNote: note, PauseProblem: problem,
		Live: live, Queued: queued, MaxRunning: p.settings.MaxRunning, Loaded: p.loaded}
	if paused {
		at := at
		v.PausedAt = &at
	}
	if err := checkDir(p.info.Path); err != nil {
		v.FolderMissing = err.Error()
	}
	v.CostToday = p.cost.Today(e.clock.Now())
	v.DailyBudgetUsd, v.BudgetHeld = p.settings.DailyBudgetUsd, p.daily.Held()
	return v
}

// withTotals adds the sum of its agents' figures to a project's view — the
// user's own agents' in Totals, the claims of agents created by agents in
// ClaimedTotals — and, for a loaded project, its counts of agents.
func (e *Engine) withTotals(p *project, v ProjectView) ProjectView {
	v.Totals, v.ClaimedTotals = figures.Totals(e.figureRecords(p))
	if v.Loaded {
		for _, a := range p.list() {
			a.mu.Lock()
			v.Agents++
			if a.rec.Status.Live() {
				v.Running++
			}
			if e.snapshot(a).Attention != "" {
				v.Attention++
			}
			a.mu.Unlock()
		}
	}
	return v
}

// ProjectViews lists the known projects with their state, oldest first.
func (e *Engine) ProjectViews() []ProjectView {
	var out []ProjectView
	for _, info := range e.Projects() {
		e.mu.Lock()
		p := e.projects[info.ID]
		e.mu.Unlock()
		if p != nil {
			out = append(out, e.withTotals(p, e.view(p)))
		}
	}
	return out
}

// ProjectState is one project with its state.
func (e *Engine) ProjectState(projectID string) (ProjectView, error) {
	p, err := e.project(projectID)
	if err != nil {
		return ProjectView{}, err
	}
	return e.withTotals(p, e.view(p)), nil
}
