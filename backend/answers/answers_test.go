package answers

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"shepherd/backend/permtool"
)

func TestBookKeepsRulesAndPolicies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p", FileName)
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	born := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	if ok, err := b.Add(Rule{Rule: "Bash(npm test:*)", Scope: ScopeAgent, AgentID: "a"}, born); !ok || err != nil {
		t.Fatalf("add: %v %v", ok, err)
	}
	if ok, _ := b.Add(Rule{Rule: "Bash(npm test:*)", Scope: ScopeAgent, AgentID: "a"}, born); ok {
		t.Fatal("the same rule twice")
	}
	if _, err := b.Add(Rule{Rule: "Read(./**)", Scope: ScopeProject, AgentID: "a"}, born); err != nil {
		t.Fatal(err)
	}
	if err := b.SetDenyAfter("a", born, 5); err != nil {
		t.Fatal(err)
	}
	if err := b.SetDenyAfter("a", born, MaxDenyAfterMin+1); err == nil {
		t.Fatal("a policy past a week")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file: %v %v", fi, err)
	}
	// Read again: the same.
	b2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rs := b2.Rules("a", born)
	if len(rs) != 2 || rs[0].Rule != "Read(./**)" || rs[0].AgentID != "" || rs[1].Rule != "Bash(npm test:*)" {
		t.Fatalf("rules %+v", rs)
	}
	if b2.DenyAfter("a", born) != 5*time.Minute {
		t.Fatal("policy lost")
	}
	// A later agent of the same id inherits nothing.
	later := born.Add(time.Hour)
	if rs := b2.Rules("a", later); len(rs) != 1 || b2.DenyAfter("a", later) != 0 {
		t.Fatalf("a new agent a got %+v", rs)
	}
	if ok, err := b2.Remove(ScopeAgent, "a", born, "Bash(npm test:*)"); !ok || err != nil {
		t.Fatalf("remove: %v %v", ok, err)
	}
	if ok, _ := b2.Remove(ScopeAgent, "a", born, "Bash(npm test:*)"); ok {
		t.Fatal("removed twice")
	}
	// A damaged file is an error and stays as it is.
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); !errors.Is(err, ErrDamaged) {
		t.Fatalf("damaged: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{" {
		t.Fatal("the damaged file was changed")
	}
}

func TestQueueInOrder(t *testing.T) {
	q := NewQueue()
	k := Key{"p", "a"}
	p1, first := q.Add(Asked{ProjectID: "p", AgentID: "a", Summary: "one"}, permtool.Request{})
	p2, second := q.Add(Asked{ProjectID: "p", AgentID: "a", Summary: "two"}, permtool.Request{})
	if !first || second || p1.Q.ID == p2.Q.ID {
		t.Fatalf("first %v second %v", first, second)
	}
	if ls := q.List(k); len(ls) != 2 || ls[0].Summary != "one" || ls[1].Position != 2 {
		t.Fatalf("list %+v", ls)
	}
	if p, _ := q.Find(k, ""); p != p1 {
		t.Fatal("the first is not found first")
	}
	ok, next := q.Settle(k, p1)
	if !ok || next != p2 {
		t.Fatalf("settle: %v %v", ok, next)
	}
	p1.Deliver(Outcome{Answer: permtool.DenyAnswer("")})
	if o := <-p1.Done(); o.Answer.Behavior != permtool.Deny {
		t.Fatalf("outcome %+v", o)
	}
	if ok, _ := q.Settle(k, p1); ok {
		t.Fatal("settled twice")
	}
	if ok, next := q.Abandon(k, p2); !ok || next != nil {
		t.Fatalf("abandon: %v %v", ok, next)
	}
	if len(q.List(k)) != 0 || len(q.All()) != 0 {
		t.Fatal("not empty")
	}
}
