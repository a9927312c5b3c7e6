package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shepherd/backend/api"
)

// The hosts' verbs against a real engine with no SSH server to reach (the
// hosts' own packages test the connection; scripts/hosts-check.sh the
// whole with sshd): what they say, what they refuse, and that --host
// addresses every verb to that host.
func TestHostsVerbs(t *testing.T) {
	p := isolate(t)
	t.Setenv("HOME", t.TempDir()) // its ~/.ssh: no key, no known_hosts
	serve(t, p)

	if out := ok(t, "hosts"); !strings.Contains(out, "No hosts yet") {
		t.Fatalf("hosts: %q", out)
	}
	if out := ok(t, "hosts", "--json"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("hosts --json: %q", out)
	}
	fails(t, ExitError, "bad host name", "host", "add", "Bad/Name", "ssh://me@127.0.0.1:1")
	fails(t, ExitUsage, "--accept-key", "host", "add", "box", "ssh://me@127.0.0.1:1", "--accept-key", "md5:xx")
	fails(t, ExitUsage, "wrong number of arguments", "host", "add", "box")
	// Nothing listens there: refused at once, and nothing is kept.
	fails(t, ExitError, "could not be reached", "host", "add", "box", "ssh://me@127.0.0.1:1")
	if out := ok(t, "hosts"); !strings.Contains(out, "No hosts yet") {
		t.Fatalf("a host that was not reached was kept: %q", out)
	}
	fails(t, ExitError, "Host 'box' not found", "host", "rm", "box")
	// --host goes to that host's engine through this one: none here.
	fails(t, ExitError, "Host 'box' not found", "--host", "box", "projects")
	fails(t, ExitError, "Host 'box' not found", "ls", "p", "--host", "box")
	fails(t, ExitUsage, "does not apply", "--host", "box", "hosts")
	fails(t, ExitUsage, "absolute path on that host", "--host", "box", "add-project", "rel/path")
}

// A host in the registry that cannot be reached when the engine starts is
// listed unreachable since then, with why, and retried; its calls fail at
// once saying so.
func TestHostUnreachableAtStart(t *testing.T) {
	p := isolate(t)
	t.Setenv("HOME", t.TempDir())
	if err := os.MkdirAll(p.Data, 0o700); err != nil {
		t.Fatal(err)
	}
	reg := `{"hosts":[{"name":"box","url":"ssh://me@127.0.0.1:1","addedAt":"2026-01-02T03:04:05Z"}]}`
	if err := os.WriteFile(filepath.Join(p.Data, "hosts.json"), []byte(reg), 0o600); err != nil {
		t.Fatal(err)
	}
	serve(t, p)
	deadline := time.Now().Add(20 * time.Second)
	var hs []api.HostView
	for {
		okJSON(t, &hs, "hosts", "--json")
		if len(hs) == 1 && hs[0].State == api.HostUnreachable {
			break
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(hs)
			t.Fatalf("hosts: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if hs[0].Error == "" || hs[0].NextTry == nil {
		t.Fatalf("unreachable without why or next try: %+v", hs[0])
	}
	if out := ok(t, "hosts"); !strings.Contains(out, "box") || !strings.Contains(out, "unreachable since "+hs[0].Since.Local().Format("15:04")) {
		t.Fatalf("hosts: %q", out)
	}
	fails(t, ExitError, "host 'box' is unreachable since", "--host", "box", "projects")
	// --host and host rm complete the hosts' names, asking this computer's engine.
	for _, args := range [][]string{{"--host", ""}, {"--host", "bo"}, {"--host", "gpu", "host", "rm", ""}, {"host", "rm", "b"}} {
		if got, _ := completions(t, args...); len(got) != 1 || !strings.HasPrefix(got[0], "box\tunreachable since") {
			t.Errorf("__complete %q: %q", args, got)
		}
	}
	ok(t, "host", "rm", "box")
	if b, _ := os.ReadFile(filepath.Join(p.Data, "hosts.json")); !strings.Contains(string(b), `"hosts": []`) {
		t.Fatalf("hosts.json after rm: %s", b)
	}
	if out := ok(t, "hosts"); !strings.Contains(out, "No hosts yet") {
		t.Fatalf("after rm: %q", out)
	}
}

// A hosts.json that cannot be read keeps no engine from starting: it is
// moved aside and the engine starts with no hosts.
func TestHostsListBroken(t *testing.T) {
	p := isolate(t)
	if err := os.MkdirAll(p.Data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.Data, "hosts.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	serve(t, p)
	if out := ok(t, "hosts"); !strings.Contains(out, "No hosts yet") {
		t.Fatalf("hosts: %q", out)
	}
	aside, _ := filepath.Glob(filepath.Join(p.Data, "hosts.json.broken-*"))
	if len(aside) != 1 {
		t.Fatalf("moved aside: %v", aside)
	}
}
