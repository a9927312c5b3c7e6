package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"shepherd/internal/testutil"
)

// A webhook channel gets the test send and the engine's notifications of
// what enters Needs you (a failure), in its format; its secret is masked
// wherever it is shown.
func TestNotifyWebhooks(t *testing.T) {
	var mu sync.Mutex
	var got []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		json.Unmarshal(b, &m)
		m["auth"] = r.Header.Get("Authorization")
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
	}))
	defer srv.Close()
	p := isolate(t)
	serve(t, p)
	if out := ok(t, "notify"); !strings.Contains(out, "No webhook channels") {
		t.Fatalf("notify said %q", out)
	}
	fails(t, 1, "format", "notify", "add", "bad", srv.URL, "--format", "telegram")
	out := ok(t, "notify", "add", "desk", srv.URL+"/hooks/s3cr3t-value?token=abc", "--header", "Authorization: Bearer xyz")
	if strings.Contains(out, "s3cr3t") || strings.Contains(out, "abc") {
		t.Fatalf("add showed a secret: %q", out)
	}
	ls := ok(t, "notify", "ls")
	if strings.Contains(ls, "s3cr3t") || strings.Contains(ls, "xyz") || !strings.Contains(ls, "desk") {
		t.Fatalf("ls:\n%s", ls)
	}
	if out := ok(t, "notify", "test"); !strings.Contains(out, "desk (") || !strings.Contains(out, "sent") {
		t.Fatalf("test said %q", out)
	}
	mu.Lock()
	if len(got) != 1 || got[0]["kind"] != "test" || got[0]["auth"] != "Bearer xyz" || got[0]["source"] != "shepherd" {
		t.Fatalf("received %v", got)
	}
	mu.Unlock()

	// A failure is sent as it happens.
	projectWithFolder(t, "hooks")
	ok(t, "create", "hooks", "crasher", "--", "sh", "-c", "exit 3")
	ok(t, "start", "hooks", "crasher")
	deadline := time.Now().Add(testutil.Patience)
	for {
		mu.Lock()
		n := len(got)
		var last map[string]any
		if n > 0 {
			last = got[n-1]
		}
		mu.Unlock()
		if n >= 2 {
			if last["kind"] != "failed" || last["agentId"] != "crasher" || last["projectName"] != "hooks" {
				t.Fatalf("received %v", last)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the failure never reached the channel")
		}
		time.Sleep(20 * time.Millisecond)
	}
	fails(t, 1, "no webhook channel", "notify", "test", "nope")
	id := strings.Fields(strings.Split(ls, "\n")[1])[0]
	ok(t, "notify", "rm", id)
	if out := ok(t, "notify", "ls"); !strings.Contains(out, "No webhook channels") {
		t.Fatalf("after rm: %q", out)
	}
}
