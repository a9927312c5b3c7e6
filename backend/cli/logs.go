package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"shepherd/backend/api"
	"shepherd/backend/store"
)

// What agents wrote (logs) and what happened to them (events): the history,
// or followed live.

func (e *env) logsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:               "logs P A [-n N] [-f]",
		Short:             "print an agent's log (-f: keep printing what it writes, until Ctrl-C)",
		Args:              positional(2, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
	}
	var n nonNegInt
	c.Flags().VarP(&n, "n", "n", "print only the last N lines (0: the engine's default, the last 1000)")
	follow := c.Flags().BoolP("follow", "f", false, "keep printing new output until Ctrl-C")
	c.Flags().SetNormalizeFunc(followAlias)
	c.RunE = func(_ *cobra.Command, pos []string) error {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		out, _, err := call(e, api.GetLog, api.LogIn{Project: id, Agent: pos[1], Tail: int(n)})
		if err != nil {
			return err
		}
		if _, err := e.stdout.Write(out.Body); err != nil {
			return err
		}
		if !*follow {
			return nil
		}
		return e.followLog(id, pos[1], out.Offset)
	}
	return c
}

// followAlias keeps --f, which the CLI always took, as --follow.
func followAlias(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if name == "f" {
		name = "follow"
	}
	return pflag.NormalizedName(name)
}

// followPoll is how often `logs -f` asks for new output.
var followPoll = 250 * time.Millisecond

// followLog polls the log from offset on until the context ends (Ctrl-C),
// which is a normal end.
func (e *env) followLog(project, agent string, off int64) error {
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return nil
		case <-t.C:
		}
		more, _, err := call(e, api.GetLog, api.LogIn{Project: project, Agent: agent, Since: api.Some(off)})
		if err != nil {
			if e.ctx.Err() != nil {
				return nil
			}
			return err
		}
		if len(more.Body) > 0 {
			if _, err := e.stdout.Write(more.Body); err != nil {
				return err
			}
		}
		off = more.Offset
	}
}

func (e *env) eventsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:               "events [P] [-f]",
		Short:             "print a project's event history (-f: the live events of the engine, or of P, until Ctrl-C)",
		Args:              positional(0, 1),
		ValidArgsFunction: e.completes(projectArg),
	}
	follow := c.Flags().BoolP("follow", "f", false, "print the engine's live events as they happen, until Ctrl-C")
	c.Flags().SetNormalizeFunc(followAlias)
	c.RunE = func(_ *cobra.Command, pos []string) error {
		if *follow {
			return e.streamEvents(pos)
		}
		if len(pos) == 0 {
			return usagef("events needs a project (or -f for the live events)")
		}
		return cmdEvents(e, pos)
	}
	return c
}

// streamEvents prints the live events (of one project, with pos) until
// Ctrl-C; with --json, one JSON object a line.
func (e *env) streamEvents(pos []string) error {
	var in api.StreamIn
	if len(pos) == 1 {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		in.Project = id
	}
	c, err := e.connect()
	if err != nil {
		return err
	}
	names := e.projectNames()
	err = c.Stream(e.ctx, in, func(ev api.StreamEvent) error {
		if ev.Name == "hello" {
			fmt.Fprintln(e.stderr, "Following the engine's events (Ctrl-C to stop)…")
			return nil
		}
		if e.json {
			b, _ := json.Marshal(map[string]any{"id": ev.ID, "event": ev.Name, "data": json.RawMessage(ev.Data)})
			_, err := fmt.Fprintf(e.stdout, "%s\n", b)
			return err
		}
		_, err := fmt.Fprintln(e.stdout, describeEvent(ev, func(id string) string {
			if _, ok := names[id]; !ok && id != "" {
				names = e.projectNames() // a project added since
			}
			return names.of(id)
		}))
		return err
	})
	if e.ctx.Err() != nil {
		return nil // Ctrl-C: a normal end
	}
	if errors.Is(err, api.ErrUnreachable) {
		return fmt.Errorf("the engine went away: %w", err)
	}
	return err
}

// describeEvent is one line a person reads: the time, the event and what it
// says.
func describeEvent(ev api.StreamEvent, project func(id string) string) string {
	now := time.Now().Format("15:04:05")
	var d struct {
		ProjectID string   `json:"projectId"`
		ID        string   `json:"id"`
		AgentID   string   `json:"agentId"`
		Status    string   `json:"status"`
		Reason    string   `json:"exitReason"`
		Title     string   `json:"title"`
		Message   string   `json:"message"`
		Total     int      `json:"total"`
		Lines     []string `json:"lines"`
	}
	_ = json.Unmarshal(ev.Data, &d)
	p := project(d.ProjectID) // by its name
	switch ev.Name {
	case "agent:state":
		s := fmt.Sprintf("%s  %-14s %s/%s  %s", now, ev.Name, p, d.ID, d.Status)
		if d.Reason != "" {
			s += " (" + d.Reason + ")"
		}
		return s
	case "agent:removed":
		return fmt.Sprintf("%s  %-14s %s/%s", now, ev.Name, p, d.AgentID)
	case "notify":
		return fmt.Sprintf("%s  %-14s %s/%s  %s: %s", now, ev.Name, p, d.AgentID, d.Title, d.Message)
	case "project:synced":
		return fmt.Sprintf("%s  %-14s %s  %d agents checked", now, ev.Name, p, d.Total)
	case "agent:log":
		return fmt.Sprintf("%s  %-14s %s/%s  %d lines", now, ev.Name, p, d.AgentID, len(d.Lines))
	}
	return fmt.Sprintf("%s  %-14s %s", now, ev.Name, ev.Data)
}

func cmdEvents(e *env, pos []string) error {
	id, err := e.resolveProject(pos[0])
	if err != nil {
		return err
	}
	out, _, err := call(e, api.ListEvents, api.EventsIn{Project: id})
	if err != nil {
		return err
	}
	if e.json {
		_, err := e.stdout.Write(out.Body)
		return err
	}
	lines := strings.Split(strings.TrimRight(string(out.Body), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		fmt.Fprintln(e.stdout, "No events yet.")
		return nil
	}
	tw := e.table()
	fmt.Fprintln(tw, "TIME\tEVENT\tAGENT\tFROM\tTO\tREASON\tDATA")
	for _, l := range lines {
		var ev store.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Event == "" {
			fmt.Fprintf(tw, "%s\n", l)
			continue
		}
		data := ""
		if len(ev.Data) > 0 {
			b, _ := json.Marshal(ev.Data)
			data = string(b)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ev.Time.Local().Format("2006-01-02 15:04:05.000"),
			ev.Event, dash(ev.AgentID), dash(ev.From), dash(ev.To), dash(ev.Reason), data)
	}
	return tw.Flush()
}
