package cli

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"shepherd/backend/api"
	"shepherd/backend/claudehooks"
)

// hookCmd is the command hook an engine on a Unix socket gives its Claude
// Code agents (claudehooks.HookCommand): it posts the hook's input, read
// from stdin, to the agent's engine with the agent's credential, from its
// environment (SHEPHERD_API_URL, SHEPHERD_AGENT_TOKEN). It prints nothing —
// Claude Code would read an answer in it — and always exits 0: a hook that
// cannot be told never stops the agent.
func (e *env) hookCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "hook claude",
		Short:  "post a Claude Code hook's input (stdin) to this agent's engine (used by the engine itself)",
		Hidden: true,
		Args:   positional(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if args[0] != "claude" {
				return &usageError{msg: "hook: only 'claude' hooks are known"}
			}
			info, ok := api.AgentEngineInfo()
			if !ok || info.URL == "" {
				return nil
			}
			body, err := io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
			if err != nil {
				return nil
			}
			_, _ = api.NewClient(info).Do(e.ctx, "POST", claudehooks.Path, body)
			return nil
		},
	}
}
