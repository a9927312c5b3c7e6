package cli

import (
	"strings"
	"testing"
	"unicode/utf8"

	"shepherd/backend/api"
	"shepherd/backend/paths"
	"shepherd/backend/secrets"
	"shepherd/backend/store"
)

// A mistyped verb or flag gets a suggestion, not the whole help.
func TestDidYouMean(t *testing.T) {
	r := fails(t, ExitUsage, `unknown command "strat" — did you mean "start"?`, "strat", "p", "a")
	if strings.Contains(r.stderr, "Commands:") {
		t.Fatalf("the whole help was printed:\n%s", r.stderr)
	}
	fails(t, ExitUsage, `unknown command "lst" — did you mean "ls"?`, "lst")
	fails(t, ExitUsage, `unknown flag --gracee — did you mean "--grace"?`, "stop", "p", "a", "--gracee", "3")
	fails(t, ExitUsage, `unknown flag --jsn — did you mean "--json"?`, "--jsn", "projects")
	if s := didYouMean("zzzzzz", []string{"start", "stop"}, ""); s != "" {
		t.Fatalf("a far-off word got a suggestion: %q", s)
	}
}

// Secret environment values are masked in every output, the JSON and the
// API included; --show-secrets (?reveal=true) prints them.
func TestSecretsMasked(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	var proj store.Project
	okJSON(t, &proj, "add-project", t.TempDir(), "--name", "s")
	ok(t, "create", "s", "a", "--env", "ANTHROPIC_API_KEY=sk-ant-secret", "--env", "MODEL=opus", "--", "/bin/sh", "-c", "exit 0")
	for _, args := range [][]string{{"--json", "ls", "s"}, {"--json", "get", "s", "a"}, {"get", "s", "a"}, {"--json", "ps"}} {
		out := ok(t, args...)
		if strings.Contains(out, "sk-ant-secret") || !strings.Contains(out, secrets.Masked) || !strings.Contains(out, "opus") {
			t.Fatalf("%v: secret not masked:\n%s", args, out)
		}
	}
	for _, args := range [][]string{{"--json", "--show-secrets", "get", "s", "a"}, {"get", "s", "a", "--show-secrets"}} {
		if out := ok(t, args...); !strings.Contains(out, "sk-ant-secret") {
			t.Fatalf("%v: secret not shown:\n%s", args, out)
		}
	}
	// An edit that sends the mask back keeps the secret.
	var r store.Record
	okJSON(t, &r, "get", "s", "a")
	// (the CLI has no edit verb; the API's PUT is what the window uses)
	c := clientOf(t, p)
	if _, err := c.JSON(t.Context(), "PUT", "/v1/projects/"+proj.ID+"/agents/a",
		map[string]any{"command": "/bin/sh", "args": []string{"-c", "exit 0"}, "env": r.Env}, nil); err != nil {
		t.Fatal(err)
	}
	if out := ok(t, "get", "s", "a", "--show-secrets"); !strings.Contains(out, "sk-ant-secret") {
		t.Fatalf("the masked value was saved over the secret:\n%s", out)
	}
}

// Human output says "agent", as the window does; the API keeps seed 000's
// names.
func TestAgentWords(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	ok(t, "add-project", t.TempDir(), "--name", "w")
	fails(t, ExitError, "Agent 'nope' not found", "start", "w", "nope")
	c := clientOf(t, p)
	_, err := c.Do(t.Context(), "POST", "/v1/projects/"+resolve(t, "w")+"/agents/nope/start", nil)
	if err == nil || !strings.Contains(err.Error(), "Process 'nope' not found") {
		t.Fatalf("the API's own message: %v", err)
	}
}

// clientOf is an API client of the engine the test serves.
func clientOf(t *testing.T, p paths.Paths) *api.Client {
	t.Helper()
	info, err := api.ReadEngineInfo(p.EngineFile())
	if err != nil {
		t.Fatal(err)
	}
	return api.NewClient(info)
}

// resolve is a project's id by its name.
func resolve(t *testing.T, name string) string {
	t.Helper()
	var ps []store.Project
	okJSON(t, &ps, "projects")
	for _, p := range ps {
		if p.Name == name {
			return p.ID
		}
	}
	t.Fatalf("no project %q", name)
	return ""
}

// create --preset fills the command, the profile and the resume arguments;
// an unknown preset is a usage error listing them.
func TestCreatePreset(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	ok(t, "add-project", t.TempDir(), "--name", "pr")
	var r store.Record
	okJSON(t, &r, "create", "pr", "cx", "--preset", "codex", "--prompt", "fix the tests", "--model", "gpt-5", "--", "--full-auto")
	if r.Command != "codex" || r.Profile != "codex-json" || strings.Join(r.Args, " ") != "exec --json -m gpt-5 --full-auto fix the tests" ||
		strings.Join(r.ResumeArgs, " ") != "exec --json -m gpt-5 --full-auto resume {sessionId} continue" {
		t.Fatalf("codex preset: %+v", r)
	}
	okJSON(t, &r, "create", "pr", "cl", "--preset", "claude", "--prompt", "fix it")
	if r.Command != "claude" || r.Profile != "claude-stream-json" || r.Args[len(r.Args)-1] != "fix it" {
		t.Fatalf("claude preset: %+v", r)
	}
	fails(t, ExitUsage, `unknown preset "aider" (presets: claude, codex)`, "create", "pr", "x", "--preset", "aider")
	fails(t, ExitUsage, "the command to run is missing", "create", "pr", "y")
}

// Every help text fits a terminal's 80 columns: the command list and each
// command's own help.
func TestHelpFits80Columns(t *testing.T) {
	check := func(what, text string) {
		for _, l := range strings.Split(text, "\n") {
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Errorf("%s: a line of %d columns:\n%s", what, n, l)
			}
		}
	}
	check("shepherd --help", ok(t, "--help"))
	n := 0
	for _, c := range (&env{}).root().Commands() {
		if c.Hidden { // the engine's own (hook): not a verb of the user's
			continue
		}
		check("shepherd help "+c.Name(), ok(t, "help", c.Name()))
		check("shepherd "+c.Name()+" --help", ok(t, c.Name(), "--help"))
		n++
	}
	check("shepherd help help", ok(t, "help", "help"))
	if n < 28 {
		t.Fatalf("%d verbs walked", n)
	}
}
