package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"shepherd/backend/api"
)

// The engine itself: is it there (status), quit it, run one (serve).

func (e *env) statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "status",
		Short:             "check that the engine answers",
		Args:              positional(0, 0),
		ValidArgsFunction: e.completes(),
		RunE:              e.runs(cmdStatus),
	}
}

func cmdStatus(e *env, _ []string) error {
	out, human, err := fetch(e, api.GetEngine, api.NoInput{})
	if !human {
		return err
	}
	st := out.Body
	fmt.Fprintf(e.stdout, "Engine running at %s (pid %d, version %s)\n", e.client.BaseURL, st.PID, st.Version)
	if st.Sandbox != nil {
		verdict := "every grant can be enforced"
		if !st.Sandbox.Full() {
			verdict = "sandboxed agents that need what is missing will not start"
		}
		fmt.Fprintf(e.stdout, "Sandbox: %s (%s)\n", st.Sandbox.Summary(), verdict)
	}
	return nil
}

func (e *env) quitCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "quit",
		Short:             "ask the running engine (window or serve) to quit; agents keep running unless the stop-on-quit preference is on",
		Args:              positional(0, 0),
		ValidArgsFunction: e.completes(),
		RunE:              e.runs(cmdQuit),
	}
}

// cmdQuit asks the engine to quit and waits until it has.
func cmdQuit(e *env, _ []string) error {
	c, err := e.connect()
	if err != nil {
		return err
	}
	out, _, err := call(e, api.QuitEngine, api.NoInput{})
	if err != nil {
		return err
	}
	ans := out.Body
	for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); {
		st, err := api.Call(e.ctx, c, api.GetEngine, api.NoInput{})
		if errors.Is(err, api.ErrUnreachable) {
			if !e.json {
				fmt.Fprintf(e.stdout, "Shepherd (pid %d) has quit.\n", ans.PID)
			}
			return nil
		}
		if err == nil && st.Body.PID != ans.PID {
			// Another engine answers: a host's, which the local engine
			// starts again as soon as it is gone (its agents are then
			// supervised again).
			if !e.json {
				fmt.Fprintf(e.stdout, "Shepherd (pid %d) has quit; the engine answering now is pid %d", ans.PID, st.Body.PID)
				if e.host != "" {
					fmt.Fprintf(e.stdout, ", which this computer's engine started again on %s to keep its agents supervised (remove the host to stop that)", e.host)
				}
				fmt.Fprintln(e.stdout, ".")
			}
			return nil
		}
		select {
		case <-e.ctx.Done():
			return e.ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("the engine (pid %d) was asked to quit but still answers after 45 s", ans.PID)
}

func (e *env) serveCmd() *cobra.Command {
	c := &cobra.Command{
		Use:               "serve [--listen ADDR | --socket]",
		Short:             "run the engine without a window, until Ctrl-C",
		Args:              positional(0, 0),
		ValidArgsFunction: e.completes(),
	}
	listen := c.Flags().String("listen", api.DefaultListen, "loopback address to listen on (port 0: a free one)")
	socket := c.Flags().Bool("socket", false, "listen only on a Unix socket (0600) in the runtime folder, never on TCP (a host's engine, reached over SSH)")
	c.RunE = func(c *cobra.Command, _ []string) error {
		if *socket {
			// --listen's default is not a choice; a --listen given is.
			addr := ""
			if c.Flags().Changed("listen") {
				addr = *listen
			}
			return Serve(e.ctx, ServeOptions{Listen: addr, Socket: true, Console: e.stderr})
		}
		return Serve(e.ctx, ServeOptions{Listen: *listen, Console: e.stderr})
	}
	return c
}
