//go:build linux

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"shepherd/backend/api"
	"shepherd/backend/procid"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// A box cannot exhaust what the user needs, its figures are claims, the
// engine checks a request before any side effect, and its text is inert on
// a terminal (SPEC, threat model) — attacked from inside real sandboxed
// agents, as root and as an unprivileged uid.
func init() {
	registerAttacks("disk", attackDisk)

	// flood:N writes N bytes of output, then says so.
	registerOp("flood", func(val string) error {
		n, _ := strconv.Atoi(val)
		line := append(bytes.Repeat([]byte("x"), 64<<10-1), '\n')
		for n > 0 {
			k := min(n, len(line))
			if _, err := os.Stdout.Write(line[:k]); err != nil {
				return err
			}
			n -= k
		}
		return nil
	})
	// hookflood:N posts N hooks of a megabyte (10^6 bytes) each with the
	// agent's own credential: it "works" if the engine took any.
	registerOp("hookflood", func(val string) error {
		n, _ := strconv.Atoi(val)
		body := map[string]any{"hook_event_name": "PermissionRequest", "session_id": "s", "cwd": "/", "transcript_path": "/t",
			"tool_name": strings.Repeat("A", 1_000_000-200), "tool_input": map[string]any{}}
		return hookLoop(n, body)
	})
	// hookspam:N posts N small hooks as fast as it can: it "works" if the
	// engine took every one.
	registerOp("hookspam", func(val string) error {
		n, _ := strconv.Atoi(val)
		body := map[string]any{"hook_event_name": "Notification", "notification_type": "idle_prompt", "message": strings.Repeat("spam ", 50)}
		taken, refused := 0, map[int]int{}
		for i := 0; i < n; i++ {
			code, err := agentAPI("POST", "/v1/hooks/claude", body)
			if err != nil && code == 0 {
				return err
			}
			if code/100 == 2 {
				taken++
			} else {
				refused[code]++
			}
		}
		if len(refused) > 0 {
			return fmt.Errorf("%d taken, refused %v", taken, refused)
		}
		return nil
	})
	// claim:ID,COST,MAXUSD,SUBTYPE,DIR creates (and starts) a child agent
	// through the API whose output is a Claude result line with that cost
	// (its CLI's state in DIR, a folder the attacker may grant).
	registerOp("claim", func(val string) error {
		f := strings.Split(val, ",")
		if len(f) != 5 {
			return fmt.Errorf("claim wants ID,COST,MAXUSD,SUBTYPE,DIR")
		}
		cost, _ := strconv.ParseFloat(f[1], 64)
		max, _ := strconv.ParseFloat(f[2], 64)
		res, _ := json.Marshal(map[string]any{"type": "result", "subtype": f[3], "is_error": f[3] != "success", "num_turns": 1,
			"total_cost_usd": cost, "session_id": "s-" + f[0], "result": "done"})
		exit := "0"
		if f[3] != "success" {
			exit = "1"
		}
		spec := map[string]any{"id": f[0], "command": "/bin/sh", "args": []string{"-c", "echo '" + string(res) + "'; exit " + exit},
			"profile": "claude-stream-json", "maxBudgetUsd": max, "graceSec": 1, "env": map[string]string{"CLAUDE_CONFIG_DIR": f[4]}}
		if _, err := agentAPI("POST", "/v1/projects/"+os.Getenv(supervisor.EnvProjectID)+"/agents", spec); err != nil {
			return err
		}
		_, err := agentAPI("POST", "/v1/projects/"+os.Getenv(supervisor.EnvProjectID)+"/agents/"+f[0]+"/start", nil)
		return err
	})
	// waitfor:ID,STATUS waits (15 s at most) for an agent it created to
	// have that status.
	registerOp("waitfor", func(val string) error {
		id, want, _ := strings.Cut(val, ",")
		var r store.Record
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			b, err := agentGet("/v1/projects/" + os.Getenv(supervisor.EnvProjectID) + "/agents/" + id)
			if err == nil && json.Unmarshal(b, &r) == nil && string(r.Status) == want {
				return nil
			}
		}
		return fmt.Errorf("%s is %s, not %s", id, r.Status, want)
	})
	// act:VERB,ID posts …/agents/ID/VERB with the agent's own credential.
	registerOp("act", func(val string) error {
		verb, id, _ := strings.Cut(val, ",")
		_, err := agentAPI("POST", "/v1/projects/"+os.Getenv(supervisor.EnvProjectID)+"/agents/"+id+"/"+verb, nil)
		return err
	})
	// configdir:ID,DIR asks for a Claude agent whose CLI keeps its state in
	// DIR (CLAUDE_CONFIG_DIR), a folder the attacker does not hold.
	registerOp("configdir", func(val string) error {
		id, dir, _ := strings.Cut(val, ",")
		spec := map[string]any{"id": id, "command": "/bin/true", "profile": "claude-stream-json",
			"env": map[string]string{"CLAUDE_CONFIG_DIR": dir}}
		_, err := agentAPI("POST", "/v1/projects/"+os.Getenv(supervisor.EnvProjectID)+"/agents", spec)
		return err
	})
	// escapes: prints what a terminal acts on — a title, a clear screen, a
	// hidden link, a C1 CSI.
	registerOp("escapes", func(string) error {
		_, err := os.Stdout.WriteString("\x1b]0;pwned\x07\x1b[2J\x1b[Hclick \x1b]8;;http://evil.example\x1b\\here\x1b]8;;\x1b\\ \u009b31mred\n")
		return err
	})
}

