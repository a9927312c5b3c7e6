package main

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shepherd/backend/api"
	"shepherd/backend/permtool"
	"shepherd/backend/supervisor"
)

// answers times Shepherd's permission tool (SPEC "Answers"), called as
// Claude Code calls it (MCP over streamable HTTP, the run's credential):
// question → Needs you is from the call to the agent's state with the
// question on the window's event stream (target ≤ 50 ms median); answer →
// the agent continues is from the owner's answer (POST …/questions/answer)
// to the tool's result in the caller's hands (target ≤ 100 ms median).
func answers(ctx context.Context, c *api.Client, url, projectID, token string, seen <-chan string, n int) error {
	mc := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "bench"}, nil)
	s, err := mc.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + permtool.Path,
		HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	var asked, answered []time.Duration
	for i := range n {
		cmd := fmt.Sprintf("rm -rf build-%d", i)
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: permtool.ToolName,
				Arguments: map[string]any{"tool_name": "Bash", "input": map[string]any{"command": cmd}, "tool_use_id": fmt.Sprint("toolu_", i)}})
			if err == nil && res.IsError {
				err = fmt.Errorf("the tool failed")
			}
			done <- err
		}()
		want := "waiting: permission for Bash: " + cmd
		timeout := time.After(10 * time.Second)
	wait:
		for {
			select {
			case got := <-seen:
				if got == want {
					break wait
				}
			case err := <-done:
				return fmt.Errorf("answered before it was asked: %v", err)
			case <-timeout:
				return fmt.Errorf("%q never reached the event stream", want)
			}
		}
		asked = append(asked, time.Since(start))
		t := time.Now()
		if _, err := api.Call(ctx, c, api.AnswerQuestion, api.AnswerIn{Project: projectID, Agent: "asker",
			Body: supervisor.Answer{Action: supervisor.AnswerAllow}}); err != nil {
			return err
		}
		if err := <-done; err != nil {
			return err
		}
		answered = append(answered, time.Since(t))
	}
	for _, m := range []struct {
		what   string
		lat    []time.Duration
		target string
	}{{"permission question → Needs you (the window's event stream)", asked, "≤ 50 ms"},
		{"answer → the agent's call answered (POST …/questions/answer to the tool's result)", answered, "≤ 100 ms"}} {
		sort.Slice(m.lat, func(i, j int) bool { return m.lat[i] < m.lat[j] })
		fmt.Printf("%s, %d questions: median %s, max %s (target %s)\n", m.what, n,
			m.lat[len(m.lat)/2].Round(10*time.Microsecond), m.lat[len(m.lat)-1].Round(10*time.Microsecond), m.target)
	}
	return nil
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
