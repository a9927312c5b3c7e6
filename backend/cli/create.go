package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"shepherd/backend/api"
	"shepherd/backend/presets"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// profiles are the ways an agent's log can be read (--profile).
var profiles = []string{store.ProfileGeneric, store.ProfileClaudeJSON, store.ProfileCodexJSON}

// onStales are what a silent agent can get (--on-stale).
var onStales = []string{store.OnStaleFlag, store.OnStaleRestart, store.OnStaleResume}

func (e *env) createCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "create P A [flags] -- CMD [ARGS…]  |  P A --preset claude|codex [--prompt TEXT] [--model M] [-- OPTIONS…]",
		Short: "create an agent (not started)",
		Args:  positional(2, 2),
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) >= 2 {
				return nil, cobra.ShellCompDirectiveDefault // the agent's command line
			}
			return e.completes(projectArg)(c, args, toComplete) // A is a new id
		},
		// The agent's command line follows P A (after --, or not).
		Annotations: map[string]string{restKey: "2"},
	}
	fs := c.Flags()
	var (
		envs       []string
		resumeArg  []string
		resumeArgs string
		timeout    nonNegInt
		grace      nonNegInt
		staleCheck optBool
	)
	cwd := fs.String("cwd", "", "working folder (default: the project folder)")
	name := fs.String("name", "", "display name")
	profile := fs.String("profile", "", "how to read the agent's log: generic, claude-stream-json or codex-json")
	preset := fs.String("preset", "", "an agent CLI Shepherd knows ("+strings.Join(presets.Names(), ", ")+"): its command, profile and resume arguments")
	prompt := fs.String("prompt", "", "with --preset: what to ask the agent")
	model := fs.String("model", "", "with --preset: the model to use")
	keepAlive := fs.Bool("keep-alive", false, "restart it with backoff when it dies")
	autoStart := fs.Bool("auto-start", false, "start it when its project is loaded")
	fs.StringArrayVar(&envs, "env", nil, "environment variable K=V (repeatable)")
	fs.Var(&timeout, "timeout", "stop it after SEC seconds (0: never)")
	fs.Var(&grace, "grace", "seconds between SIGTERM and SIGKILL when stopping (default 10)")
	fs.StringArrayVar(&resumeArg, "resume-arg", nil, "one argument of the resume command line, may hold {sessionId} and {prompt} (repeatable)")
	fs.StringVar(&resumeArgs, "resume-args", "", "the resume arguments as one shell-quoted string")
	fs.Var(&staleCheck, "stale-check", "check it for silence: silent past the project's threshold with no CPU use (default: on)")
	onStale := fs.String("on-stale", "", "what a silent agent gets: flag (Needs you, left running), restart, or resume (default: resume for Claude and Codex, flag for any other command)")
	perms := fs.String("permissions", "", "run it sandboxed with these grants, comma-separated: @network, @write:/abs/folder (implies --sandbox)")
	var maxUsd optUsd
	var maxTurns optInt
	fs.Var(&maxUsd, "max-budget-usd", "pause it when one run costs this many dollars")
	fs.Var(&maxTurns, "max-turns", "pause it when one run takes this many turns")
	sandboxed := fs.Bool("sandbox", false, "run it sandboxed: no network, no writes but its log, plus what --permissions grants")
	wt := addWorktreeFlags(c)
	c.RegisterFlagCompletionFunc("preset", fixed(presets.Names()...))
	c.RegisterFlagCompletionFunc("profile", fixed(profiles...))
	c.RegisterFlagCompletionFunc("on-stale", fixed(onStales...))
	c.RegisterFlagCompletionFunc("stale-check", fixed("true", "false"))
	c.RegisterFlagCompletionFunc("permissions", completePermissions)
	c.RegisterFlagCompletionFunc("cwd", folders)
	c.RunE = func(c *cobra.Command, args []string) error {
		pos, tail := args, []string(nil)
		if d := c.ArgsLenAtDash(); d >= 0 {
			pos, tail = args[:d], args[d:]
		}
		var pre *presets.Preset
		if *preset != "" {
			p, err := presets.Lookup(*preset)
			if err != nil {
				return usagef("--preset: %v", err)
			}
			pre = &p
		} else if len(tail) == 0 {
			return usagef("create: the command to run is missing (put it after --), or use --preset %s", strings.Join(presets.Names(), "|"))
		} else if *prompt != "" || *model != "" {
			return usagef("--prompt and --model go with --preset")
		}
		spec := supervisor.AgentSpec{
			ID:                 pos[1],
			Name:               *name,
			Profile:            *profile,
			KeepAlive:          *keepAlive,
			AutoStartOnRestore: *autoStart,
			TimeoutSec:         int(timeout),
			GraceSec:           int(grace),
			StaleCheck:         staleCheck.v,
			OnStale:            *onStale,
		}
		if maxUsd.v != nil {
			spec.MaxBudgetUsd = *maxUsd.v
		}
		if maxTurns.v != nil {
			spec.MaxTurns = *maxTurns.v
		}
		if *sandboxed || *perms != "" {
			tags := splitTags(*perms)
			spec.Permissions = &tags
		}
		if *cwd != "" {
			abs, err := filepath.Abs(*cwd)
			if err != nil {
				return err
			}
			spec.Cwd = abs
		}
		for _, kv := range envs {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return usagef("--env %q: want KEY=VALUE", kv)
			}
			if spec.Env == nil {
				spec.Env = map[string]string{}
			}
			spec.Env[k] = v
		}
		if pre != nil {
			// The preset's command line; what follows -- is extra options.
			spec.Command = pre.Command
			spec.Args, spec.ResumeArgs = pre.Args(*prompt, *model, tail)
			if spec.Profile == "" {
				spec.Profile = pre.Profile
			}
		} else {
			spec.Command, spec.Args = tail[0], tail[1:]
		}
		if resumeArgs != "" {
			if len(resumeArg) > 0 {
				return usagef("use either --resume-arg (repeated) or --resume-args, not both")
			}
			words, err := splitWords(resumeArgs)
			if err != nil {
				return usagef("--resume-args: %v", err)
			}
			spec.ResumeArgs = words
		} else if len(resumeArg) > 0 {
			spec.ResumeArgs = resumeArg
		}
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		if err := wt.apply(e, id, &spec, pre != nil); err != nil {
			return err
		}
		out, human, err := fetch(e, api.CreateAgent, api.CreateAgentIn{Project: id, Body: spec})
		if !human {
			return err
		}
		r := out.Body
		fmt.Fprintf(e.stdout, "Created agent %s in project %s; not started yet (shepherd start %s %s).\n", r.ID,
			e.projectNames().of(r.ProjectID), e.projectNames().of(r.ProjectID), r.ID)
		printWorktreeMade(e.stdout, r)
		return nil
	}
	return c
}

// splitTags splits a comma-separated list of permission tags.
func splitTags(s string) []string {
	tags := []string{}
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return tags
}

// specOf is the spec that re-creates r's user-set fields, for an edit that
// changes one of them.
func specOf(r *store.Record) supervisor.AgentSpec {
	s := supervisor.AgentSpec{ID: r.ID, Name: r.Name, Command: r.Command, Args: r.Args, Env: r.Env, Cwd: r.Cwd,
		Profile: r.Profile, ResumeArgs: r.ResumeArgs, CompletionPattern: r.CompletionPattern, ErrorPattern: r.ErrorPattern,
		KeepAlive: r.KeepAlive, AutoStartOnRestore: r.AutoStartOnRestore, TimeoutSec: r.TimeoutSec, GraceSec: r.GraceSec,
		StaleCheck: r.StaleCheck, OnStale: r.OnStale, Parent: r.Parent, StopWithParent: r.StopWithParent}
	s.MaxBudgetUsd, s.MaxTurns = r.MaxBudgetUsd, r.MaxTurns
	if r.Sandbox != nil {
		p := append([]string{}, r.Sandbox.Permissions...)
		s.Permissions = &p
	}
	return s
}
