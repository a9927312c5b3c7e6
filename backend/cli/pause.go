package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"shepherd/backend/api"
)

// Pausing a project (nothing of it starts, its agents paused) or one agent,
// and unpausing.

func (e *env) pauseCmd() *cobra.Command {
	c := &cobra.Command{
		Use:               "pause P [A] [--now] [--note TEXT]",
		Short:             "pause a project (nothing of it starts; its agents are paused) or one agent, letting a tool call in flight finish unless --now",
		Args:              positional(1, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
	}
	now := c.Flags().Bool("now", false, "do not wait for a tool call in flight to finish")
	note := c.Flags().String("note", "", "why (shown with the pause)")
	c.RunE = func(_ *cobra.Command, pos []string) error {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		in := &api.PauseInput{Note: *note, Now: *now}
		if len(pos) == 2 {
			out, human, err := fetch(e, api.PauseAgent, api.PauseAgentIn{Project: id, Agent: pos[1], Body: in})
			if !human {
				return err
			}
			fmt.Fprintf(e.stdout, "Paused %s (session %s kept).\n", out.Body.ID, dash(out.Body.SessionID))
			return nil
		}
		out, human, err := fetch(e, api.PauseProject, api.PauseProjectIn{Project: id, Body: in})
		if !human {
			return err
		}
		res := out.Body
		failed := 0
		for _, r := range res {
			if r.Error != "" {
				failed++
				fmt.Fprintf(e.stderr, "%s: %s\n", r.AgentID, r.Error)
			}
		}
		fmt.Fprintf(e.stdout, "Project paused; %d agent(s) paused. Nothing of it starts until: shepherd unpause %s\n", len(res)-failed, pos[0])
		if failed > 0 {
			return fmt.Errorf("%d agent(s) could not be paused", failed)
		}
		return nil
	}
	return c
}

func (e *env) unpauseCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "unpause P [A]",
		Short:             "resume a paused project (its paused agents go through the queue) or one paused agent",
		Args:              positional(1, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
		RunE:              e.runs(cmdUnpause),
	}
}

func cmdUnpause(e *env, pos []string) error {
	id, err := e.resolveProject(pos[0])
	if err != nil {
		return err
	}
	if len(pos) == 2 {
		out, human, err := fetch(e, api.UnpauseAgent, api.AgentIn{Project: id, Agent: pos[1]})
		if !human {
			return err
		}
		fmt.Fprintf(e.stdout, "Resumed %s (%s).\n", out.Body.ID, statusText(out.Body))
		return nil
	}
	out, human, err := fetch(e, api.UnpauseProject, api.ProjectIn{Project: id})
	if !human {
		return err
	}
	v := out.Body
	fmt.Fprintf(e.stdout, "Project resumed: %s running, %d queued.\n", liveText(v), v.Queued)
	return nil
}
