package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"shepherd/backend/answers"
	"shepherd/backend/api"
	"shepherd/backend/supervisor"
)

// Answers (SPEC "Answers"): allow, deny or answer what an agent's
// permission tool asks, and the always-allow rules kept for it.

func (e *env) questionsCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "questions P A",
		Short:             "what an agent asks and waits for (permissions, choices), the one it waits on first",
		Args:              positional(2, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
		RunE: func(_ *cobra.Command, pos []string) error {
			id, err := e.resolveProject(pos[0])
			if err != nil {
				return err
			}
			out, human, err := fetch(e, api.ListQuestions, api.AgentIn{Project: id, Agent: pos[1]})
			if !human {
				return err
			}
			if len(out.Body) == 0 {
				fmt.Fprintf(e.stdout, "%s asks nothing.\n", pos[1])
				return nil
			}
			for _, q := range out.Body {
				fmt.Fprintf(e.stdout, "%s  %s  asked %s\n", q.ID, questionWords(q), timeText(&q.AskedAt))
				for _, qq := range q.Questions {
					fmt.Fprintf(e.stdout, "    %s\n", qq.Question)
					for _, o := range qq.Options {
						fmt.Fprintf(e.stdout, "      - %s", o.Label)
						if o.Description != "" {
							fmt.Fprintf(e.stdout, ": %s", o.Description)
						}
						fmt.Fprintln(e.stdout)
					}
				}
				if len(q.Suggestions) > 0 {
					fmt.Fprintf(e.stdout, "    always allow: %s\n", strings.Join(q.Suggestions, "  "))
				}
			}
			return nil
		},
	}
}

func questionWords(q answers.Asked) string {
	if q.Questions != nil {
		return "your choice"
	}
	return "permission for " + q.Summary
}

func (e *env) answerQuestion(pos []string, in supervisor.Answer) error {
	id, err := e.resolveProject(pos[0])
	if err != nil {
		return err
	}
	out, human, err := fetch(e, api.AnswerQuestion, api.AnswerIn{Project: id, Agent: pos[1], Body: in})
	if !human {
		return err
	}
	a := out.Body
	switch {
	case a.Rule != nil:
		fmt.Fprintf(e.stdout, "Allowed %s %s, and always from now on: %s (kept for %s).\n", pos[1], a.Question.Summary, a.Rule.Rule, ruleScopeWords(a.Rule.Scope, pos[1]))
	case in.Action == supervisor.AnswerChoose:
		fmt.Fprintf(e.stdout, "Answered %s.\n", pos[1])
	case a.Behavior == "allow":
		fmt.Fprintf(e.stdout, "Allowed %s once: %s.\n", pos[1], a.Question.Summary)
	default:
		fmt.Fprintf(e.stdout, "Denied %s: %s.\n", pos[1], a.Question.Summary)
	}
	if a.Pending > 0 {
		fmt.Fprintf(e.stdout, "%s asks %d more (shepherd questions %s %s).\n", pos[1], a.Pending, pos[0], pos[1])
	}
	return nil
}

func ruleScopeWords(scope, agent string) string {
	if scope == answers.ScopeProject {
		return "every agent of the project"
	}
	return agent
}