// agentAPI sends a request to the engine with this agent's own credential;
// it returns the status and, on anything but 2xx, an error with the answer.
func agentAPI(method, path string, body any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, os.Getenv(supervisor.EnvAPIURL)+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+os.Getenv(supervisor.EnvAgentToken))
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	return resp.StatusCode, nil
}

func agentGet(path string) ([]byte, error) {
	req, _ := http.NewRequest("GET", os.Getenv(supervisor.EnvAPIURL)+path, nil)
	req.Header.Set("Authorization", "Bearer "+os.Getenv(supervisor.EnvAgentToken))
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// hookLoop posts body n times; an error unless the engine took one.
func hookLoop(n int, body any) error {
	taken, refused := 0, map[int]int{}
	for i := 0; i < n; i++ {
		code, err := agentAPI("POST", "/v1/hooks/claude", body)
		if err != nil && code == 0 {
			return err
		}
		if code/100 == 2 {
			taken++
		} else {
			refused[code]++
		}
	}
	if taken == 0 {
		return fmt.Errorf("every hook refused: %v", refused)
	}
	return nil
}

// logEnd is the offset just past an agent's log, as the log API says it.
func logEnd(t *testing.T, c *api.Client, project, agent string) int64 {
	t.Helper()
	resp, err := c.Do(t.Context(), "GET", "/v1/projects/"+project+"/agents/"+agent+"/log?tail=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.ParseInt(resp.Header.Get(api.HeaderLogOffset), 10, 64)
	return n
}

// logBytes is what an agent's log takes on disk: the log and its rotated
// files.
func logBytes(t *testing.T, logPath string) int64 {
	t.Helper()
	files, _ := filepath.Glob(logPath + "*")
	var n int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// runIn is arena.run judged in the attack's own test (a failure ends that
// attack only).
func runIn(t *testing.T, a *arena, id string, perms []string, ops ...string) string {
	t.Helper()
	a.spawn(id, perms, ops...)
	r := waitStatus(t, a.proj, id, "completed", "failed")
	b, err := os.ReadFile(r.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func attackDisk(t *testing.T, a *arena) {
	// Settings for one attack (an error is reported, the attack still runs).
	settings := func(t *testing.T, args ...string) {
		t.Helper()
		if r := cli(t, append([]string{"settings", "arena"}, args...)...); r.code != 0 {
			t.Errorf("settings %v: %s", args, r)
		}
	}

	// A no-grant agent floods its output: its log stays within the cap
	// (1 MiB a file, 1 older file kept), every byte counted in the log's
	// offsets, and the engine keeps answering.
	t.Run("flood", func(t *testing.T) {
		settings(t, "--logMaxMiB", "1", "--logKeep", "1")
		defer settings(t, "--logMaxMiB", "10", "--logKeep", "5")
		const flood = 24 << 20
		runIn(t, a, "flooder", nil, "flood:"+strconv.Itoa(flood))
		r := record(t, a.proj, "flooder")
		if n := logBytes(t, r.LogPath); n > 2<<20+4096 {
			t.Errorf("the flooder's log takes %d bytes, over its cap of 2 MiB", n)
		}
		if got := logEnd(t, a.c, a.proj, "flooder"); got < flood {
			t.Errorf("the log's offsets count %d bytes of %d written", got, flood)
		}
		if tail := ok(t, "logs", "arena", "flooder", "-n", "1"); !strings.Contains(tail, "OK flood:") {
			t.Errorf("the flooder's last line is not the last line of its log: %.200q", tail)
		}
		if r := record(t, a.proj, "users"); r.Status != "running" {
			t.Fatalf("the user's agent is %s", r.Status)
		}
		var st api.EngineStatus
		if _, err := a.c.JSON(t.Context(), "GET", "/v1/engine", nil, &st); err != nil {
			t.Fatalf("the engine does not answer after the flood: %v", err)
		}
	})

	// Hook posts of a megabyte in a loop are refused (413, then 429), a
	// burst of small ones is cut off (429), and events.jsonl stays small.
	t.Run("hooks", func(t *testing.T) {
		events := filepath.Join(a.p.Data, "projects", a.proj, "events.jsonl")
		before := logBytes(t, events)
		log := runIn(t, a, "hooker", netModes[1].perms(a), "hookflood:40", "hookspam:200")
		refused(t, log, "hookflood:40", "hookspam:200")
		if !strings.Contains(log, "429") {
			t.Errorf("no hook was refused for its rate:\n%s", log)
		}
		if grew := logBytes(t, events) - before; grew > 256<<10 {
			t.Errorf("events.jsonl grew by %d bytes from one agent's hooks", grew)
		}
	})

	// A box's figures are claims: a sandboxed agent with @network creates a
	// child through the API whose output claims $999999; the project's
	// daily budget is not reached, the user's agent is not paused, starts
	// are not held. A child its own budget paused stays paused: its
	// creator's unpause, resume or start is refused.
	t.Run("claims", func(t *testing.T) {
		settings(t, "--dailyBudgetUsd", "10")
		defer settings(t, "--dailyBudgetUsd", "0")
		liar, spender := "claim:liar,999999,0,success,"+a.granted, "claim:spender,2,1,error_max_budget_usd,"+a.granted
		log := runIn(t, a, "claimer", netModes[1].perms(a), liar, "waitfor:liar,completed", spender, "waitfor:spender,paused",
			"act:unpause,spender", "act:resume,spender", "act:start,spender")
		worked(t, log, liar, "waitfor:liar,completed", spender, "waitfor:spender,paused")
		refused(t, log, "act:unpause,spender", "act:resume,spender", "act:start,spender")
		if !strings.Contains(log, "only the user answers a budget pause") {
			t.Errorf("the refusal does not say why:\n%s", log)
		}
		var v supervisor.ProjectView
		if _, err := a.c.JSON(t.Context(), "GET", "/v1/projects/"+a.proj, nil, &v); err != nil {
			t.Fatal(err)
		}
		if v.CostToday != 0 || v.BudgetHeld {
			t.Errorf("the child's claim counted for the project: today $%v, held %v", v.CostToday, v.BudgetHeld)
		}
		if r := record(t, a.proj, "users"); r.Status != "running" {
			t.Errorf("the user's agent is %s after the claim", r.Status)
		}
		if r := record(t, a.proj, "spender"); r.Status != "paused" || r.BudgetPause == "" {
			t.Errorf("the budget-paused child is %s (%q)", r.Status, r.BudgetPause)
		}
		ok(t, "create", "arena", "after-claim", "--", "sleep", "1000")
		ok(t, "start", "arena", "after-claim")
		if r := record(t, a.proj, "after-claim"); r.Status != "running" {
			t.Errorf("a start after the claim is %s (held?)", r.Status)
		}
		var tree struct{ TreeTotals *store.RunFigures }
		okJSON(t, &tree, "get", "arena", "claimer")
		if tree.TreeTotals == nil || tree.TreeTotals.CostUSD == nil || *tree.TreeTotals.CostUSD != 999999+2 {
			t.Errorf("the claims are not shown as the creator's tree's: %+v", tree.TreeTotals)
		}
		ok(t, "stop", "arena", "after-claim")
		ok(t, "budget", "arena", "spender", "stop") // the user answers it
	})

	// A request naming a new CLAUDE_CONFIG_DIR outside the caller's holds is
	// refused, and leaves no folder behind.
	t.Run("checks first", func(t *testing.T) {
		dir := filepath.Join(a.outside, "made-"+strconv.Itoa(os.Getpid()), "claude")
		log := runIn(t, a, "namer", netModes[1].perms(a), "configdir:named,"+dir)
		refused(t, log, "configdir:named,"+dir)
		if !strings.Contains(log, "cannot grant @write:") {
			t.Errorf("not refused for its grant:\n%s", log)
		}
		if _, err := os.Stat(filepath.Dir(dir)); !os.IsNotExist(err) {
			t.Errorf("the refused request made %s (%v)", filepath.Dir(dir), err)
		}
	})

	// What an agent prints to act on a terminal is shown escaped by
	// `shepherd logs` on a terminal (a pseudo-terminal here).
	t.Run("terminal", func(t *testing.T) {
		runIn(t, a, "painter", nil, "escapes:")
		pt := openPTY(t)
		var errb bytes.Buffer
		if code := Main(context.Background(), []string{"logs", "arena", "painter"}, pt.tty, &errb); code != 0 {
			t.Fatalf("logs: %d %s", code, errb.String())
		}
		out := pt.output()
		if strings.ContainsAny(out, "\x1b\x07") || strings.Contains(out, "\u009b") {
			t.Errorf("control sequences reached the terminal: %q", out)
		}
		if !strings.Contains(out, `\x1b]0;pwned\x07`) {
			t.Errorf("not shown escaped: %q", out)
		}
	})

	t.Run("full disk", func(t *testing.T) { fullDisk(t) })
}

// fullDisk runs an engine of its own whose data folder is a small tmpfs
// (mounted in a mount namespace of the engine's: as root; as another uid,
// in a user namespace too), lets a no-grant agent fill it through its
// output, and stops it: the stop still ends the agent and answers, and the
// engine raises its low-space alert.
func fullDisk(t *testing.T) {
	p := isolate(t)
	for _, d := range []string{p.Data, filepath.Dir(p.EngineFile())} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dataHome := filepath.Dir(p.Data)
	// The shell mounts the tmpfs over the data home in its own mount
	// namespace, then becomes the engine.
	// (Private first: nothing of it propagates back to the host's mounts.)
	eng := exec.Command("/bin/sh", "-c", `mount --make-rprivate / && mount -t tmpfs -o size=16m,mode=0700 shepherd-test "$0" && exec "$1" serve`, dataHome, self)
	eng.Env = append(os.Environ(), asCLI+"=1")
	var console syncBuf
	eng.Stdout, eng.Stderr = &console, &console
	eng.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Cloneflags: syscall.CLONE_NEWNS}
	if os.Geteuid() != 0 {
		eng.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		eng.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		eng.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
		eng.SysProcAttr.GidMappingsEnableSetgroups = false
	}
	if err := eng.Start(); err != nil {
		t.Skipf("cannot start an engine in a mount namespace of its own: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = eng.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			_ = eng.Process.Kill() // ours, by its pid
			<-done
		}
	})
	var c *api.Client
	for deadline := time.Now().Add(15 * time.Second); c == nil; time.Sleep(20 * time.Millisecond) {
		if info, err := api.ReadEngineInfo(p.EngineFile()); err == nil {
			cl := api.NewClient(info)
			if _, err := cl.JSON(t.Context(), "GET", "/v1/engine", nil, nil); err == nil {
				c = cl
			}
		}
		select {
		case <-done:
			t.Fatalf("the engine on a tmpfs ended:\n%s", console.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the engine on a tmpfs did not answer:\n%s", console.String())
		}
	}
	proj := t.TempDir()
	os.Chmod(proj, 0o755)
	ok(t, "add-project", proj, "--name", "full")
	ok(t, "settings", "full", "--watchdogIntervalSec", "1")
	ok(t, "create", "full", "victim", "--", "sleep", "1000")
	ok(t, "start", "full", "victim")
	body := map[string]any{"id": "filler", "command": self, "args": []string{"flood:" + strconv.Itoa(64<<20), "wait:"},
		"permissions": []string{}, "env": map[string]string{asAttacker: "1", asCLI: ""}} // the engine runs as the CLI; its agent must not
	if _, err := c.JSON(t.Context(), "POST", "/v1/projects/"+store.ProjectID(proj)+"/agents", body, nil); err != nil {
		t.Fatal(err)
	}
	ok(t, "start", "full", "filler")
	filler := waitStatus(t, "full", "filler", "running")
	victim := record(t, "full", "victim")
	// The disk fills: the engine sees it on its next wakeup.
	var st struct {
		Alerts []struct {
			Kind      string
			FreeBytes uint64
		}
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := c.JSON(t.Context(), "GET", "/v1/engine", nil, &st); err == nil && len(st.Alerts) > 0 && st.Alerts[0].FreeBytes < 64<<10 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("no low-space alert with the data folder full: %+v", st)
			break
		}
	}
	// Full indeed: a new agent's record cannot be written.
	if res := cli(t, "create", "full", "more", "--", "true"); res.code == 0 || !strings.Contains(res.stderr, "no space left") {
		t.Errorf("a create on the full disk: %s", res)
	}
	// Stop: it answers, and the agent is gone — its whole box.
	for _, r := range []store.Record{filler, victim} {
		res := cli(t, "stop", "full", r.ID, "--grace", "2")
		if res.code != 0 {
			t.Errorf("stop %s on a full disk: %s", r.ID, res)
		}
		if procid.Alive(r.PID) && procid.Compare(r.PID, r.ProcessStartTime) == procid.Same {
			t.Errorf("%s (pid %d) still runs after its stop", r.ID, r.PID)
			_ = syscall.Kill(-r.PID, syscall.SIGKILL)
		}
	}
	if r := record(t, "full", "filler"); r.Status != "stopped" {
		t.Errorf("the filler is %s after its stop: %s %s %v %q", r.Status, r.ExitReason, r.Signal, r.ExitCode, r.Error)
		t.Logf("console:\n%s", console.String())
	}
	ok(t, "quit")
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Errorf("the engine on a tmpfs did not quit")
	}
}
