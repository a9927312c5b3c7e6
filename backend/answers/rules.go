package answers

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"shepherd/backend/permrules"
	"shepherd/backend/store"
)

// Scopes of an always-allow rule.
const (
	ScopeAgent   = "agent"   // this agent only
	ScopeProject = "project" // every agent of the project (a sandboxed one only within its grants)
)

// FileName is the project's answers file, in its folder of the data folder.
const FileName = "answers.json"

// Rule is an always-allow rule as kept.
type Rule struct {
	Rule    string    `json:"rule"`
	Scope   string    `json:"scope"`
	AgentID string    `json:"agentId,omitempty"`
	AddedAt time.Time `json:"addedAt"`
}

// agentBook is what is kept of one agent; Created tells it from a later
// agent of the same id (whose rules these are not).
type agentBook struct {
	Created      time.Time `json:"created"`
	Rules        []Rule    `json:"rules,omitempty"`
	DenyAfterMin int       `json:"denyAfterMin,omitempty"`
}

type bookFile struct {
	Rules  []Rule                `json:"rules"`
	Agents map[string]*agentBook `json:"agents"`
}

// Book is one project's rules and agents' policies, kept in a file
// written atomically (0600).
type Book struct {
	path string
	mu   sync.Mutex
	f    bookFile
}

// ErrDamaged: the file is there but unreadable; it is never emptied.
var ErrDamaged = errors.New("answers file damaged")

// Open reads the book at path (none yet: empty).
func Open(path string) (*Book, error) {
	b := &Book{path: path, f: bookFile{Agents: map[string]*agentBook{}}}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return b, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &b.f); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrDamaged, path, err)
	}
	if b.f.Agents == nil {
		b.f.Agents = map[string]*agentBook{}
	}
	return b, nil
}

func (b *Book) save() error {
	raw, err := json.MarshalIndent(b.f, "", "  ")
	if err != nil {
		return err
	}
	return store.WriteFile(b.path, append(raw, '\n'), 0o600)
}

// agent is the book of the agent id created at created (nil: none).
func (b *Book) agent(id string, created time.Time) *agentBook {
	a := b.f.Agents[id]
	if a == nil || !a.Created.Equal(created) {
		return nil
	}
	return a
}

func (b *Book) agentMake(id string, created time.Time) *agentBook {
	a := b.agent(id, created)
	if a == nil {
		a = &agentBook{Created: created}
		b.f.Agents[id] = a
	}
	return a
}

// Rules are the project's rules and those of the agent id (created at
// created), the project's first; agentID "" : the project's only.
func (b *Book) Rules(agentID string, created time.Time) []Rule {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := append([]Rule{}, b.f.Rules...)
	if a := b.agent(agentID, created); agentID != "" && a != nil {
		out = append(out, a.Rules...)
	}
	return out
}

// Add keeps rule (already parsed and checked) in scope; false if it was
// kept already.
func (b *Book) Add(r Rule, created time.Time) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	list := &b.f.Rules
	if r.Scope == ScopeAgent {
		list = &b.agentMake(r.AgentID, created).Rules
	} else {
		r.AgentID = ""
	}
	if slices.ContainsFunc(*list, func(x Rule) bool { return x.Rule == r.Rule }) {
		return false, nil
	}
	*list = append(*list, r)
	if err := b.save(); err != nil {
		*list = (*list)[:len(*list)-1]
		return false, err
	}
	return true, nil
}

// Remove forgets rule in scope; false if it was not kept.
func (b *Book) Remove(scope, agentID string, created time.Time, rule string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	list := &b.f.Rules
	if scope == ScopeAgent {
		a := b.agent(agentID, created)
		if a == nil {
			return false, nil
		}
		list = &a.Rules
	}
	i := slices.IndexFunc(*list, func(x Rule) bool { return x.Rule == rule })
	if i < 0 {
		return false, nil
	}
	old := *list
	*list = slices.Delete(slices.Clone(old), i, i+1)
	if err := b.save(); err != nil {
		*list = old
		return false, err
	}
	return true, nil
}

// DenyAfter is the agent's policy for a question nobody answers: deny it
// after that long (0: wait for the answer, the default).
func (b *Book) DenyAfter(agentID string, created time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a := b.agent(agentID, created); a != nil {
		return time.Duration(a.DenyAfterMin) * time.Minute
	}
	return 0
}

// MaxDenyAfterMin bounds the policy (a week).
const MaxDenyAfterMin = 7 * 24 * 60

// SetDenyAfter sets the agent's policy, in whole minutes (0: wait).
func (b *Book) SetDenyAfter(agentID string, created time.Time, minutes int) error {
	if minutes < 0 || minutes > MaxDenyAfterMin {
		return fmt.Errorf("deny after %d minutes: want 0 (wait for the answer) to %d", minutes, MaxDenyAfterMin)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.agentMake(agentID, created)
	old := a.DenyAfterMin
	a.DenyAfterMin = minutes
	if err := b.save(); err != nil {
		a.DenyAfterMin = old
		return err
	}
	return nil
}

// Forget drops what is kept of the agent id (it was removed).
func (b *Book) Forget(agentID string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.f.Agents[agentID]; !ok {
		return nil
	}
	delete(b.f.Agents, agentID)
	return b.save()
}

// Parsed are rules as permrules reads them (a kept rule that no longer
// parses is left out).
func Parsed(rs []Rule) []permrules.Rule {
	out := make([]permrules.Rule, 0, len(rs))
	for _, r := range rs {
		if p, err := permrules.Parse(r.Rule); err == nil {
			out = append(out, p)
		}
	}
	return out
}
