package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"shepherd/backend/api"
	"shepherd/backend/sandbox"
)

func (e *env) sandboxCmd() *cobra.Command {
	c := &cobra.Command{
		Use: "sandbox P A (--permissions TAGS | --off)",
		Short: "sandbox an agent that is not running (no network, no writes but its log, plus what TAGS grant: " +
			"@network,@write:/abs/folder), or --off to run it unsandboxed again",
		Args:              positional(2, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
	}
	perms := c.Flags().String("permissions", "", "the grants, comma-separated: @network, @write:/abs/folder (empty: none at all)")
	off := c.Flags().Bool("off", false, "run the agent unsandboxed again")
	c.RegisterFlagCompletionFunc("permissions", completePermissions)
	c.RunE = func(c *cobra.Command, pos []string) error {
		if c.Flags().Changed("permissions") == *off {
			return usagef("sandbox: give either --permissions TAGS (\"\" for none) or --off")
		}
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		// The record as stored, secrets unmasked: the edit sends it back whole.
		cur, _, err := call(e, api.GetAgent, api.AgentIn{Project: id, Agent: pos[1]}, api.Reveal(true))
		if err != nil {
			return err
		}
		spec := specOf(cur.Body)
		if *off {
			spec.Permissions = nil
		} else {
			tags := splitTags(*perms)
			spec.Permissions = &tags
		}
		out, human, err := fetch(e, api.UpdateAgent, api.UpdateAgentIn{Project: id, Agent: pos[1], Body: spec})
		if !human {
			return err
		}
		fmt.Fprintf(e.stdout, "Agent %s: %s\n", out.Body.ID, sandboxText(out.Body.Sandbox))
		return nil
	}
	return c
}

// sandboxText says in plain words how an agent is sandboxed.
func sandboxText(g *sandbox.Grants) string {
	if g == nil {
		return "not sandboxed"
	}
	s := "sandboxed: " + g.Describe()
	if len(g.Permissions) > 0 {
		s += " (" + strings.Join(g.Permissions, ", ") + ")"
	}
	return s
}

// agentAction calls an agent's action and prints say(record), or the raw
