package cli

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"shepherd/backend/api"
	"shepherd/backend/store"
)

// completions asks cobra's __complete entry point, as the shells' scripts
// do, and returns the candidates (their descriptions after a tab) and the
// directive.
func completions(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	r := cli(t, append([]string{"__complete"}, args...)...)
	if r.code != 0 {
		t.Fatalf("__complete %q: %s", args, r)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

// candidates are the candidates without their descriptions.
func candidates(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i], _, _ = strings.Cut(l, "\t")
	}
	return out
}

// The projects and agents a running engine knows complete P and A (a name
// two projects share by their ids); fixed flag values and answers complete
// from their sets; descriptions show agent-written names escaped.
func TestCompleteFromEngine(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	demo := t.TempDir()
	ok(t, "add-project", demo, "--name", "demo")
	var t1, t2 store.Project
	okJSON(t, &t1, "add-project", t.TempDir(), "--name", "twin")
	okJSON(t, &t2, "add-project", t.TempDir(), "--name", "twin")
	ok(t, "create", "demo", "sleeper", "--", "sleep", "60")
	ok(t, "create", "demo", "worker", "--name", "evil\x1b]0;pwned\x07 name", "--", "true")

	got, dir := completions(t, "ls", "")
	if dir != ":4" || !slices.Contains(got, "demo\t"+demo) || !slices.Contains(candidates(got), t1.ID) || !slices.Contains(candidates(got), t2.ID) ||
		slices.Contains(candidates(got), "twin") || len(got) != 3 {
		t.Fatalf("ls P: %q %s", got, dir)
	}
	if got, _ := completions(t, "select", "de"); !slices.Equal(candidates(got), []string{"demo"}) {
		t.Fatalf("select de: %q", got)
	}
	got, dir = completions(t, "start", "demo", "")
	if dir != ":4" || !slices.Equal(candidates(got), []string{"sleeper", "worker"}) || got[0] != "sleeper\tnot_started" {
		t.Fatalf("start demo A: %q %s", got, dir)
	}
	if strings.ContainsAny(got[1], "\x1b\x07") || !strings.Contains(got[1], `evil\x1b]0;pwned\x07 name · not_started`) {
		t.Fatalf("an agent's name as its description: %q", got[1])
	}
	if got, _ := completions(t, "logs", t1.ID, ""); len(got) != 0 {
		t.Fatalf("agents of an empty project: %q", got)
	}
	if got, _ := completions(t, "budget", "demo", "sleeper", ""); !slices.Equal(got, []string{"raise", "remove", "once", "stop"}) {
		t.Fatalf("budget answers: %q", got)
	}
	for _, tc := range []struct {
		args []string
		want []string
		dir  string
	}{
		{[]string{"create", "demo", "x", "--preset", ""}, []string{"claude", "codex"}, ":4"},
		{[]string{"create", "demo", "x", "--profile", "c"}, []string{"claude-stream-json", "codex-json"}, ":4"},
		{[]string{"create", "demo", "x", "--on-stale", ""}, []string{"flag", "restart", "resume"}, ":4"},
		{[]string{"create", "demo", "x", "--stale-check", ""}, []string{"true", "false"}, ":4"},
		{[]string{"create", "demo", "x", "--permissions", "@network,"}, []string{"@network,@write:"}, ":6"},
		{[]string{"sandbox", "demo", "sleeper", "--permissions", "@"}, []string{"@network", "@write:"}, ":6"},
		{[]string{"settings", "demo", "--notifyNative", ""}, []string{"true", "false"}, ":4"},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish", "powershell"}, ":4"},
		{[]string{"mcp", ""}, []string{"install"}, ":4"},
		{[]string{"help", "sta"}, []string{"start", "status"}, ":4"},
		{[]string{"create", "demo", ""}, nil, ":4"},      // a new agent's id
		{[]string{"create", "demo", "x", ""}, nil, ":0"}, // its command: files
		{[]string{"add-project", ""}, nil, ":16"},        // a folder
		{[]string{"create", "demo", "x", "--cwd", ""}, nil, ":16"},
		{[]string{"status", ""}, nil, ":4"},
	} {
		got, dir := completions(t, tc.args...)
		if !slices.Equal(candidates(got), tc.want) || dir != tc.dir {
			t.Errorf("%q: %q %s, want %q %s", tc.args, got, dir, tc.want, tc.dir)
		}
	}
	// The verbs, without cobra's hidden ones; flags, global ones too.
	got, _ = completions(t, "")
	if w := candidates(got); !slices.Contains(w, "create") || !slices.Contains(w, "completion") || !slices.Contains(w, "help") ||
		slices.ContainsFunc(w, func(s string) bool { return strings.HasPrefix(s, "__") }) {
		t.Fatalf("verbs: %q", w)
	}
	got, _ = completions(t, "ls", "demo", "--")
	if w := candidates(got); !slices.Contains(w, "--wide") || !slices.Contains(w, "--json") || !slices.Contains(w, "--show-secrets") {
		t.Fatalf("ls flags: %q", w)
	}
}

