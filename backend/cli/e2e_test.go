package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"shepherd/backend/api"
	"shepherd/backend/procid"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// Every endpoint of the API, exercised through the CLI against a real engine
// (`shepherd serve` in this process) running real processes through the
// real shim.
func TestEndToEnd(t *testing.T) {
	p := isolate(t)
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}

	// No engine yet.
	fails(t, 1, "no engine running — start the app or `shepherd serve`", "projects")

	srv := serve(t, p)
	if !strings.Contains(srv.stderr.String(), "listening on http://127.0.0.1:") {
		t.Errorf("serve did not print its URL on stderr:\n%s", srv.stderr)
	}
	st, err := os.Stat(p.EngineFile())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("engine.json: %v %v, want mode 0600", st, err)
	}
	info, _ := api.ReadEngineInfo(p.EngineFile())
	if info.PID != os.Getpid() || len(info.Token) != 64 {
		t.Errorf("engine.json = %+v", info)
	}

	// GET /v1/engine
	if out := ok(t, "status"); !strings.Contains(out, "Engine running at "+info.URL) {
		t.Errorf("status: %q", out)
	}
	var es api.EngineStatus
	okJSON(t, &es, "status")
	if es.PID != os.Getpid() || es.Version != Version {
		t.Errorf("status --json = %+v", es)
	}

	// GET /v1/projects, POST /v1/projects
	if out := ok(t, "projects"); !strings.Contains(out, "No projects yet") {
		t.Errorf("projects with none: %q", out)
	}
	out := ok(t, "add-project", dir, "--name", "demo")
	if !strings.HasPrefix(out, "Added project demo (") {
		t.Errorf("add-project: %q", out)
	}
	if out := ok(t, "add-project", dir+"/"); !strings.Contains(out, "already known") {
		t.Errorf("add-project of the same path again: %q", out)
	}
	var projects []store.Project
	okJSON(t, &projects, "projects")
	if len(projects) != 1 || projects[0].Name != "demo" || projects[0].Path != dir {
		t.Fatalf("projects --json = %+v", projects)
	}
	pid := projects[0].ID
	if out := ok(t, "projects"); !regexp.MustCompile(`(?m)^NAME\s+RUNNING\s+QUEUED\s+STATE\s+PATH\s+ID\ndemo\s+0\s+0\s+active\s+` + regexp.QuoteMeta(dir) + `\s+` + regexp.QuoteMeta(pid) + `$`).MatchString(out) {
		t.Errorf("projects table:\n%s", out)
	}
	// Relative paths are made absolute by the CLI (the engine has another cwd).
	t.Chdir(dir)
	var again store.Project
	okJSON(t, &again, "add-project", ".")
	if again.ID != pid {
		t.Errorf("add-project . from inside the folder gave %+v, want project %s", again, pid)
	}
	fails(t, 1, "does not exist", "add-project", filepath.Join(dir, "missing"))

	// POST /v1/projects/{project}/select — by name, id and path alike.
	if out := ok(t, "select", "demo"); !strings.Contains(out, "Project demo selected: 0 agent(s)") {
		t.Errorf("select: %q", out)
	}
	var sum supervisor.SyncSummary
	okJSON(t, &sum, "select", pid)
	if sum.ProjectID != pid || sum.Total != 0 {
		t.Errorf("select --json = %+v", sum)
	}
	fails(t, 1, "Project 'nope' not found", "select", "nope")

	// POST /v1/projects/{project}/agents
	out = ok(t, "create", "demo", "sleeper", "--env", "FOO=bar", "--grace", "1", "--name", "Sleepy",
		"--", "sh", "-c", "echo started $FOO; exec sleep 60")
	if !strings.Contains(out, "Created agent sleeper in project demo; not started yet (shepherd start demo sleeper).") {
		t.Errorf("create: %q", out)
	}
	fails(t, 1, "Agent 'sleeper' already exists", "create", "demo", "sleeper", "--", "true")
	ok(t, "create", dir, "done", "--cwd", "sub", "--", "sh", "-c", "pwd; echo done")
	ok(t, "create", pid, "bad", "--timeout", "30", "--", "sh", "-c", "echo oops >&2; exit 3")
	ok(t, "create", "demo", "ticker", "--keep-alive=false", "--profile", "generic",
		"sh", "-c", "i=0; while :; do echo tick $i; i=$((i+1)); sleep 0.05; done")
	ok(t, "create", "demo", "claude", "--profile", "claude-stream-json", "--resume-args", `-p --resume {sessionId} -- "go on"`,
		"--auto-start", "--stale-check=false", "--", "true")
	ok(t, "create", "demo", "ghost", "--", "/nonexistent/command")
	var created store.Record
	okJSON(t, &created, "create", "demo", "r2", "--resume-arg", "--resume", "--resume-arg", "{sessionId}", "--", "true")
	if diff := strings.Join(created.ResumeArgs, "|"); diff != "--resume|{sessionId}" || created.Status != "not_started" {
		t.Errorf("create --json = %+v", created)
	}
	fails(t, 1, "command is empty", "create", "demo", "blank", "--", " ")
	fails(t, 1, "does not exist", "create", "demo", "nowhere", "--cwd", filepath.Join(dir, "missing"), "--", "true")
	fails(t, 1, "unknown profile", "create", "demo", "prof", "--profile", "yaml", "--", "true")
	fails(t, 1, "agent", "create", "demo", "../evil", "--", "true")
	fails(t, 2, "the command to run is missing", "create", "demo", "nocmd")
	fails(t, 2, "--env", "create", "demo", "badenv", "--env", "NOEQUALS", "--", "true")
	fails(t, 2, "invalid value", "create", "demo", "badgrace", "--grace", "soon", "--", "true")
	for _, gone := range []string{"blank", "nowhere", "prof", "nocmd", "badenv", "badgrace"} {
		fails(t, 1, "Agent '"+gone+"' not found", "get", "demo", gone)
	}

	// Malformed requests to the real engine: 400 with a message, and nothing
	// is created.
	c := api.NewClient(info)
	for body, msg := range map[string]string{
		`{"id":"m1","command":"true","bogus":1}`:  `unknown field "bogus"`,
		`{"id":"m1","command":"true","args":"x"}`: `field "args" has the wrong type`,
		`{"id":"m1","command":`:                   "malformed JSON",
		`{"id":"m1","command":"true"} trailing`:   "after the object",
	} {
		_, err := c.Do(context.Background(), "POST", "/v1/projects/"+pid+"/agents", []byte(body))
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Status != 400 || ae.Name != "ValidationError" || !strings.Contains(ae.Message, msg) {
			t.Errorf("POST %s: %v, want 400 ValidationError saying %q", body, err, msg)
		}
	}
	fails(t, 1, "Agent 'm1' not found", "get", "demo", "m1")
	if _, err := os.Stat(filepath.Join(p.Data, "projects", pid, "agents", "m1")); !os.IsNotExist(err) {
		t.Errorf("a malformed create left files behind: %v", err)
	}

	// GET …/{agent}: what create stored.
	r := record(t, "demo", "claude")
	if r.Profile != "claude-stream-json" || !r.AutoStartOnRestore || r.StaleCheck == nil || *r.StaleCheck ||
		strings.Join(r.ResumeArgs, "|") != "-p|--resume|{sessionId}|--|go on" {
		t.Errorf("claude record = %+v", r)
	}
	r = record(t, "demo", "done")
	if r.Cwd != sub {
		t.Errorf("--cwd sub gave cwd %q, want %q", r.Cwd, sub)
	}
	r = record(t, "demo", "sleeper")
	if r.Env["FOO"] != "bar" || r.GraceSec != 1 || r.Name != "Sleepy" || r.Command != "sh" {
		t.Errorf("sleeper record = %+v", r)
	}

	// POST …/start
	out = ok(t, "start", "demo", "sleeper")
	if !regexp.MustCompile(`^Started sleeper: running, pid \d+\.\n$`).MatchString(out) {
		t.Errorf("start: %q", out)
	}
	fails(t, 1, "Agent 'sleeper' is already running", "start", "demo", "sleeper")
	fails(t, 1, "Agent 'nobody' not found", "start", "demo", "nobody")
	fails(t, 1, "Failed to start agent 'ghost'", "start", "demo", "ghost")
	var started store.Record
	okJSON(t, &started, "start", "demo", "done")
	ok(t, "start", "demo", "bad")
	ok(t, "start", "demo", "ticker")

	r = waitStatus(t, "demo", "done", "completed")
	if r.ExitCode == nil || *r.ExitCode != 0 {
		t.Errorf("done: %+v", r)
	}
	r = waitStatus(t, "demo", "bad", "failed")
	if r.ExitCode == nil || *r.ExitCode != 3 {
		t.Errorf("bad: exit %v, want 3", r.ExitCode)
	}

	// GET …/agents: the table (--wide: every column, whole) and the JSON.
	out = ok(t, "ls", "demo", "--wide")
	if !regexp.MustCompile(`(?m)^ID\s+STATUS\s+ACTIVITY\s+PID\s+EXIT\s+REASON\s+STARTED\s+COMMAND$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^bad\s+failed\s+-\s+\d+\s+3\s+failed\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+sh -c 'echo oops >&2; exit 3'$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^sleeper\s+running\s+(working|silent \d+ s)\s+\d+\s+-\s+-\s+`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^claude\s+not_started\s+-\s+-\s+-\s+-\s+-\s+true$`).MatchString(out) {
		t.Errorf("ls table:\n%s", out)
	}
	var list []store.Record
	okJSON(t, &list, "ls", "demo")
	if len(list) != 7 {
		t.Errorf("ls --json: %d agents, want 7", len(list))
	}
	out = ok(t, "get", "demo", "bad")
	for _, want := range []string{"Status:", "failed", "Exit:", "3", "Error:", "Process exited with code 3", "Log:", r.LogPath} {
		if !strings.Contains(out, want) {
			t.Errorf("get bad: no %q in\n%s", want, out)
		}
	}

	// GET …/log
	if out := ok(t, "logs", "demo", "sleeper"); out != "started bar\n" {
		t.Errorf("logs sleeper = %q", out)
	}
	if out := ok(t, "logs", "demo", "bad", "-n", "1"); out != "oops\n" {
		t.Errorf("logs bad -n 1 = %q", out)
	}
	if out := ok(t, "logs", "demo", "done"); out != sub+"\ndone\n" {
		t.Errorf("logs done = %q", out)
	}
	fails(t, 2, "invalid value", "logs", "demo", "done", "-n", "-1")
	fails(t, 1, "Agent 'nobody' not found", "logs", "demo", "nobody")

	// logs -f: the tail, then every new line, none lost, until Ctrl-C.
	followed := &syncBuf{}
	ctx, cancel := context.WithCancel(context.Background())
	fdone := make(chan int, 1)
	go func() { fdone <- Main(ctx, []string{"logs", "demo", "ticker", "-f", "-n", "2"}, followed, followed) }()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(followed.String(), "\n") < 20 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case code := <-fdone:
		if code != 0 {
			t.Errorf("logs -f ended with %d after Ctrl-C", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("logs -f did not end after Ctrl-C")
	}
	lines := strings.Split(strings.TrimSpace(followed.String()), "\n")
	if len(lines) < 20 {
		t.Fatalf("logs -f printed %d lines in 10 s:\n%s", len(lines), followed)
	}
	first := -1
	for i, l := range lines {
		n, err := strconv.Atoi(strings.TrimPrefix(l, "tick "))
		if err != nil {
			t.Fatalf("logs -f line %q", l)
		}
		if i == 0 {
			first = n
		} else if n != first+i {
			t.Fatalf("logs -f: line %d is %q, want tick %d (lines lost or repeated):\n%s", i, l, first+i, followed)
		}
	}

	// GET /v1/engine/processes and /v1/engine/processes/{project}/{agent}
	out = ok(t, "ps", "--wide")
	if !regexp.MustCompile(`(?m)^PROJECT\s+ID\s+STATUS\s+ACTIVITY\s+CPU\s+MEM\s+PID\s+EXIT\s+REASON\s+STARTED\s+LOG$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^demo\s+sleeper\s+running\s+\S+\s+\d+%\s+\d+ MiB\s`).MatchString(out) || !strings.Contains(out, r.LogPath) {
		t.Errorf("ps:\n%s", out)
	}
	var procs []store.Record
	okJSON(t, &procs, "ps")
	if len(procs) != 7 {
		t.Errorf("ps --json: %d agents, want 7", len(procs))
	}
	for _, pr := range procs {
		if pr.ProjectID != pid || !filepath.IsAbs(pr.LogPath) {
			t.Errorf("dashboard entry %s: projectId %q logPath %q", pr.ID, pr.ProjectID, pr.LogPath)
		}
	}
	var one store.Record
	okJSON(t, &one, "ps", "demo", "sleeper")
	if one.ID != "sleeper" || one.ProjectID != pid || !filepath.IsAbs(one.LogPath) {
		t.Errorf("ps demo sleeper = %+v", one)
	}
	if out := ok(t, "ps", "demo", "sleeper"); !strings.Contains(out, "running") {
		t.Errorf("ps demo sleeper:\n%s", out)
	}
	fails(t, 1, "Agent 'nobody' not found", "ps", "demo", "nobody")
	fails(t, 2, "give both", "ps", "demo")

	// POST …/stop
	sleeper := record(t, "demo", "sleeper")
	out = ok(t, "stop", "demo", "sleeper", "--grace", "2")
	if out != "Stopped sleeper: stopped.\n" {
		t.Errorf("stop: %q", out)
	}
	if procid.Alive(sleeper.PID) {
		t.Errorf("sleeper's process %d is alive after stop", sleeper.PID)
	}
	fails(t, 1, "Agent 'sleeper' is not running", "stop", "demo", "sleeper")
	fails(t, 1, "Agent 'done' is not running", "stop", "demo", "done")

	// DELETE …/{agent}
	fails(t, 1, "The agent is running. Stop it before removing.", "rm", "demo", "ticker")
	ticker := record(t, "demo", "ticker")
	if out := ok(t, "rm", "demo", "ticker", "--force"); out != "Removed ticker; its log was kept.\n" {
		t.Errorf("rm --force: %q", out)
	}
	if procid.Alive(ticker.PID) {
		t.Errorf("ticker's process %d is alive after rm --force", ticker.PID)
	}
	if _, err := os.Stat(ticker.LogPath); err != nil {
		t.Errorf("rm without --delete-log lost the log: %v", err)
	}
	fails(t, 1, "Agent 'ticker' not found", "get", "demo", "ticker")
	done := record(t, "demo", "done")
	var removed api.Removed
	okJSON(t, &removed, "rm", "demo", "done", "--delete-log")
	if !removed.Removed || !removed.LogDeleted || removed.AgentID != "done" {
		t.Errorf("rm --json = %+v", removed)
	}
	if _, err := os.Stat(done.LogPath); !os.IsNotExist(err) {
		t.Errorf("rm --delete-log kept the log: %v", err)
	}
	fails(t, 1, "Agent 'done' not found", "rm", "demo", "done")

	// POST /v1/projects/{project}/stop-all
	ok(t, "start", "demo", "sleeper")
	ok(t, "create", "demo", "stubborn", "--grace", "1", "--", "sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.1; done")
	ok(t, "start", "demo", "stubborn")
	time.Sleep(200 * time.Millisecond) // let the trap be set
	out = ok(t, "stop-all", "demo")
	if !regexp.MustCompile(`(?m)^AGENT\s+STATUS\s+REASON\s+ERROR$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^sleeper\s+stopped\s+stopped_by_user\s+-$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^stubborn\s+stopped\s+stopped_by_user\s+-$`).MatchString(out) {
		t.Errorf("stop-all table:\n%s", out)
	}
	if out := ok(t, "stop-all", "demo"); !strings.Contains(out, "No running agents.") {
		t.Errorf("stop-all with none running: %q", out)
	}
	var res []supervisor.StopResult
	okJSON(t, &res, "stop-all", "demo")
	if len(res) != 0 {
		t.Errorf("stop-all --json with none running = %+v", res)
	}

	// GET /v1/projects/{project}/events
	out = ok(t, "events", "demo")
	if !regexp.MustCompile(`(?m)^TIME\s+EVENT\s+AGENT\s+FROM\s+TO\s+REASON\s+DATA$`).MatchString(out) ||
		!strings.Contains(out, "created") || !regexp.MustCompile(`(?m)\sbad\s+running\s+failed\s`).MatchString(out) {
		t.Errorf("events table:\n%s", out)
	}
	raw := ok(t, "events", "--json", "demo")
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(raw), "\n") {
		var ev store.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Event == "" {
			t.Errorf("events --json line %q: %v", l, err)
		}
		n++
	}
	if n < 10 {
		t.Errorf("events --json: %d lines", n)
	}

	// Usage errors.
	fails(t, 2, "unknown command", "frobnicate")
	fails(t, 2, "wrong number of arguments", "get", "demo")
	fails(t, 2, "unknown flag --nope", "ls", "demo", "--nope")
	if r := cli(t, "help", "create"); r.code != 0 || !strings.Contains(r.stdout, "--resume-args") {
		t.Errorf("help create: %s", r)
	}
	if r := cli(t); r.code != 2 || !strings.Contains(r.stderr, "Usage: shepherd") {
		t.Errorf("no arguments: %s", r)
	}

	// The engine stops cleanly: engine.json goes, agents stay.
	ok(t, "start", "demo", "sleeper")
	survivor := record(t, "demo", "sleeper")
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve ended with %d:\n%s", code, srv.stderr)
	}
	if _, err := os.Stat(p.EngineFile()); !os.IsNotExist(err) {
		t.Errorf("engine.json left behind after a clean stop: %v", err)
	}
	if !procid.Alive(survivor.PID) {
		t.Fatalf("agent %d died with the engine", survivor.PID)
	}
	fails(t, 1, "no engine running", "ls", "demo")

	// A new engine re-attaches it; stop still works.
	serve(t, p)
	okJSON(t, &sum, "select", "demo")
	if sum.Counts[supervisor.OutcomeReattached] != 1 {
		t.Errorf("select after restart = %+v, want one re-attached agent", sum)
	}
	if r := record(t, "demo", "sleeper"); r.Status != "running" || r.PID != survivor.PID {
		t.Errorf("sleeper after restart = %s pid %d, want running pid %d", r.Status, r.PID, survivor.PID)
	}
	ok(t, "stop", "demo", "sleeper")
	if procid.Alive(survivor.PID) {
		t.Errorf("re-attached agent %d alive after stop", survivor.PID)
	}
}
