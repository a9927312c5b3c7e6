package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"shepherd/backend/api"
	"shepherd/backend/mcpserver"
)

// mcpCmd is `shepherd mcp` (the MCP server on stdio) and `shepherd mcp
// install` (add it to Claude Code's configuration of the current folder).
func (e *env) mcpCmd() *cobra.Command {
	c := &cobra.Command{
		Use: "mcp [install [--print]]",
		Short: "the MCP server on stdio, for coding agents to run and watch their processes through Shepherd; " +
			"install adds it to Claude Code's .mcp.json here",
		Args:              positional(0, 1),
		ValidArgsFunction: e.completes(words("install")),
	}
	print := c.Flags().Bool("print", false, "install: print the configuration and the claude command instead of writing .mcp.json")
	c.RunE = func(_ *cobra.Command, pos []string) error {
		if len(pos) == 1 {
			if pos[0] != "install" {
				return usagef("mcp: unknown subcommand %q%s (use: shepherd mcp, or shepherd mcp install)", pos[0], didYouMean(pos[0], []string{"install"}, ""))
			}
			return e.mcpInstall(*print)
		}
		return e.serveMCP()
	}
	return c
}

func (e *env) mcpInstall(printOnly bool) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	if printOnly {
		fmt.Fprintf(e.stdout, "Add this to .mcp.json in your project:\n\n{\n  \"mcpServers\": {\n    \"shepherd\": {\"type\": \"stdio\", \"command\": %q, \"args\": [\"mcp\"]}\n  }\n}\n\nor run:\n\n  %s\n",
			exe, mcpserver.ClaudeCommand(exe))
		return nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	path, err := mcpserver.Install(dir, exe)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Added Shepherd to %s: Claude Code started in this folder can now run and watch its processes through Shepherd.\n(The same, by hand: %s)\n",
		path, mcpserver.ClaudeCommand(exe))
	return nil
}

// serveMCP runs the MCP server on stdin/stdout until the client leaves. It
// talks to the running engine. Inside an agent Shepherd started, it acts
// with that agent's credential and identity only (the engine says who it
// is: nothing the agent could change in its environment decides it), and
// never starts an engine of its own. Started by the user with no engine
// running, it starts one for the session (and says so on stderr; the
// agents it starts outlive it, as always).
func (e *env) serveMCP() error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	cfg := mcpserver.Config{Cwd: cwd, Version: Version}
	info, asAgent, derr := e.discover()
	switch {
	case asAgent && derr != nil:
		cfg.EngineErr = derr
	case asAgent:
		c := api.NewClient(info)
		who, err := api.Call(e.ctx, c, api.GetWhoami, api.NoInput{})
		if err != nil {
			cfg.EngineErr = fmt.Errorf("cannot reach Shepherd's engine at %s with this agent's credential: %w", info.URL, err)
			break
		}
		cfg.Engine = c
		cfg.Caller = mcpserver.Caller{ProjectID: who.Body.ProjectID, AgentID: who.Body.AgentID}
	case derr == nil:
		c := api.NewClient(info)
		if _, err := api.Call(e.ctx, c, api.GetEngine, api.NoInput{}); err == nil {
			cfg.Engine = c
		}
	}
	if cfg.Engine == nil && !asAgent {
		h, err := Start(e.ctx, ServeOptions{Console: e.stderr})
		if err != nil {
			cfg.EngineErr = err
			fmt.Fprintf(e.stderr, "shepherd mcp: no engine is running and none could be started: %v\n", err)
		} else {
			defer h.Close()
			cfg.Engine = api.NewClient(h.Info)
			fmt.Fprintf(e.stderr, "shepherd mcp: no engine was running; started one (pid %d) for this session — the app or `shepherd serve` can take over later\n", h.Info.PID)
		}
	}
	if cfg.EngineErr != nil && asAgent {
		fmt.Fprintf(e.stderr, "shepherd mcp: %v\n", cfg.EngineErr)
	}
	err = mcpserver.New(cfg).Run(e.ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
