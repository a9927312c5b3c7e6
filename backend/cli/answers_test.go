package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"shepherd/backend/paths"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

// The fixture CLI that calls Shepherd's permission tool over MCP as Claude
// Code 2.1.197 does (backend/supervisor/testdata/fakeclaude), built once.
var (
	fakeClaudeOnce sync.Once
	fakeClaudeBin  string
	fakeClaudeErr  error
)

func fakeClaude(t *testing.T) string {
	t.Helper()
	fakeClaudeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "shepherd-fakeclaude-")
		if err != nil {
			fakeClaudeErr = err
			return
		}
		fakeClaudeBin = filepath.Join(dir, "claude")
		out, err := exec.Command("go", "build", "-o", fakeClaudeBin, "shepherd/backend/supervisor/testdata/fakeclaude").CombinedOutput()
		if err != nil {
			fakeClaudeErr = err
			t.Logf("%s", out)
		}
	})
	if fakeClaudeErr != nil {
		t.Skipf("cannot build the fixture CLI: %v", fakeClaudeErr)
	}
	return fakeClaudeBin
}

// asker is a Claude Code agent (the fixture) whose calls go through the
// permission tool; its permission log says what each call was answered.
type asker struct {
	t        *testing.T
	proj, id string
	dir      string
	permLog  string
}

func newAsker(t *testing.T, pp paths.Paths, projName, id, mode string, calls []map[string]any, extra map[string]any) *asker {
	t.Helper()
	p := resolve(t, projName)
	a := &asker{t: t, proj: p, id: id, dir: t.TempDir()}
	a.permLog = filepath.Join(a.dir, "permissions.jsonl")
	env := map[string]string{"FAKE_CLAUDE_MODE": mode, "FAKE_CLAUDE_PERMISSION_LOG": a.permLog}
	if calls != nil {
		b, _ := json.Marshal(calls)
		env["FAKE_CLAUDE_CALLS"] = string(b)
	}
	body := map[string]any{"id": id, "command": fakeClaude(t), "args": []string{"-p", "--verbose", "--output-format", "stream-json", "go"},
		"profile": store.ProfileClaudeJSON, "env": env, "cwd": a.dir}
	for k, v := range extra {
		body[k] = v
	}
	c := clientOf(t, pp)
	if _, err := c.JSON(t.Context(), "POST", "/v1/projects/"+p+"/agents", body, nil); err != nil {
		t.Fatalf("create %s: %v", id, err)
	}
	ok(t, "start", projName, id)
	return a
}

