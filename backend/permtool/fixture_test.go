package permtool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shepherd/backend/permrules"
)

var fakeClaude string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "permtool-")
	if err != nil {
		panic(err)
	}
	fakeClaude = filepath.Join(dir, "claude")
	if out, err := exec.Command("go", "build", "-o", fakeClaude, "shepherd/backend/supervisor/testdata/fakeclaude").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the fixture: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// asked is one request the tool received, with the run's credential, and
// the way to answer it.
type asked struct {
	r      Request
	auth   string
	answer chan Answer
}

// serve runs an MCP server with the permission tool; each request goes to
// the returned channel and waits there for its answer, as long as it takes.
func serve(t *testing.T) (url string, reqs chan asked, inFlight *atomic.Int32, maxInFlight *atomic.Int32) {
	reqs = make(chan asked)
	inFlight, maxInFlight = &atomic.Int32{}, &atomic.Int32{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "shepherd", Version: "test"}, nil)
	AddTool(srv, ToolName, func(ctx context.Context, req *mcp.CallToolRequest, r Request) (Answer, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		a := asked{r: r, auth: req.Extra.Header.Get("Authorization"), answer: make(chan Answer, 1)}
		select {
		case reqs <- a:
		case <-ctx.Done():
			return Answer{}, ctx.Err()
		}
		select {
		case ans := <-a.answer:
			return ans, nil
		case <-ctx.Done():
			return Answer{}, ctx.Err()
		}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp", reqs, inFlight, maxInFlight
}

// run starts the fixture CLI in mode, its MCP config naming url with a
// header filled from the environment, as Shepherd will write it.
type run struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan error
	cwd  string
}

func start(t *testing.T, url, mode string, env ...string) *run {
	t.Helper()
	cwd := t.TempDir()
	cfg := fmt.Sprintf(`{"mcpServers":{"shepherd":{"type":"http","url":%q,"headers":{"Authorization":"Bearer ${SHEPHERD_AGENT_TOKEN}"}}}}`, url)
	r := &run{cwd: cwd, done: make(chan error, 1)}
	r.cmd = exec.Command(fakeClaude, "-p", "--verbose", "--output-format", "stream-json",
		"--permission-prompt-tool", Flag("shepherd"), "--mcp-config", cfg, "clean up")
	r.cmd.Dir = cwd
	r.cmd.Env = append(os.Environ(), append([]string{"FAKE_CLAUDE_MODE=" + mode, "SHEPHERD_AGENT_TOKEN=tok-run-1"}, env...)...)
	r.cmd.Stdout = &r.out
	r.cmd.Stderr = os.Stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	t.Cleanup(func() { r.cmd.Process.Kill(); <-r.done })
	return r
}

func (r *run) next(t *testing.T, reqs chan asked) asked {
	t.Helper()
	select {
	case a := <-reqs:
		return a
	case err := <-r.done:
		r.done <- err
		t.Fatalf("the run ended (%v) without asking:\n%s", err, r.out.String())
	case <-t.Context().Done():
		t.Fatal("never asked")
	}
	return asked{}
}

// wait waits for the run's end and returns its exit code and lines.
func (r *run) wait(t *testing.T) (int, []map[string]any) {
	t.Helper()
	var err error
	select {
	case err = <-r.done:
		r.done <- err
	case <-t.Context().Done():
		t.Fatal("the run never ended")
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(r.out.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not stream-json: %q", sc.Text())
		}
		lines = append(lines, m)
	}
	return code, lines
}

// toolResults are the tool_result items of the run, in order.
func toolResults(lines []map[string]any) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["type"] != "user" {
			continue
		}
		msg, _ := l["message"].(map[string]any)
		items, _ := msg["content"].([]any)
		for _, it := range items {
			if m, _ := it.(map[string]any); m["type"] == "tool_result" {
				out = append(out, m)
			}
		}
	}
	return out
}

func result(t *testing.T, lines []map[string]any) map[string]any {
	t.Helper()
	if len(lines) == 0 || lines[len(lines)-1]["type"] != "result" {
		t.Fatalf("no result line last: %v", lines)
	}
	return lines[len(lines)-1]
}

