package secrets

import (
	"testing"

	"shepherd/backend/store"
)

func TestMask(t *testing.T) {
	for name, want := range map[string]bool{"ANTHROPIC_API_KEY": true, "GITHUB_TOKEN": true, "DB_PASSWORD": true,
		"session_cookie": true, "OPENAI_KEY": true, "PATH": false, "HOME": false, "FOO": false, "MODEL": false} {
		if IsSecret(name) != want {
			t.Errorf("IsSecret(%q) = %v", name, !want)
		}
	}
	r := &store.Record{ID: "a", Env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant-123", "FOO": "bar", "EMPTY_TOKEN": ""}}
	m := MaskRecord(r)
	if m.Env["ANTHROPIC_API_KEY"] != Masked || m.Env["FOO"] != "bar" || m.Env["EMPTY_TOKEN"] != "" {
		t.Fatalf("masked env %v", m.Env)
	}
	if r.Env["ANTHROPIC_API_KEY"] != "sk-ant-123" {
		t.Fatal("the record itself was changed")
	}
	plain := &store.Record{Env: map[string]string{"FOO": "bar"}}
	if MaskRecord(plain) != plain {
		t.Fatal("a record with nothing to mask was copied")
	}
	got := Unmask(map[string]string{"ANTHROPIC_API_KEY": Masked, "FOO": "baz", "NEW_TOKEN": Masked},
		map[string]string{"ANTHROPIC_API_KEY": "sk-ant-123", "FOO": "bar"})
	if got["ANTHROPIC_API_KEY"] != "sk-ant-123" || got["FOO"] != "baz" || got["NEW_TOKEN"] != Masked {
		t.Fatalf("unmask %v", got)
	}
}
