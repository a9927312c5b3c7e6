package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"shepherd/backend/api"
	"shepherd/backend/notify/webhook"
)

// Notifications away from the desk: the engine's webhook channels.

func (e *env) notifyCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "notify ls|add|rm|test",
		Short: "webhook channels that get the engine's notifications away from the desk (generic JSON, ntfy, Slack-compatible)",
		Args:  positional(0, 0),
		RunE:  func(c *cobra.Command, _ []string) error { return e.listWebhooks() },
	}
	c.AddCommand(&cobra.Command{
		Use: "ls", Short: "list the channels (secrets masked) and how sending to each goes", Args: positional(0, 0),
		RunE: func(*cobra.Command, []string) error { return e.listWebhooks() },
	})
	add := &cobra.Command{
		Use:   "add NAME URL [--format json|ntfy|slack] [--kinds K,…] [--header 'K: V']…",
		Short: "add a channel (by default it carries what enters Needs you)",
		Args:  positional(2, 2),
	}
	format := add.Flags().String("format", "json", "json (generic), ntfy or slack (Slack-compatible)")
	kinds := add.Flags().String("kinds", "", "the kinds it carries, e.g. failed,waiting (default: what enters Needs you)")
	headers := add.Flags().StringArray("header", nil, "a header sent with each request, 'Name: value' (kept secret)")
	add.RunE = func(_ *cobra.Command, pos []string) error {
		ch := webhook.Channel{Name: pos[0], URL: pos[1], Format: webhook.Format(*format)}
		if *kinds != "" {
			for _, k := range strings.Split(*kinds, ",") {
				if k = strings.TrimSpace(k); k != "" {
					ch.Kinds = append(ch.Kinds, k)
				}
			}
		}
		for _, h := range *headers {
			k, v, ok := strings.Cut(h, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return &usageError{msg: fmt.Sprintf("--header %q: want 'Name: value'", h)}
			}
			if ch.Headers == nil {
				ch.Headers = map[string]string{}
			}
			ch.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		out, human, err := fetch(e, api.AddWebhook, api.AddWebhookIn{Body: ch})
		if !human {
			return err
		}
		fmt.Fprintf(e.stdout, "Added %s (%s): %s, carrying %s. Try it: shepherd notify test %s\n", out.Body.Name, out.Body.ID,
			out.Body.URL, strings.Join(out.Body.Kinds, ", "), out.Body.ID)
		return nil
	}
	c.AddCommand(add)
	c.AddCommand(&cobra.Command{
		Use: "rm ID", Short: "remove a channel", Args: positional(1, 1),
		RunE: func(_ *cobra.Command, pos []string) error {
			_, human, err := fetch(e, api.RemoveWebhook, api.WebhookIn{ID: pos[0]})
			if !human {
				return err
			}
			fmt.Fprintf(e.stdout, "Removed channel %s.\n", pos[0])
			return nil
		},
	})
	c.AddCommand(&cobra.Command{
		Use: "test [ID]", Short: "send a test notification to a channel (or every one) now, and say how it went", Args: positional(0, 1),
		RunE: func(_ *cobra.Command, pos []string) error {
			in := api.TestWebhooksIn{}
			if len(pos) == 1 {
				in.Body = &api.TestWebhooksInput{ID: pos[0]}
			}
			out, human, err := fetch(e, api.TestWebhooks, in)
			if !human {
				return err
			}
			if len(out.Body) == 0 {
				fmt.Fprintln(e.stdout, "No channels: add one with shepherd notify add NAME URL.")
				return nil
			}
			failed := 0
			for _, r := range out.Body {
				if r.OK {
					fmt.Fprintf(e.stdout, "%s (%s): sent.\n", r.Name, r.ID)
				} else {
					failed++
					fmt.Fprintf(e.stdout, "%s (%s): failed: %s\n", r.Name, r.ID, r.Error)
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d channels failed the test", failed, len(out.Body))
			}
			return nil
		},
	})
	return c
}

func (e *env) listWebhooks() error {
	out, human, err := fetch(e, api.ListWebhooks, api.NoInput{})
	if !human {
		return err
	}
	if len(out.Body) == 0 {
		fmt.Fprintln(e.stdout, "No webhook channels: add one with shepherd notify add NAME URL [--format json|ntfy|slack].")
		return nil
	}
	tw := e.table()
	fmt.Fprintln(tw, "ID\tNAME\tFORMAT\tURL\tKINDS\tSENT\tSTATE")
	for _, v := range out.Body {
		state := "ok"
		switch {
		case v.Disabled:
			state = "disabled"
		case v.Status.Failing:
			state = "failing: " + v.Status.LastError
		case v.Status.Retrying:
			state = "retrying"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", v.ID, v.Name, v.Format, v.URL, strings.Join(v.Kinds, ","), v.Status.Sent, state)
	}
	return tw.Flush()
}
