package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"shepherd/backend/api"
)

// A project's monitoring settings, shown or changed by their API names.

var settingKeys = []struct{ name, doc string }{
	{"watchdogIntervalSec", "seconds between watchdog checks"},
	{"staleCheckIntervalSec", "seconds between stale checks"},
	{"staleThresholdSec", "seconds of log silence after which a running agent is stale"},
	{"busyThresholdSec", "seconds a silent agent may stay busy (a tool in flight, CPU) before it is stale (0: never)"},
	{"safePointWaitSec", "seconds a pause waits for a tool call in flight to finish"},
	{"resultGraceSec", "seconds a Claude agent may live on after its result line"},
	{"autoResumeLimit", "auto-resumes allowed before giving up"},
	{"pausedExpiryDays", "days after which a paused agent expires"},
	{"maxRunning", "agents allowed to run at once (0: no limit)"},
	{"boxMaxProcesses", "processes and threads each sandboxed agent's box may run (0: no limit)"},
	{"boxMemoryMiB", "MiB of memory each sandboxed agent's box may use (0: no limit)"},
	{"boxShmMiB", "MiB of /dev/shm (its TMPDIR) each sandboxed agent's box gets (0: the kernel's default)"},
	{"logMaxMiB", "MiB an agent's log file may reach before it is rotated (agent.log → agent.log.1); from the next start"},
	{"logKeep", "rotated log files kept per agent (agent.log.1 … .N; 0: none); from the next start"},
}

// settingUsds are the settings in dollars.
var settingUsds = []struct{ name, doc string }{
	{"dailyBudgetUsd", "dollars the project's runs may cost a day (0: no limit)"},
}

var settingBools = []struct{ name, doc string }{
	{"notifyNative", "native desktop notifications (true/false)"},
	{"notifyCompletion", "notify when an agent completes (true/false)"},
}

func (e *env) settingsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:               "settings P [--key value]…",
		Short:             "show or change a project's monitoring settings (keys as in the API: --staleThresholdSec 600 …)",
		Args:              positional(1, 1),
		ValidArgsFunction: e.completes(projectArg),
	}
	fs := c.Flags()
	ints := map[string]*optInt{}
	for _, k := range settingKeys {
		ints[k.name] = &optInt{}
		fs.Var(ints[k.name], k.name, k.doc)
	}
	usds := map[string]*optUsd{}
	for _, k := range settingUsds {
		usds[k.name] = &optUsd{}
		fs.Var(usds[k.name], k.name, k.doc)
	}
	bools := map[string]*string{}
	for _, k := range settingBools {
		bools[k.name] = fs.String(k.name, "", k.doc)
		c.RegisterFlagCompletionFunc(k.name, fixed("true", "false"))
	}
	c.RunE = func(_ *cobra.Command, pos []string) error {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		change := map[string]any{}
		for name, v := range ints {
			if v.v != nil {
				change[name] = *v.v
			}
		}
		for name, v := range usds {
			if v.v != nil {
				change[name] = *v.v
			}
		}
		for name, v := range bools {
			if *v == "" {
				continue
			}
			b, err := strconv.ParseBool(*v)
			if err != nil {
				return usagef("--%s: want true or false, not %q", name, *v)
			}
			change[name] = b
		}
		cur, raw, err := call(e, api.GetSettings, api.ProjectIn{Project: id})
		if err != nil {
			return err
		}
		if len(change) > 0 {
			// The changes over the settings as they are: the engine keeps
			// what is not given the same way.
			b, _ := json.Marshal(change)
			s := cur.Body
			if err := json.Unmarshal(b, &s); err != nil {
				return err
			}
			if _, raw, err = call(e, api.PutSettings, api.PutSettingsIn{Project: id, Body: s}); err != nil {
				return err
			}
		}
		if e.json {
			e.printRaw(raw)
			return nil
		}
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		for _, k := range settingKeys {
			fmt.Fprintf(tw, "%s\t%v\n", k.name, m[k.name])
		}
		for _, k := range settingUsds {
			fmt.Fprintf(tw, "%s\t%v\n", k.name, m[k.name])
		}
		for _, k := range settingBools {
			fmt.Fprintf(tw, "%s\t%v\n", k.name, m[k.name])
		}
		return tw.Flush()
	}
	return c
}
