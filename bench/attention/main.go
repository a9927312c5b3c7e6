// Command attention measures how fast an agent that waits for the user
// reaches Needs you (SPEC "Attention": under 2 s): a real engine with its
// API, a real agent, and its hook posted to POST /v1/hooks/claude with the
// agent's own credential, as Claude Code posts it; the clock stops when a
// client of GET /v1/events (what a window listens to) receives the agent's
// state with its attention reason. It prints the median and the max; the
// same for a question of Shepherd's permission tool and its answer
// (answers.go).
//
//	go run ./bench/attention [-n 50]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"shepherd/backend/api"
	"shepherd/backend/cli"
	"shepherd/backend/shim"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

func main() {
	n := flag.Int("n", 50, "hooks to time")
	flag.Parse()
	if err := run(*n); err != nil {
		fmt.Fprintln(os.Stderr, "attention:", err)
		os.Exit(1)
	}
}

func run(n int) error {
	dir, err := os.MkdirTemp("", "shepherd-bench-attention-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, v := range []string{"XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"} {
		os.Setenv(v, filepath.Join(dir, strings.ToLower(v)))
	}
	shimPath := filepath.Join(dir, "shepherd-shim")
	if out, err := shim.BuildCommand(shimPath).CombinedOutput(); err != nil {
		return fmt.Errorf("build the shim: %v\n%s", err, out)
	}
	quiet := zerolog.Nop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, err := cli.Start(ctx, cli.ServeOptions{ShimPath: shimPath, Logger: &quiet, Console: io.Discard})
	if err != nil {
		return err
	}
	defer h.Close()
	c := api.NewClient(h.Info)
	var proj store.Project
	if _, err := c.JSON(ctx, "POST", "/v1/projects", map[string]string{"path": dir, "name": "bench"}, &proj); err != nil {
		return err
	}
	spec := supervisor.AgentSpec{ID: "asker", Command: "sleep", Args: []string{"600"}}
	if _, err := c.JSON(ctx, "POST", "/v1/projects/"+proj.ID+"/agents", spec, nil); err != nil {
		return err
	}
	var rec store.Record
	if _, err := c.JSON(ctx, "POST", "/v1/projects/"+proj.ID+"/agents/asker/start", nil, &rec); err != nil {
		return err
	}
	defer c.JSON(context.Background(), "POST", "/v1/projects/"+proj.ID+"/agents/asker/stop", map[string]int{"graceSec": 1}, nil)
	token, err := agentToken(rec.PID)
	if err != nil {
		return err
	}

	// The window's side: the engine's event stream, each agent:state with
	// its attention passed on.
	seen := make(chan string, 16)
	go c.Stream(ctx, api.StreamIn{}, func(ev api.StreamEvent) error {
		if ev.Name == supervisor.EventAgentState {
			var r store.Record
			if json.Unmarshal(ev.Data, &r) == nil && r.ID == "asker" && r.Attention != "" {
				seen <- r.Attention
			}
		}
		return nil
	})
	time.Sleep(200 * time.Millisecond) // the stream is open

	// Hooks are rate-limited per agent: no more than its burst at once.
	hooks := min(n, supervisor.HookBurst)
	var lat []time.Duration
	for i := range hooks {
		tool := fmt.Sprintf("Tool%d", i)
		body, _ := json.Marshal(map[string]any{"hook_event_name": "PermissionRequest", "session_id": "s", "cwd": dir,
			"transcript_path": filepath.Join(dir, "t.jsonl"), "tool_name": tool, "tool_input": map[string]any{}})
		req, _ := http.NewRequest("POST", h.Info.URL+"/v1/hooks/claude", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("hook answered %s", resp.Status)
		}
		want := "waiting: permission for " + tool
		timeout := time.After(10 * time.Second)
	wait:
		for {
			select {
			case got := <-seen:
				if got == want {
					break wait
				}
			case <-timeout:
				return fmt.Errorf("%q never reached the event stream", want)
			}
		}
		lat = append(lat, time.Since(start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Printf("hook POST → Needs you (the window's event stream), %d hooks: median %s, max %s (target ≤ 2 s)\n",
		hooks, lat[len(lat)/2].Round(10*time.Microsecond), lat[len(lat)-1].Round(10*time.Microsecond))
	return answers(ctx, c, h.Info.URL, proj.ID, token, seen, min(n, supervisor.QuestionBurst))
}

// agentToken reads the credential the engine gave the agent's run from its
// environment (the bench runs as the same user).
func agentToken(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return "", err
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok && k == "SHEPHERD_AGENT_TOKEN" {
			return v, nil
		}
	}
	return "", fmt.Errorf("pid %d has no SHEPHERD_AGENT_TOKEN", pid)
}
