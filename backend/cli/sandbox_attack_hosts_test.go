package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"shepherd/backend/api"
)

// Other machines are the user's alone (SPEC "Hosts"): an agent's own
// credential reaches no host — not the list, not an add, not a removal,
// and nothing through /v1/hosts/{host}/…, by the API or the CLI's --host —
// while the user's token is let through to the host's lookup.

func init() {
	registerAttacks("hosts", hostAttacks)
	// hostproxy:<METHOD> <path>: call the local engine with this agent's own
	// credential. It "works" when the engine did not refuse it as an
	// agent's (403 PermissionDenied): any other answer means the request
	// went past the access check.
	registerOp("hostproxy", func(val string) error {
		method, path, _ := strings.Cut(val, " ")
		var body io.Reader
		if method == http.MethodPost {
			body = bytes.NewReader([]byte(`{"name":"evil","url":"ssh://x@127.0.0.1:1"}`))
		}
		req, err := http.NewRequest(method, os.Getenv("SHEPHERD_API_URL")+path, body)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+os.Getenv("SHEPHERD_AGENT_TOKEN"))
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var e api.ErrorBody
		_ = json.NewDecoder(resp.Body).Decode(&e)
		if resp.StatusCode == http.StatusForbidden && e.Error == "PermissionDenied" {
			return errors.New("refused: " + e.Message)
		}
		fmt.Printf("past the access check: HTTP %d %s\n", resp.StatusCode, e.Error)
		return nil
	})
}

func hostAttacks(t *testing.T, a *arena) {
	ops := []string{"hostproxy:GET /v1/hosts", "hostproxy:POST /v1/hosts", "hostproxy:DELETE /v1/hosts/box",
		"hostproxy:GET /v1/hosts/box", "hostproxy:GET /v1/hosts/box/projects", "hostproxy:POST /v1/hosts/box/engine/quit",
		"cli:--host,box,ls,arena"}
	log := a.run("hosts", netModes[1].perms(a), ops...)
	refused(t, log, ops...)
	// The user's token is let through: the host is looked up (there is none).
	_, err := a.c.JSON(t.Context(), "GET", "/v1/hosts/box/projects", nil, nil)
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Name != "HostNotFound" {
		t.Errorf("the user's call to a host: %v", err)
	}
}