// With no engine, or one that does not answer, a completion offers nothing
// and says nothing, and does not wait on the engine past its deadline.
func TestCompleteWithoutEngine(t *testing.T) {
	p := isolate(t)
	r := cli(t, "__complete", "start", "demo", "")
	if r.code != 0 || r.stdout != ":4\n" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "Completion ended with directive") {
		t.Fatalf("no engine: %s", r)
	}

	// An engine that takes connections and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	if err := os.MkdirAll(p.Runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := api.WriteEngineInfo(p.EngineFile(), api.EngineInfo{URL: "http://" + ln.Addr().String(), Token: "t", PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { completionTimeout = d }(completionTimeout)
	completionTimeout = 100 * time.Millisecond
	for _, args := range [][]string{{"ls", ""}, {"start", "demo", ""}} {
		if r := cli(t, append([]string{"__complete"}, args...)...); r.code != 0 || r.stdout != ":4\n" {
			t.Fatalf("a silent engine, %q: %s", args, r)
		}
	}
}

// Each shell's script is what cobra makes for `shepherd`, and loads: bash
// -n, zsh -n and fish --no-execute read it without an error.
func TestCompletionScripts(t *testing.T) {
	for _, tc := range []struct {
		shell, mark string
		check       []string // the shell's syntax check, reading the script on stdin
	}{
		{"bash", "complete -o default -F __start_shepherd shepherd", []string{"bash", "-n"}},
		{"zsh", "#compdef shepherd", []string{"zsh", "-n"}},
		{"fish", "complete -c shepherd", []string{"fish", "--no-execute"}},
		{"powershell", "Register-ArgumentCompleter -CommandName 'shepherd'", nil},
	} {
		script := ok(t, "completion", tc.shell)
		if !strings.Contains(script, tc.mark) || !strings.Contains(script, "__complete") {
			t.Errorf("%s: not a completion script for shepherd:\n%.400s", tc.shell, script)
		}
		if tc.check == nil {
			continue
		}
		if _, err := exec.LookPath(tc.check[0]); err != nil {
			t.Logf("%s is not installed: its script is not loaded", tc.check[0])
			continue
		}
		cmd := exec.Command(tc.check[0], tc.check[1:]...)
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s does not load its script: %v\n%s", tc.shell, err, out)
		}
	}
	// Run as shepherd-engine, the script completes shepherd-engine.
	engine := filepath.Join(t.TempDir(), engineName)
	if err := os.Symlink(os.Args[0], engine); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(engine, "completion", "bash")
	cmd.Env = append(os.Environ(), asCLI+"=1")
	script, err := cmd.Output()
	if err != nil || !strings.Contains(string(script), "complete -o default -F __start_shepherd-engine shepherd-engine") {
		t.Errorf("shepherd-engine completion bash: %v\n%.400s", err, script)
	}
	check := exec.Command("bash", "-n")
	check.Stdin = strings.NewReader(string(script))
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("bash does not load shepherd-engine's script: %v\n%s", err, out)
	}
	fails(t, 2, `unknown shell "tcsh"`, "completion", "tcsh")
	fails(t, 2, "wrong number of arguments", "completion")
}