// Allow with a changed input runs the changed command; the run's own
// credential came in the header, ${VAR} filled in from its environment.
func TestFixtureAllowUpdated(t *testing.T) {
	url, reqs, _, _ := serve(t)
	r := start(t, url, "permission-tool")
	a := r.next(t, reqs)
	if a.r.ToolName != "Bash" || a.r.Input["command"] != "rm -rf build" || a.r.Input["description"] != "Remove the build folder" ||
		!strings.HasPrefix(a.r.ToolUseID, "toolu_") {
		t.Fatalf("request %+v", a.r)
	}
	if a.auth != "Bearer tok-run-1" {
		t.Fatalf("Authorization %q", a.auth)
	}
	if s := a.r.Summary(r.cwd); s != "Bash: rm -rf build" {
		t.Fatalf("summary %q", s)
	}
	a.answer <- AllowAnswer(map[string]any{"command": "echo changed > marker.txt", "description": "x"})
	code, lines := r.wait(t)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if b, err := os.ReadFile(filepath.Join(r.cwd, "marker.txt")); err != nil || string(b) != "changed\n" {
		t.Fatalf("the changed command did not run: %q %v", b, err)
	}
	tr := toolResults(lines)
	if len(tr) != 1 || tr[0]["is_error"] != false || tr[0]["content"] != "(Bash completed with no output)" {
		t.Fatalf("%v", tr)
	}
	res := result(t, lines)
	if res["subtype"] != "success" || len(res["permission_denials"].([]any)) != 0 {
		t.Fatalf("%v", res)
	}
}

// Deny with a message: the agent reads the message as the call's result,
// the call is listed in permission_denials, and the run goes on.
func TestFixtureDeny(t *testing.T) {
	url, reqs, _, _ := serve(t)
	r := start(t, url, "permission-tool")
	os.MkdirAll(filepath.Join(r.cwd, "build"), 0o755)
	a := r.next(t, reqs)
	a.answer <- DenyAnswer("Not now: the build is needed.")
	code, lines := r.wait(t)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(r.cwd, "build")); err != nil {
		t.Fatal("a denied command ran")
	}
	tr := toolResults(lines)
	if len(tr) != 1 || tr[0]["is_error"] != true || tr[0]["content"] != "Not now: the build is needed." {
		t.Fatalf("%v", tr)
	}
	res := result(t, lines)
	d := res["permission_denials"].([]any)
	if res["subtype"] != "success" || len(d) != 1 || d[0].(map[string]any)["tool_use_id"] != a.r.ToolUseID {
		t.Fatalf("%v", res)
	}
}

// Deny with interrupt stops the run: error_during_execution, exit 1.
func TestFixtureInterrupt(t *testing.T) {
	url, reqs, _, _ := serve(t)
	r := start(t, url, "permission-tool")
	r.next(t, reqs).answer <- InterruptAnswer("Stop here.")
	code, lines := r.wait(t)
	res := result(t, lines)
	if code != 1 || res["subtype"] != "error_during_execution" || res["is_error"] != true || len(res["permission_denials"].([]any)) != 1 {
		t.Fatalf("exit %d, %v", code, res)
	}
}

// Several calls are asked one at a time, each after the previous one ran;
// a slow answer is waited for.
func TestFixtureQueued(t *testing.T) {
	url, reqs, _, maxInFlight := serve(t)
	calls := `[{"tool":"Bash","input":{"command":"touch first","description":"1"}},` +
		`{"tool":"Bash","input":{"command":"touch second","description":"2"}},` +
		`{"tool":"Bash","input":{"command":"touch third","description":"3"}}]`
	r := start(t, url, "permission-tool", "FAKE_CLAUDE_CALLS="+calls)
	for i, name := range []string{"first", "second", "third"} {
		a := r.next(t, reqs)
		if a.r.Input["command"] != "touch "+name {
			t.Fatalf("call %d: %v", i, a.r.Input)
		}
		if i > 0 {
			// The one allowed before ran before this one was asked.
			if _, err := os.Stat(filepath.Join(r.cwd, "first")); err != nil {
				t.Fatalf("asked about %s before first ran", name)
			}
		}
		if name == "second" {
			a.answer <- DenyAnswer("no")
			continue
		}
		a.answer <- AllowAnswer(a.r.Input)
	}
	code, lines := r.wait(t)
	if code != 0 || maxInFlight.Load() != 1 {
		t.Fatalf("exit %d, %d asked at once", code, maxInFlight.Load())
	}
	if _, err := os.Stat(filepath.Join(r.cwd, "second")); err == nil {
		t.Fatal("a denied call ran")
	}
	if n := len(result(t, lines)["permission_denials"].([]any)); n != 1 {
		t.Fatalf("%d denials", n)
	}
}