func (e *env) allowCmd() *cobra.Command {
	c := &cobra.Command{
		Use:               "allow P A [--always RULE [--project]] [--question ID]",
		Short:             "allow what an agent asks permission for: once, or always (a rule in Claude Code's syntax, e.g. 'Bash(npm test:*)')",
		Args:              positional(2, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
	}
	always := c.Flags().String("always", "", "keep this rule: allow such calls from now on without asking")
	project := c.Flags().Bool("project", false, "with --always: keep the rule for every agent of the project")
	qid := c.Flags().String("question", "", "the question answered (default: the one the agent waits on)")
	c.RunE = func(_ *cobra.Command, pos []string) error {
		in := supervisor.Answer{QuestionID: *qid, Action: supervisor.AnswerAllow}
		if c.Flags().Changed("always") {
			in.Action, in.Rule = supervisor.AnswerAlways, *always
			if *project {
				in.Scope = answers.ScopeProject
			}
		} else if *project {
			return &usageError{msg: "--project goes with --always RULE"}
		}
		return e.answerQuestion(pos, in)
	}
	return c
}

func (e *env) denyCmd() *cobra.Command {
	c := &cobra.Command{
		Use:               "deny P A [-m TEXT] [--question ID]",
		Short:             "deny what an agent asks (permission or choice); it reads the message and goes on",
		Args:              positional(2, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
	}
	msg := c.Flags().StringP("message", "m", "", "what the agent is told")
	qid := c.Flags().String("question", "", "the question answered (default: the one the agent waits on)")
	c.RunE = func(_ *cobra.Command, pos []string) error {
		return e.answerQuestion(pos, supervisor.Answer{QuestionID: *qid, Action: supervisor.AnswerDeny, Message: *msg})
	}
	return c
}

func (e *env) answerCmd() *cobra.Command {
	c := &cobra.Command{
		Use:               "answer P A CHOICE… [--free] [--question ID]",
		Short:             "answer an agent's questions (AskUserQuestion): one choice per question, in order ('a, b' where it takes several)",
		Args:              positional(3, -1),
		ValidArgsFunction: e.completes(projectArg, agentArg),
	}
	free := c.Flags().Bool("free", false, "the answers are free text, not options' labels")
	qid := c.Flags().String("question", "", "the question answered (default: the one the agent waits on)")
	c.RunE = func(_ *cobra.Command, pos []string) error {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		qs, _, err := call(e, api.ListQuestions, api.AgentIn{Project: id, Agent: pos[1]})
		if err != nil {
			return err
		}
		var q *answers.Asked
		for i := range qs.Body {
			if *qid == "" || qs.Body[i].ID == *qid {
				q = &qs.Body[i]
				break
			}
		}
		if q == nil || q.Questions == nil {
			return fmt.Errorf("%s asks no question to choose from (shepherd questions %s %s)", pos[1], pos[0], pos[1])
		}
		choices := pos[2:]
		if len(choices) != len(q.Questions) {
			return &usageError{msg: fmt.Sprintf("%s asks %d question(s): give one answer each, in order (%d given)", pos[1], len(q.Questions), len(choices))}
		}
		in := supervisor.Answer{QuestionID: q.ID, Action: supervisor.AnswerChoose, Free: *free, Answers: map[string]string{}}
		for i, qq := range q.Questions {
			in.Answers[qq.Question] = choices[i]
		}
		return e.answerQuestion(pos[:2], in)
	}
	return c
}

func (e *env) rulesCmd() *cobra.Command {
	c := &cobra.Command{
		Use:               "rules P [A] [--add RULE | --rm RULE] [--project] [--deny-after MIN]",
		Short:             "the always-allow rules of a project or an agent; add or remove one; an agent's policy for questions nobody answers",
		Args:              positional(1, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
	}
	add := c.Flags().String("add", "", "keep this rule (Claude Code's syntax)")
	rm := c.Flags().String("rm", "", "forget this rule")
	project := c.Flags().Bool("project", false, "with --add or --rm: the project's rule, not the agent's")
	var denyAfter optInt
	c.Flags().Var(&denyAfter, "deny-after", "deny a question nobody answers after MIN minutes (0: wait for the answer)")
	c.RunE = func(_ *cobra.Command, pos []string) error {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		if len(pos) == 1 {
			if *add != "" || *rm != "" || denyAfter.v != nil {
				return &usageError{msg: "name the agent: rules are added, removed and set through one of its agents (shepherd rules P A --add RULE --project)"}
			}
			out, human, err := fetch(e, api.ListProjectRules, api.ProjectIn{Project: id})
			if !human {
				return err
			}
			printRules(e, "project", out.Body)
			return nil
		}
		in := api.AgentIn{Project: id, Agent: pos[1]}
		scope := answers.ScopeAgent
		if *project {
			scope = answers.ScopeProject
		}
		switch {
		case *add != "" && *rm != "":
			return &usageError{msg: "--add or --rm, not both"}
		case *add != "":
			out, human, err := fetch(e, api.AddRule, api.RuleIn{Project: id, Agent: pos[1], Body: api.RuleInput{Rule: *add, Scope: scope}})
			if !human {
				return err
			}
			fmt.Fprintf(e.stdout, "Kept %s for %s.\n", out.Body.Rule, ruleScopeWords(out.Body.Scope, pos[1]))
			return nil
		case *rm != "":
			_, human, err := fetch(e, api.RemoveRule, api.RuleIn{Project: id, Agent: pos[1], Body: api.RuleInput{Rule: *rm, Scope: scope}})
			if !human {
				return err
			}
			fmt.Fprintf(e.stdout, "Removed %s from %s.\n", *rm, ruleScopeWords(scope, pos[1]))
			return nil
		case denyAfter.v != nil:
			out, human, err := fetch(e, api.SetAnswerPolicy, api.PolicyIn{Project: id, Agent: pos[1], Body: api.PolicyInput{DenyAfterMin: *denyAfter.v}})
			if !human {
				return err
			}
			fmt.Fprintf(e.stdout, "%s: %s.\n", pos[1], policyWords(out.Body.DenyAfterMin))
			return nil
		}
		out, human, err := fetch(e, api.ListRules, in)
		if !human {
			return err
		}
		printRules(e, "project", out.Body.Project)
		printRules(e, pos[1], out.Body.Agent)
		fmt.Fprintf(e.stdout, "Unanswered questions: %s.\n", policyWords(out.Body.DenyAfterMin))
		return nil
	}
	return c
}

func policyWords(min int) string {
	if min == 0 {
		return "wait for the answer"
	}
	return fmt.Sprintf("denied after %d min", min)
}

func printRules(e *env, whose string, rs []answers.Rule) {
	if len(rs) == 0 {
		fmt.Fprintf(e.stdout, "No rules of %s.\n", whose)
		return
	}
	fmt.Fprintf(e.stdout, "Rules of %s:\n", whose)
	for _, r := range rs {
		fmt.Fprintf(e.stdout, "  %s  (added %s)\n", r.Rule, timeText(&r.AddedAt))
	}
}

func (e *env) sendCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "send P A MSG|-",
		Short:             "send a Claude Code or Codex agent whose run ended a message: it resumes its session with it as the prompt (- reads it from stdin)",
		Args:              positional(3, 3),
		ValidArgsFunction: e.completes(projectArg, agentArg),
		RunE: func(c *cobra.Command, pos []string) error {
			id, err := e.resolveProject(pos[0])
			if err != nil {
				return err
			}
			msg := pos[2]
			if msg == "-" {
				b, err := io.ReadAll(io.LimitReader(c.InOrStdin(), supervisor.MaxMessage+1))
				if err != nil {
					return fmt.Errorf("read the message from stdin: %w", err)
				}
				msg = string(b)
			}
			out, human, err := fetch(e, api.SendMessage, api.MessageIn{Project: id, Agent: pos[1], Body: api.MessageInput{Message: msg}})
			if !human {
				return err
			}
			r := out.Body
			if r.Status == "queued" {
				fmt.Fprintf(e.stdout, "Sent to %s: it resumes session %s with your message when a slot frees (queued).\n", r.ID, dash(r.SessionID))
			} else {
				fmt.Fprintf(e.stdout, "Sent to %s: it resumes session %s with your message.\n", r.ID, dash(r.SessionID))
			}
			return nil
		},
	}
}
