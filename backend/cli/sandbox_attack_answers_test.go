//go:build linux

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shepherd/backend/permtool"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
	"shepherd/internal/testutil"
)

// Answers under attack (SPEC "Answers", threat model): a box that asks the
// user a question through Shepherd's permission tool cannot answer it
// itself, keep a rule, change its policy, nor keep a rule for another
// agent; its credential is refused on every owner operation, and its
// question waits for the user, who answers it. A box without @network
// cannot reach the permission tool at all.
func init() {
	registerAttacks("answers", attackAnswers)

	// ask:CMD asks Shepherd's permission tool, with the agent's own
	// credential, whether Bash CMD may run — in the background, printing
	// "ANSWERED <answer>" when it is answered — and returns once its own
	// record says it waits (or the call failed).
	registerOp("ask", func(val string) error {
		done := make(chan error, 1)
		go func() {
			text, err := askTool(val)
			if err == nil {
				fmt.Printf("ANSWERED %s\n", text)
			}
			done <- err
		}()
		self := "/v1/projects/" + os.Getenv(supervisor.EnvProjectID) + "/agents/" + os.Getenv(supervisor.EnvAgentID)
		deadline := time.Now().Add(testutil.Patience)
		for time.Now().Before(deadline) {
			select {
			case err := <-done:
				if err == nil {
					return fmt.Errorf("answered before the user saw it")
				}
				return err
			default:
			}
			if b, err := agentGet(self); err == nil {
				var r store.Record
				if json.Unmarshal(b, &r) == nil && strings.HasPrefix(r.Attention, "waiting: permission for Bash") {
					return nil
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		return fmt.Errorf("its record never said it waits")
	})
	// selfanswer:ACTION answers the agent's own question (allow, always).
	registerOp("selfanswer", func(val string) error {
		body := map[string]any{"action": val}
		if val == "always" {
			body["rule"] = "Bash"
		}
		_, err := agentAPI("POST", selfPath()+"/questions/answer", body)
		return err
	})
	// selfrule:SCOPE keeps a rule allowing every command for itself (agent)
	// or the project.
	registerOp("selfrule", func(val string) error {
		_, err := agentAPI("POST", selfPath()+"/rules", map[string]any{"rule": "Bash", "scope": val})
		return err
	})
	// selfpolicy sets its own policy (denied at once: a quick way out).
	registerOp("selfpolicy", func(string) error {
		_, err := agentAPI("PUT", selfPath()+"/answer-policy", map[string]any{"denyAfterMin": 1})
		return err
	})
	// otherrule:AGENT keeps a rule for another agent of the project.
	registerOp("otherrule", func(val string) error {
		_, err := agentAPI("POST", "/v1/projects/"+os.Getenv(supervisor.EnvProjectID)+"/agents/"+val+"/rules",
			map[string]any{"rule": "Bash", "scope": "agent"})
		return err
	})
	// otheranswer:AGENT answers another agent's question.
	registerOp("otheranswer", func(val string) error {
		_, err := agentAPI("POST", "/v1/projects/"+os.Getenv(supervisor.EnvProjectID)+"/agents/"+val+"/questions/answer",
			map[string]any{"action": "allow"})
		return err
	})
}

func selfPath() string {
	return "/v1/projects/" + os.Getenv(supervisor.EnvProjectID) + "/agents/" + os.Getenv(supervisor.EnvAgentID)
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// askTool calls the permission tool as a run of Claude Code does.
func askTool(cmd string) (string, error) {
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "attacker", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: os.Getenv(supervisor.EnvAPIURL) + permtool.Path,
		HTTPClient: &http.Client{Transport: bearer{os.Getenv(supervisor.EnvAgentToken)}}}, nil)
	if err != nil {
		return "", err
	}
	defer s.Close()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: permtool.ToolName,
		Arguments: map[string]any{"tool_name": "Bash", "input": map[string]any{"command": cmd}, "tool_use_id": "toolu_attack"}})
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", fmt.Errorf("tool error")
	}
	var text string
	for _, ct := range res.Content {
		if t, ok := ct.(*mcp.TextContent); ok {
			text += t.Text
		}
	}
	return text, nil
}

func attackAnswers(t *testing.T, a *arena) {
	t.Run("own question", func(t *testing.T) {
		ok(t, "create", "arena", "ruled", "--", "sleep", "1000")
		ok(t, "start", "arena", "ruled")
		a.spawn("selfish", []string{"@network"}, "ask:rm -rf /", "selfanswer:allow", "selfanswer:always", "selfrule:agent",
			"selfrule:project", "selfpolicy", "otherrule:ruled", "otherrule:users", "otheranswer:users", "wait")
		r := record(t, a.proj, "selfish")
		deadline := time.Now().Add(testutil.Patience)
		log := ""
		for !strings.Contains(log, "otheranswer:users") && time.Now().Before(deadline) {
			log = readLog(t, r.LogPath)
			time.Sleep(20 * time.Millisecond)
		}
		worked(t, log, "ask:rm -rf /")
		refused(t, log, "selfanswer:allow", "selfanswer:always", "selfrule:agent", "selfrule:project", "selfpolicy",
			"otherrule:ruled", "otherrule:users", "otheranswer:users")
		if strings.Contains(log, "ANSWERED") {
			t.Fatalf("the question was answered by the box:\n%s", log)
		}
		// Nothing kept, the question still waits for the user.
		if out := ok(t, "rules", "arena", "selfish"); !strings.Contains(out, "No rules of project.") || !strings.Contains(out, "No rules of selfish.") ||
			!strings.Contains(out, "wait for the answer") {
			t.Errorf("rules after the attack:\n%s", out)
		}
		if out := ok(t, "rules", "arena", "ruled"); !strings.Contains(out, "No rules of ruled.") {
			t.Errorf("rules of another agent after the attack:\n%s", out)
		}
		if r := record(t, a.proj, "selfish"); r.Attention != "waiting: permission for Bash: rm -rf /" {
			t.Fatalf("attention %q", r.Attention)
		}
		ok(t, "deny", "arena", "selfish", "-m", "no")
		deadline = time.Now().Add(testutil.Patience)
		for !strings.Contains(log, "ANSWERED") && time.Now().Before(deadline) {
			log = readLog(t, r.LogPath)
			time.Sleep(20 * time.Millisecond)
		}
		if !strings.Contains(log, `ANSWERED {"behavior":"deny","message":"no"}`) {
			t.Fatalf("the user's answer did not reach the box:\n%s", log)
		}
		ok(t, "stop", "arena", "selfish")
		ok(t, "stop", "arena", "ruled")
	})
	// Without @network the box has no way to the engine's API: the
	// permission tool is out of reach (so is every hook).
	t.Run("no network", func(t *testing.T) {
		log := a.run("offline", nil, "ask:rm -rf /")
		refused(t, log, "ask:rm -rf /")
	})
}
