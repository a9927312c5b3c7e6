package engine

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"shepherd/backend/api"
	"shepherd/backend/claudehooks"
	"shepherd/backend/shim"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
	"shepherd/internal/testutil"
)

// An engine on a Unix socket (a host's) gives its Claude Code agents their
// hooks all the same: as command hooks (shepherd-engine hook claude) that
// post to the socket with the agent's credential. Without them a Claude
// agent on a host would never be seen waiting for a permission. The API
// client reaches such an engine by its unix:// address.
func TestSocketEngineAgentsPostTheirHooks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the engine, the shim and the fixture CLI")
	}
	p := testutil.Isolate(t)
	bin := t.TempDir()
	build := func(out, pkg string) {
		t.Helper()
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, out), pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, b)
		}
	}
	build("shepherd-engine", "shepherd/backend/cli/cmd/shepherd-engine")
	build("claude", "shepherd/backend/supervisor/testdata/fakeclaude")
	if b, err := shim.BuildCommand(filepath.Join(bin, "shepherd-shim")).CombinedOutput(); err != nil {
		t.Fatalf("build the shim: %v\n%s", err, b)
	}
	was := claudehooks.HookCommand
	claudehooks.HookCommand = func() string { return "'" + filepath.Join(bin, "shepherd-engine") + "' hook claude" }
	t.Cleanup(func() { claudehooks.HookCommand = was })

	l := zerolog.Nop()
	h, err := Start(context.Background(), Options{Socket: true, Paths: &p, Console: io.Discard, Logger: &l,
		ShimPath: filepath.Join(bin, "shepherd-shim")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	c := api.NewClient(h.Info) // unix://…
	ctx := context.Background()
	dir := t.TempDir()
	proj, err := api.Call(ctx, c, api.AddProject, api.AddProjectIn{Body: api.ProjectInput{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	pid := proj.Body.ID
	stream := []string{"-p", "--verbose", "--output-format", "stream-json", "clean the build"}
	if _, err := api.Call(ctx, c, api.CreateAgent, api.CreateAgentIn{Project: pid, Body: supervisor.AgentSpec{
		ID: "ask", Command: filepath.Join(bin, "claude"), Args: stream, Profile: store.ProfileClaudeJSON, GraceSec: 1,
		Env: map[string]string{"FAKE_CLAUDE_MODE": "permission"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.Call(ctx, c, api.StartAgent, api.AgentIn{Project: pid, Agent: "ask"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = api.Call(ctx, c, api.StopAgent, api.StopAgentIn{Project: pid, Agent: "ask"}) })
	var last *store.Record
	testutil.Eventually(t, "the agent waiting for a permission, told by its hook over the socket", func() bool {
		r, err := api.Call(ctx, c, api.GetAgent, api.AgentIn{Project: pid, Agent: "ask"})
		if err != nil {
			return false
		}
		last = r.Body
		return last.Activity != nil && last.Activity.Waiting != ""
	})
	if !strings.HasPrefix(last.Activity.Waiting, "permission for Bash") {
		t.Fatalf("waiting: %q", last.Activity.Waiting)
	}
}
