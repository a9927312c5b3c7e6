package cli

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/cobra"

	"shepherd/backend/api"
	"shepherd/backend/money"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// optUsd is a dollar-amount flag that remembers whether it was given.
type optUsd struct{ v *float64 }

func (o *optUsd) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.FormatFloat(*o.v, 'f', -1, 64)
}

func (o *optUsd) Type() string { return "usd" }

func (o *optUsd) Set(s string) error {
	v, err := parseUsd(s)
	if err != nil {
		return err
	}
	o.v = &v
	return nil
}

// parseUsd reads a dollar amount ("5", "2.50", "$5").
func parseUsd(s string) (float64, error) {
	if len(s) > 0 && s[0] == '$' {
		s = s[1:]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errors.New("want an amount of dollars, e.g. 5 or 2.50")
	}
	if v < 0 {
		return 0, errors.New("must not be negative")
	}
	return v, nil
}

// dollars is an amount with the digits it needs: "$5.00", "$0.0002".
func dollars(v float64) string { return money.Format(v) }

// budgetText says an agent's per-run limits in plain words.
func budgetText(r *store.Record) string {
	s := "none"
	switch {
	case r.MaxBudgetUsd > 0 && r.MaxTurns > 0:
		s = fmt.Sprintf("%s and %d turns per run", dollars(r.MaxBudgetUsd), r.MaxTurns)
	case r.MaxBudgetUsd > 0:
		s = dollars(r.MaxBudgetUsd) + " per run"
	case r.MaxTurns > 0:
		s = fmt.Sprintf("%d turns per run", r.MaxTurns)
	}
	if lr := r.LastResult; lr != nil {
		s += fmt.Sprintf("; last run %d turns", lr.Turns)
		if lr.CostUSD != nil {
			s += ", " + dollars(*lr.CostUSD)
		}
	}
	return s
}

// budgetCmd: show an agent's budget, set its limits, or answer a budget
// pause.
func (e *env) budgetCmd() *cobra.Command {
	c := &cobra.Command{
		Use: "budget P A [raise N|remove|once|stop] [--usd N] [--turns N]",
		Short: "show or set an agent's budget, or answer a budget pause: raise the limit reached above what was reached, " +
			"remove it, resume once past it, or stop",
		Args:              positional(2, 4),
		ValidArgsFunction: e.completes(projectArg, agentArg, words(budgetAnswers...)),
	}
	var usd optUsd
	var turns optInt
	c.Flags().Var(&usd, "usd", "the most one run may cost, in dollars (0: no limit)")
	c.Flags().Var(&turns, "turns", "the most turns one run may take (0: no limit)")
	c.RunE = func(_ *cobra.Command, pos []string) error {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		if len(pos) > 2 {
			if usd.v != nil || turns.v != nil {
				return usagef("budget: --usd and --turns set the limits; an answer takes none")
			}
			return answerBudget(e, id, pos)
		}
		agent := api.AgentIn{Project: id, Agent: pos[1]}
		got, _, err := call(e, api.GetAgent, agent, api.Reveal(true))
		if err != nil {
			return err
		}
		cur := got.Body
		if usd.v == nil && turns.v == nil {
			if e.json {
				_, _, err := fetch(e, api.GetAgent, agent)
				return err
			}
			fmt.Fprintf(e.stdout, "Budget of %s: %s\n", cur.ID, budgetText(cur))
			if cur.BudgetPause != "" && cur.Status == "paused" {
				fmt.Fprintf(e.stdout, "Paused: %s\nAnswer: shepherd budget %s %s raise N|remove|once|stop\n", cur.PauseNote, pos[0], pos[1])
			}
			return nil
		}
		spec := specOf(cur)
		if usd.v != nil {
			spec.MaxBudgetUsd = *usd.v
		}
		if turns.v != nil {
			spec.MaxTurns = *turns.v
		}
		out, human, err := fetch(e, api.UpdateAgent, api.UpdateAgentIn{Project: id, Agent: pos[1], Body: spec})
		if !human {
			return err
		}
		r := out.Body
		fmt.Fprintf(e.stdout, "Budget of %s: %s\n", r.ID, budgetText(r))
		return nil
	}
	return c
}

// budgetAnswers are the answers to a budget pause.
var budgetAnswers = []string{supervisor.AnswerRaise, supervisor.AnswerRemove, supervisor.AnswerOnce, supervisor.AnswerStop}

// answerBudget posts raise N, remove, once or stop.
func answerBudget(e *env, id string, pos []string) error {
	in := api.BudgetInput{Action: pos[2]}
	switch in.Action {
	case supervisor.AnswerRaise:
		if len(pos) != 4 {
			return usagef("budget raise: give the new limit, above what was reached (dollars, or turns for a turns limit); `remove` removes it")
		}
		v, err := parseUsd(pos[3])
		if err != nil {
			return usagef("budget raise %s: %v", pos[3], err)
		}
		if v == 0 {
			return usagef("budget raise 0 is no raise: to run without the limit, answer remove")
		}
		in.Limit = v
	case supervisor.AnswerRemove, supervisor.AnswerOnce, supervisor.AnswerStop:
		if len(pos) != 3 {
			return usagef("budget %s takes no value", in.Action)
		}
	default:
		return usagef("budget: answer raise N, remove, once or stop, not %q", in.Action)
	}
	out, human, err := fetch(e, api.AnswerBudget, api.BudgetIn{Project: id, Agent: pos[1], Body: in})
	if !human {
		return err
	}
	r := out.Body
	switch in.Action {
	case supervisor.AnswerStop:
		fmt.Fprintf(e.stdout, "Stopped %s (%s).\n", r.ID, r.Status)
	case supervisor.AnswerOnce:
		fmt.Fprintf(e.stdout, "Resumed %s once past its budget (%s).\n", r.ID, r.Status)
	case supervisor.AnswerRemove:
		fmt.Fprintf(e.stdout, "Limit removed; %s is %s. Budget: %s\n", r.ID, r.Status, budgetText(r))
	default:
		fmt.Fprintf(e.stdout, "Raised; %s is %s. Budget: %s\n", r.ID, r.Status, budgetText(r))
	}
	return nil
}
