package cli

import (
	"errors"
	"os"
	"path/filepath"
	"shepherd/backend/api"
	"strings"
	"testing"

	"shepherd/backend/store"
)

// The sandbox from the CLI: create with --permissions, bad tags named, the
// grants in get, sandbox --permissions / --off, support in status, and the
// API's answers for a bad tag (400) and a grant beyond the caller's (403).
func TestSandboxCLI(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	var proj store.Project
	okJSON(t, &proj, "add-project", dir, "--name", "sb")

	fails(t, ExitError, `"@bogus": unknown tag`, "create", "sb", "x", "--permissions", "@network,@bogus", "--", "/bin/true")
	fails(t, ExitError, `"@write:rel": the folder must be an absolute path`, "create", "sb", "x", "--permissions", "@write:rel", "--", "/bin/true")
	if got := ok(t, "ls", "sb"); strings.Contains(got, " x ") {
		t.Fatalf("a refused agent was created:\n%s", got)
	}

	ok(t, "create", "sb", "a", "--permissions", "@network, @write:"+out, "--", "/bin/true")
	if got := ok(t, "get", "sb", "a"); !strings.Contains(got, "Sandbox:") || !strings.Contains(got, "sandboxed: network, writes in "+out) {
		t.Fatalf("get:\n%s", got)
	}
	ok(t, "create", "sb", "b", "--sandbox", "--", "/bin/true")
	if got := ok(t, "get", "sb", "b"); !strings.Contains(got, "sandboxed: no network, no writes but its log") {
		t.Fatalf("get b:\n%s", got)
	}
	if got := ok(t, "sandbox", "sb", "b", "--off"); !strings.Contains(got, "not sandboxed") {
		t.Fatalf("sandbox --off: %s", got)
	}
	if _, err := os.Stat(filepath.Join(p.Data, "projects", proj.ID, "agents", "b", "sandbox.json")); !os.IsNotExist(err) {
		t.Fatalf("sandbox.json left after --off: %v", err)
	}
	if got := ok(t, "sandbox", "sb", "b", "--permissions", "@write:"+out); !strings.Contains(got, "writes in "+out) {
		t.Fatalf("sandbox --permissions: %s", got)
	}
	fails(t, ExitUsage, "either --permissions", "sandbox", "sb", "b")
	if got := ok(t, "status"); !strings.Contains(got, "Sandbox: Landlock ABI") {
		t.Fatalf("status:\n%s", got)
	}

	c := clientOf(t, p)
	_, err := c.JSON(t.Context(), "POST", "/v1/projects/"+proj.ID+"/agents",
		map[string]any{"id": "c", "command": "/bin/true", "permissions": []string{"@write:/no/such"}}, nil)
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Name != "ValidationError" || !strings.Contains(ae.Message, "@write:/no/such") {
		t.Fatalf("bad tag over the API: %v", err)
	}
	_, err = c.JSON(t.Context(), "POST", "/v1/projects/"+proj.ID+"/agents",
		map[string]any{"id": "c", "command": "/bin/true", "permissions": []string{"@network"},
			"caller": map[string]string{"projectId": proj.ID, "agentId": "b"}}, nil)
	// Who calls is never read from a body: a "caller" field is refused.
	if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(ae.Message, `unknown field "caller"`) {
		t.Fatalf("a caller declared in the body: %v", err)
	}
}