// waitAttention polls until the agent's attention is want.
func (a *asker) waitAttention(want string) store.Record {
	a.t.Helper()
	deadline := time.Now().Add(testutil.Patience)
	for {
		r := record(a.t, a.proj, a.id)
		if r.Attention == want {
			return r
		}
		if time.Now().After(deadline) || !r.Status.Live() {
			b, _ := os.ReadFile(r.LogPath)
			a.t.Fatalf("%s: attention %q (%s), want %q; its log:\n%s", a.id, r.Attention, r.Status, want, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// answers are the permission log's lines: what each call was answered.
func (a *asker) answers() []map[string]any {
	b, _ := os.ReadFile(a.permLog)
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			a.t.Fatalf("permission log: %v: %s", err, l)
		}
		out = append(out, m)
	}
	return out
}

func bash(cmd string) map[string]any {
	return map[string]any{"tool": "Bash", "input": map[string]any{"command": cmd, "description": "a test"}}
}

func projectWithFolder(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	ok(t, "add-project", dir, "--name", name)
	return dir
}

// Allow once, always allow (a rule that then answers by itself), deny with
// a message: the agent waits in Needs you on each question the rules do not
// answer, and carries on with each answer; every question and answer is an
// event; the rule is listed and can be removed.
func TestAnswersAllowAlwaysDeny(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	projectWithFolder(t, "ans")
	a := newAsker(t, p, "ans", "worker", "permission-tool", []map[string]any{
		bash("touch one"), bash("touch two"), bash("touch three"), bash("rm -rf build"),
	}, nil)

	a.waitAttention("waiting: permission for Bash: touch one")
	fails(t, 1, "asks no question to choose from", "answer", "ans", "worker", "x")
	out := ok(t, "questions", "ans", "worker")
	if !strings.Contains(out, "permission for Bash: touch one") || !strings.Contains(out, "Bash(touch one)") {
		t.Fatalf("questions said %q", out)
	}
	if out := ok(t, "allow", "ans", "worker"); !strings.Contains(out, "Allowed worker once: Bash: touch one") {
		t.Fatalf("allow said %q", out)
	}
	a.waitAttention("waiting: permission for Bash: touch two")
	fails(t, 1, "Bash(rm:*", "allow", "ans", "worker", "--always", "Bash(rm:*") // not a rule
	out = ok(t, "allow", "ans", "worker", "--always", "Bash(touch:*)")
	if !strings.Contains(out, "always from now on: Bash(touch:*) (kept for worker)") {
		t.Fatalf("allow --always said %q", out)
	}
	// touch three is allowed by the rule, without asking.
	a.waitAttention("waiting: permission for Bash: rm -rf build")
	if out := ok(t, "deny", "ans", "worker", "-m", "not the build, please"); !strings.Contains(out, "Denied worker: Bash: rm -rf build") {
		t.Fatalf("deny said %q", out)
	}
	r := waitStatus(t, a.proj, "worker", "completed")
	if r.Attention != "" {
		t.Fatalf("attention after the run: %q", r.Attention)
	}
	for _, f := range []string{"one", "two", "three"} {
		if _, err := os.Stat(filepath.Join(a.dir, f)); err != nil {
			t.Errorf("%s was not made: %v", f, err)
		}
	}
	ans := a.answers()
	if len(ans) != 4 {
		t.Fatalf("%d calls answered, want 4: %v", len(ans), ans)
	}
	for i, want := range []string{`"behavior":"allow"`, `"behavior":"allow"`, `"behavior":"allow"`, `"message":"not the build, please"`} {
		if s, _ := ans[i]["answer"].(string); !strings.Contains(s, want) {
			t.Errorf("call %d answered %q, want %s", i+1, s, want)
		}
	}
	events := ok(t, "--json", "events", "ans")
	for _, want := range []string{`"event":"question"`, `"reason":"Bash: touch one"`, `"by":"user"`, `"reason":"allowed by Bash(touch:*)"`,
		`"event":"rule-added"`, `"message":"not the build, please"`} {
		if !strings.Contains(events, want) {
			t.Errorf("events lack %s:\n%s", want, events)
		}
	}
	if out := ok(t, "rules", "ans", "worker"); !strings.Contains(out, "Rules of worker:\n  Bash(touch:*)") {
		t.Fatalf("rules said %q", out)
	}
	ok(t, "rules", "ans", "worker", "--rm", "Bash(touch:*)")
	if out := ok(t, "rules", "ans", "worker"); !strings.Contains(out, "No rules of worker.") {
		t.Fatalf("rules after --rm said %q", out)
	}
	fails(t, 1, "no rule Bash(touch:*) kept", "rules", "ans", "worker", "--rm", "Bash(touch:*)")
	fails(t, 1, "asks nothing", "allow", "ans", "worker")
}

// An agent's question (AskUserQuestion): its questions and options are
// shown, a choice that is not one of them is refused, and the agent goes on
// with the answer chosen.
func TestAnswersChoice(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	projectWithFolder(t, "ans")
	a := newAsker(t, p, "ans", "chooser", "ask-question", nil, nil)
	a.waitAttention("waiting: your choice")
	out := ok(t, "questions", "ans", "chooser")
	for _, want := range []string{"Which database should the service use?", "- Postgres: A server", "- SQLite"} {
		if !strings.Contains(out, want) {
			t.Fatalf("questions lack %q:\n%s", want, out)
		}
	}
	fails(t, 1, "asks you to choose (your choice): answer with its choices", "allow", "ans", "chooser")
	fails(t, 1, `"Mongo" is not one of the choices`, "answer", "ans", "chooser", "Mongo")
	ok(t, "answer", "ans", "chooser", "SQLite")
	r := waitStatus(t, a.proj, "chooser", "completed")
	b, _ := os.ReadFile(r.LogPath)
	if !strings.Contains(string(b), `Your questions have been answered: \"Which database should the service use?\"=\"SQLite\"`) {
		t.Fatalf("the agent did not get the answer:\n%s", b)
	}
}

// The engine stops while a question is asked: the call is answered deny,
// saying why, and the run goes on (it is durable; the next engine adopts
// it).
func TestAnswersEngineStopDenies(t *testing.T) {
	p := isolate(t)
	s := serve(t, p)
	projectWithFolder(t, "ans")
	a := newAsker(t, p, "ans", "worker", "permission-tool", []map[string]any{bash("touch never")}, nil)
	a.waitAttention("waiting: permission for Bash: touch never")
	s.stop(t)
	deadline := time.Now().Add(testutil.Patience)
	for len(a.answers()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the call was never answered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	got, _ := a.answers()[0]["answer"].(string)
	if !strings.Contains(got, `"behavior":"deny"`) || !strings.Contains(got, "engine stopped") {
		t.Fatalf("answered %q", got)
	}
	if _, err := os.Stat(filepath.Join(a.dir, "never")); err == nil {
		t.Fatal("the denied command ran")
	}
}

// `shepherd send` resumes a Claude agent's session with the message as its
// prompt; a running one is refused.
func TestSendMessage(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	projectWithFolder(t, "ans")
	calls := filepath.Join(t.TempDir(), "calls.jsonl")
	stream := []string{"-p", "--verbose", "--output-format", "stream-json"}
	body := map[string]any{"id": "cc", "command": fakeClaude(t), "args": append(stream, "fix it"), "profile": store.ProfileClaudeJSON,
		"resumeArgs": append(append([]string{}, stream...), "--resume", "{sessionId}", "--", "continue"),
		"env":        map[string]string{"FAKE_CLAUDE_MODE": "success", "FAKE_CLAUDE_RECORD": calls}}
	if _, err := clientOf(t, p).JSON(t.Context(), "POST", "/v1/projects/"+resolve(t, "ans")+"/agents", body, nil); err != nil {
		t.Fatal(err)
	}
	fails(t, 1, "cannot be resumed: no session id is known yet", "send", "ans", "cc", "hello")
	ok(t, "start", "ans", "cc")
	r := waitStatus(t, resolve(t, "ans"), "cc", "completed")
	out := ok(t, "send", "ans", "cc", "now the tests")
	if !strings.Contains(out, "Sent to cc: it resumes session "+r.SessionID) {
		t.Fatalf("send said %q", out)
	}
	waitStatus(t, resolve(t, "ans"), "cc", "completed")
	b, _ := os.ReadFile(calls)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], `"--","now the tests"]`) || !strings.Contains(lines[1], r.SessionID) {
		t.Fatalf("calls:\n%s", b)
	}
	fails(t, 1, "the message is empty", "send", "ans", "cc", " ")
}

// A sandboxed Claude agent (with @network, to reach the permission tool)
// asks; an always-rule that would widen its grants is refused, saying why,
// and nothing is kept; allowing once stays the user's choice.
func TestAnswersSandboxedRuleRefused(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	projectWithFolder(t, "ans")
	a := newAsker(t, p, "ans", "boxed", "permission-tool", []map[string]any{bash("rm -rf /opt/elsewhere")},
		map[string]any{"permissions": []string{"@network"}})
	a.waitAttention("waiting: permission for Bash: rm -rf /opt/elsewhere")
	out := ok(t, "questions", "ans", "boxed")
	if strings.Contains(out, "Bash(rm") {
		t.Fatalf("a widening rule was suggested:\n%s", out)
	}
	r := fails(t, 1, "for sandboxed agent 'boxed'", "allow", "ans", "boxed", "--always", "Bash(rm:*)")
	if !strings.Contains(r.stderr, "rm") {
		t.Fatalf("the refusal does not say why: %s", r)
	}
	if out := ok(t, "rules", "ans", "boxed"); !strings.Contains(out, "No rules of boxed.") {
		t.Fatalf("rules after the refusal:\n%s", out)
	}
	ok(t, "deny", "ans", "boxed")
	waitStatus(t, a.proj, "boxed", "completed")
}
