package claudehooks

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The settings are what Claude Code's schema takes for an http hook: url,
// headers with $VAR filled from allowedEnvVars, a timeout in seconds.
func TestSettings(t *testing.T) {
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type           string            `json:"type"`
				URL            string            `json:"url"`
				Headers        map[string]string `json:"headers"`
				AllowedEnvVars []string          `json:"allowedEnvVars"`
				Timeout        float64           `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(Settings("http://127.0.0.1:4000/")), &s); err != nil {
		t.Fatal(err)
	}
	for _, ev := range Events {
		m := s.Hooks[ev]
		if len(m) != 1 || len(m[0].Hooks) != 1 {
			t.Fatalf("%s: %+v", ev, m)
		}
		h := m[0].Hooks[0]
		if h.Type != "http" || h.URL != "http://127.0.0.1:4000/v1/hooks/claude" || h.Headers["Authorization"] != "Bearer $SHEPHERD_AGENT_TOKEN" ||
			len(h.AllowedEnvVars) != 1 || h.AllowedEnvVars[0] != TokenEnv || h.Timeout <= 0 {
			t.Fatalf("%s: %+v", ev, h)
		}
	}
}

func TestJudge(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name, body  string
		interactive bool
		what        string // "" : no wait
		needsYou    bool
		clear       bool
		failure     string
	}{
		{"permission request", `{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"}}`, false, "permission for Bash", true, false, ""},
		{"permission prompt", `{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Write"}`, false, "permission for Write", true, false, ""},
		{"idle prompt", `{"hook_event_name":"Notification","notification_type":"idle_prompt","message":"Claude is waiting for your input"}`, true, "input", true, false, ""},
		{"auth success", `{"hook_event_name":"Notification","notification_type":"auth_success"}`, false, "", false, true, ""},
		{"stop, print mode", `{"hook_event_name":"Stop","stop_hook_active":false}`, false, "", false, true, ""},
		{"stop, interactive", `{"hook_event_name":"Stop"}`, true, "input", true, false, ""},
		{"rate limit", `{"hook_event_name":"StopFailure","error":"rate_limit","error_details":"429"}`, false, "rate limit", false, false, ""},
		{"overloaded", `{"hook_event_name":"StopFailure","error":"overloaded"}`, false, "API overloaded", false, false, ""},
		{"auth failed, print", `{"hook_event_name":"StopFailure","error":"authentication_failed","error_details":"bad key"}`, false, "", false, false, "API error authentication_failed: bad key"},
		{"billing, interactive", `{"hook_event_name":"StopFailure","error":"billing_error"}`, true, "input (API error billing_error)", true, false, "API error billing_error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := Parse([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			v := Judge(in, now, tc.interactive)
			what, needs := "", false
			if v.Wait != nil {
				what, needs = v.Wait.What, v.Wait.NeedsYou
			}
			if what != tc.what || needs != tc.needsYou || v.Clear != tc.clear || v.Failure != tc.failure {
				t.Fatalf("got wait %q needsYou %v clear %v failure %q", what, needs, v.Clear, v.Failure)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for body, want := range map[string]string{
		``:                                   "not one JSON object",
		`[]`:                                 "not one JSON object",
		`{"hook_event_name":""}`:             "no hook_event_name",
		`{"hook_event_name":"SessionStart"}`: "not one Shepherd installs",
		`{"hook_event_name":"Stop"}x`:        "not one JSON object",
		`{"hook_event_name":"Stop"}` + strings.Repeat(" ", MaxBody): "larger than",
	} {
		if _, err := Parse([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%.40q) = %v, want %q", body, err, want)
		}
	}
}

// What Shepherd keeps of a hook is capped: a tool name or a message of a
// megabyte (a box's text) is cut to MaxField, at a character.
func TestParseClipsFields(t *testing.T) {
	long := strings.Repeat("é", MaxField)
	in, err := Parse([]byte(`{"hook_event_name":"PermissionRequest","tool_name":"` + long + `","message":"` + long + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{in.ToolName, in.Message} {
		if len(f) > MaxField || !strings.HasSuffix(f, "…") || !utf8.ValidString(f) {
			t.Errorf("kept %d bytes: %q", len(f), f[len(f)-8:])
		}
	}
	if Clip("short", 10) != "short" {
		t.Error("a short field was changed")
	}
}

func TestArgs(t *testing.T) {
	if !HasSettings([]string{"-p", "--settings", "{}"}) || !HasSettings([]string{"--settings={}"}) || HasSettings([]string{"-p"}) {
		t.Fatal("HasSettings")
	}
	if Interactive([]string{"-p", "x"}) || Interactive([]string{"--print"}) || !Interactive([]string{"--model", "opus"}) {
		t.Fatal("Interactive")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}`))
	f.Add([]byte(`{"hook_event_name":"StopFailure","error":"rate_limit"}`))
	f.Add([]byte(`{"hook_event_name":"PermissionRequest","tool_name":"` + "\u00e9" + `"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := Parse(b)
		if err != nil {
			return
		}
		v := Judge(in, time.Unix(0, 0), true)
		if v.Wait != nil && v.Wait.What == "" {
			t.Fatalf("a wait with no words: %+v", in)
		}
		for _, f := range []string{in.Message, in.ToolName, in.Error, in.ErrorDetails, in.Title, in.Cwd} {
			if len(f) > MaxField {
				t.Fatalf("a field of %d bytes kept", len(f))
			}
		}
	})
}