// shellPath is a PATH whose `shepherd` is this test binary run as the CLI.
func shellPath(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	script := "#!/bin/sh\n" + asCLI + "=1 exec '" + os.Args[0] + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "shepherd"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin + string(os.PathListSeparator) + os.Getenv("PATH")
}

// A real round in bash: the script from `shepherd completion bash`, loaded
// with bash-completion, registers __start_shepherd for shepherd; driven as
// readline drives it, it completes verbs, projects and agents from the
// engine, and flag values.
func TestBashCompletionRound(t *testing.T) {
	const bashCompletion = "/usr/share/bash-completion/bash_completion"
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	if _, err := os.Stat(bashCompletion); err != nil {
		t.Skip("no bash-completion (scripts/setup.sh --test installs it)")
	}
	p := isolate(t)
	serve(t, p)
	ok(t, "add-project", t.TempDir(), "--name", "demo")
	ok(t, "create", "demo", "sleeper", "--", "sleep", "60")
	ok(t, "create", "demo", "slacker", "--", "true")
	driver := `
source ` + bashCompletion + `
source <(shepherd completion bash)
complete -p shepherd
compopt() { :; } # readline's options: there is no readline here
try() {
	COMP_LINE="$1" COMP_POINT=${#1} COMP_TYPE=37
	read -ra COMP_WORDS <<<"$1"
	[[ $1 == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	__start_shepherd shepherd "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
	echo "$1|${COMPREPLY[*]}"
}
try "shepherd cre"
try "shepherd ls "
try "shepherd start demo s"
try "shepherd stop demo sle"
try "shepherd create demo x --preset "
try "shepherd --json get d"
`
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", driver)
	cmd.Env = append(os.Environ(), "PATH="+shellPath(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	want := []string{
		"complete -o default -F __start_shepherd shepherd",
		"shepherd cre|create",
		"shepherd ls |demo",
		"shepherd start demo s|sleeper slacker",
		"shepherd stop demo sle|sleeper",
		"shepherd create demo x --preset |claude codex",
		"shepherd --json get d|demo",
	}
	if got := strings.Split(strings.TrimSpace(string(out)), "\n"); !slices.Equal(got, want) {
		t.Fatalf("bash completions:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
}

// A real round in fish: `complete --do-complete` runs the script from
// `shepherd completion fish` as a TAB would.
func TestFishCompletionRound(t *testing.T) {
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("no fish (scripts/setup.sh --test installs it)")
	}
	p := isolate(t)
	serve(t, p)
	ok(t, "add-project", t.TempDir(), "--name", "demo")
	ok(t, "create", "demo", "sleeper", "--", "sleep", "60")
	driver := `shepherd completion fish | source
for line in "shepherd cre" "shepherd logs demo " "shepherd create demo x --on-stale "
	echo "$line|"(string join , (complete --do-complete "$line"))
end`
	cmd := exec.Command("fish", "--no-config", "-c", driver)
	cmd.Env = append(os.Environ(), "PATH="+shellPath(t), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fish: %v\n%s", err, out)
	}
	want := []string{
		"shepherd cre|create\tcreate an agent (not started)",
		"shepherd logs demo |sleeper\tnot_started",
		"shepherd create demo x --on-stale |flag,restart,resume",
	}
	if got := strings.Split(strings.TrimSpace(string(out)), "\n"); !slices.Equal(got, want) {
		t.Fatalf("fish completions:\n%q\nwant:\n%q", got, want)
	}
}