// The agent's question reaches the tool with its options; the answer by
// AnswerQuestions is what the agent reads.
func TestFixtureQuestion(t *testing.T) {
	url, reqs, _, _ := serve(t)
	r := start(t, url, "ask-question")
	a := r.next(t, reqs)
	if !a.r.IsQuestion() || a.r.Summary("") != "your choice" {
		t.Fatalf("%+v", a.r)
	}
	qs, err := a.r.Questions()
	if err != nil || len(qs) != 1 || len(qs[0].Options) != 2 || qs[0].Options[1].Label != "SQLite" || qs[0].Header != "Database" {
		t.Fatalf("%+v %v", qs, err)
	}
	if _, err := AnswerQuestions(a.r, map[string]string{qs[0].Question: "MySQL"}, false); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a choice not offered: %v", err)
	}
	ans, err := AnswerQuestions(a.r, map[string]string{qs[0].Question: "SQLite"}, false)
	if err != nil {
		t.Fatal(err)
	}
	a.answer <- ans
	code, lines := r.wait(t)
	tr := toolResults(lines)
	want := `Your questions have been answered: "Which database should the service use?"="SQLite". You can now continue with these answers in mind.`
	if code != 0 || len(tr) != 1 || tr[0]["content"] != want {
		t.Fatalf("exit %d, %v", code, tr)
	}
}

// The integration's shape: rules allow some calls at once, the others are
// asked; what is asked and answered is what ran.
func TestFixtureRulesFirst(t *testing.T) {
	rules, err := permrules.ParseAll([]string{"Bash(touch allowed-1)", "Bash(touch allowed-2:*)"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []string
	srv := mcp.NewServer(&mcp.Implementation{Name: "shepherd", Version: "test"}, nil)
	AddTool(srv, ToolName, func(ctx context.Context, req *mcp.CallToolRequest, r Request) (Answer, error) {
		if _, ok := permrules.Match(rules, r.Call(), permrules.Context{}); ok {
			return AllowAnswer(r.Input), nil
		}
		mu.Lock()
		asked = append(asked, r.Input["command"].(string))
		mu.Unlock()
		return DenyAnswer("asked, and refused"), nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	calls := `[{"tool":"Bash","input":{"command":"touch allowed-1","description":"1"}},` +
		`{"tool":"Bash","input":{"command":"touch allowed-2 && touch sneaky","description":"2"}}]`
	r := start(t, hs.URL, "permission-tool", "FAKE_CLAUDE_CALLS="+calls)
	if code, _ := r.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(r.cwd, "allowed-1")); err != nil {
		t.Fatal("the rule's call did not run")
	}
	if _, err := os.Stat(filepath.Join(r.cwd, "sneaky")); err == nil {
		t.Fatal("a compound command passed by a prefix rule")
	}
	if len(asked) != 1 || asked[0] != "touch allowed-2 && touch sneaky" {
		t.Fatalf("asked %v", asked)
	}
}

// The run's end: the fixture's usage-limit modes print what the CLI prints
// (see also backend/usagelimit, which reads them).
func TestFixtureUsageLimit(t *testing.T) {
	cmd := exec.Command(fakeClaude, "-p", "--output-format", "stream-json", "x")
	cmd.Env = append(os.Environ(), "FAKE_CLAUDE_MODE=usage-limit", "FAKE_CLAUDE_RESETS_AT=1764319260", "TZ=UTC")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v", err)
	}
	s := string(out)
	for _, want := range []string{`"rate_limit_info":{"isUsingOverage":false,"rateLimitType":"five_hour","resetsAt":1764319260,"status":"rejected"}`,
		`"api_error_status":429`, `"error":"rate_limit"`, `"model":"<synthetic>"`} {
		if !strings.Contains(s, want) {
			t.Fatalf("no %s in\n%s", want, s)
		}
	}
	if !strings.Contains(s, `"result":"You've hit your session limit · resets `) || !strings.Contains(s, `(UTC)"`) {
		t.Fatal(s)
	}
}
