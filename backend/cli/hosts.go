package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"shepherd/backend/api"
)

// Hosts: other machines' engines reached over SSH — list, add, remove.
// Every other verb reaches a host's engine with --host NAME (env.connect).

func (e *env) hostsCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "hosts",
		Short:             "list the hosts (other machines' engines over SSH) and their state",
		Args:              positional(0, 0),
		ValidArgsFunction: e.completes(),
		RunE:              e.runs(cmdHosts),
	}
}

func (e *env) hostCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "host add|rm …",
		Short: "add or remove a host: another machine's engine, reached over SSH",
		Args:  positional(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			return &usageError{msg: "host: say add or rm", usage: true}
		},
	}
	add := &cobra.Command{
		Use:   "add NAME ssh://user@host[:port] [--accept-key SHA256:…]",
		Short: "add a host: check its key, install and start its engine, keep one connection to it",
		Args:  positional(2, 2),
	}
	accept := add.Flags().String("accept-key", "", "accept the host's key if it has this fingerprint (SHA256:…) and known_hosts does not know it")
	add.RunE = func(_ *cobra.Command, pos []string) error { return cmdHostAdd(e, pos[0], pos[1], *accept) }
	rm := &cobra.Command{
		Use:               "rm NAME",
		Short:             "forget a host (its engine and agents keep running there)",
		Args:              positional(1, 1),
		ValidArgsFunction: e.completes(hostArg),
		RunE:              e.runs(cmdHostRm),
	}
	c.AddCommand(add, rm)
	return c
}

// hostsOnly refuses --host on the verbs about the hosts themselves.
func (e *env) hostsOnly() error {
	if e.host != "" {
		return usagef("--host does not apply to the hosts' own verbs (hosts, host add, host rm)")
	}
	return nil
}

func cmdHosts(e *env, _ []string) error {
	if err := e.hostsOnly(); err != nil {
		return err
	}
	out, human, err := fetch(e, api.ListHosts, api.NoInput{})
	if !human {
		return err
	}
	if len(out.Body) == 0 {
		fmt.Fprintln(e.stdout, "No hosts yet. Add one with: shepherd host add NAME ssh://user@host")
		return nil
	}
	tw := e.table()
	fmt.Fprintln(tw, "NAME\tADDRESS\tSTATE\tAGENTS\tRUNNING\tNEEDS YOU")
	for _, h := range out.Body {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\n", h.Name, h.URL, hostStateText(h), h.Agents, h.Running, h.NeedsYou)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, h := range out.Body {
		printWhileAway(e, h)
	}
	return nil
}

// hostStateText is a host's state in words: "connected", "unreachable
// since 14:02", "needs a newer engine".
func hostStateText(h api.HostView) string {
	switch h.State {
	case api.HostUnreachable:
		return "unreachable since " + h.Since.Local().Format("15:04")
	case api.HostRefused:
		return "refused since " + h.Since.Local().Format("15:04") + ": " + h.Error
	case api.HostNeedsNewerEngine:
		return "needs a newer engine"
	}
	return h.State
}

// printWhileAway tells what happened on a host while it was away.
func printWhileAway(e *env, h api.HostView) {
	w := h.WhileAway
	if w == nil {
		return
	}
	fmt.Fprintf(e.stdout, "\nWhile %s was away (%s to %s):\n", h.Name, w.Lost.Local().Format("15:04:05"), w.Back.Local().Format("15:04:05"))
	if w.EngineRestarted {
		fmt.Fprintln(e.stdout, "  its engine had ended and was started again; its own recovery took its agents back")
		if w.Recovery != nil {
			for _, p := range w.Recovery.Projects {
				for _, a := range p.Agents {
					fmt.Fprintf(e.stdout, "    %s/%s: %s (%s)\n", p.ProjectID, a.AgentID, a.Outcome, a.Status)
				}
			}
		}
	}
	for _, a := range w.Agents {
		var what []string
		switch {
		case a.From == "":
			what = append(what, "created")
		case a.To == "":
			what = append(what, "removed")
		}
		if a.Ended == 1 {
			what = append(what, "ended")
		} else if a.Ended > 1 {
			what = append(what, fmt.Sprintf("ended %d times", a.Ended))
		}
		if a.To != "" && a.From != a.To {
			what = append(what, fmt.Sprintf("%s → %s", orDash(a.From), a.To))
		} else if a.To != "" {
			what = append(what, a.To)
		}
		if a.ExitCode != nil && a.Ended > 0 {
			what = append(what, fmt.Sprintf("exit code %d", *a.ExitCode))
		}
		if a.Attention != "" {
			what = append(what, "needs you: "+a.Attention)
		}
		fmt.Fprintf(e.stdout, "  %s/%s: %s\n", a.ProjectID, a.AgentID, strings.Join(what, ", "))
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

var fingerprintRE = regexp.MustCompile(`SHA256:[A-Za-z0-9+/]+`)

func cmdHostAdd(e *env, name, url, accept string) error {
	if err := e.hostsOnly(); err != nil {
		return err
	}
	if accept != "" && !fingerprintRE.MatchString(accept) {
		return usagef("--accept-key %q: a fingerprint as ssh-keygen -l prints it, SHA256:…", accept)
	}
	fmt.Fprintf(e.stderr, "Connecting to %s and readying its engine…\n", url)
	in := api.AddHostIn{Body: api.AddHostInput{Name: name, URL: url, AcceptKey: accept}}
	out, raw, err := call(e, api.AddHost, in)
	var ae *api.Error
	if errors.As(err, &ae) && ae.Name == "HostKeyUnknown" && accept == "" {
		fp := fingerprintRE.FindString(ae.Message)
		if fp == "" || !term.IsTerminal(int(os.Stdin.Fd())) {
			return err
		}
		fmt.Fprintf(e.stderr, "%s\nAccept the key %s? [y/N] ", ae.Message, fp)
		line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		if ans := strings.TrimSpace(line); !strings.EqualFold(ans, "y") && !strings.EqualFold(ans, "yes") {
			return errors.New("not added: the host key was not accepted")
		}
		in.Body.AcceptKey = fp
		out, raw, err = call(e, api.AddHost, in)
	}
	if err != nil {
		return err
	}
	if e.json {
		e.printRaw(raw)
		return nil
	}
	h := out.Body
	fmt.Fprintf(e.stdout, "Added host %s (%s): %s, engine %s (pid %d), %d agents\n", h.Name, h.URL, hostStateText(h), h.Version, h.PID, h.Agents)
	return nil
}

func cmdHostRm(e *env, pos []string) error {
	if err := e.hostsOnly(); err != nil {
		return err
	}
	_, human, err := fetch(e, api.RemoveHost, api.HostIn{Host: pos[0]})
	if !human {
		return err
	}
	fmt.Fprintf(e.stdout, "Removed host %s (its engine and agents keep running there)\n", pos[0])
	return nil
}

// hostArg completes a host's name (with its state), asking this computer's
// engine whatever --host says.
func hostArg(e *env, _ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	q, cancel := e.asking()
	defer cancel()
	q.host, q.client = "", nil
	out, _, err := call(q, api.ListHosts, api.NoInput{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var comps []cobra.Completion
	for _, h := range out.Body {
		if strings.HasPrefix(h.Name, toComplete) {
			comps = append(comps, cobra.CompletionWithDesc(h.Name, describe(hostStateText(h)+" · "+h.URL)))
		}
	}
	return comps, cobra.ShellCompDirectiveNoFileComp
}
