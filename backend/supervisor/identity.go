package supervisor

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
)

// Who is calling is never self-declared (SPEC, threat model). Every run of
// an agent gets a fresh secret, handed to that process only (in its
// environment; a sandboxed agent's processes are hidden from every other
// sandbox by its PID namespace). The engine keeps only the secret's hash,
// in the record (so a re-attached agent keeps its identity across an
// engine restart), and the API maps a request bearing the secret to that
// agent — never to the user. A run's secret is valid while it is live.
const (
	EnvAgentToken = "SHEPHERD_AGENT_TOKEN" // the agent's own credential
	EnvAPIURL     = "SHEPHERD_API_URL"     // where the engine's API listens
	EnvAgentID    = "SHEPHERD_AGENT_ID"    // informative only: never trusted
	EnvProjectID  = "SHEPHERD_PROJECT_ID"  // informative only: never trusted
)

// newCredential returns a fresh secret and its hash.
func newCredential() (token, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	token = hex.EncodeToString(b)
	return token, CredentialHash(token), nil
}

// CredentialHash is what the record keeps of a secret.
func CredentialHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// SetAPIURL tells the engine where its API listens, for the agents it
// starts from now on (EnvAPIURL).
func (e *Engine) SetAPIURL(url string) {
	e.mu.Lock()
	e.apiURL = url
	e.mu.Unlock()
}

func (e *Engine) apiAddress() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.apiURL
}

// AgentByCredential is the live agent whose run was given token; false for
// any other token (the user's included).
func (e *Engine) AgentByCredential(token string) (AgentRef, bool) {
	if len(token) != 64 {
		return AgentRef{}, false
	}
	want := []byte(CredentialHash(token))
	e.mu.Lock()
	ps := make([]*project, 0, len(e.projects))
	for _, p := range e.projects {
		ps = append(ps, p)
	}
	e.mu.Unlock()
	for _, p := range ps {
		for _, a := range p.list() {
			a.mu.Lock()
			h, live, ref := a.rec.CredentialHash, a.rec.Status.Live(), AgentRef{ProjectID: a.rec.ProjectID, AgentID: a.rec.ID}
			a.mu.Unlock()
			if live && h != "" && subtle.ConstantTimeCompare([]byte(h), want) == 1 {
				return ref, true
			}
		}
	}
	return AgentRef{}, false
}

// Owns reports whether the agent caller may act on the agent target: one it
// created, or one created by those, and so on. An agent never owns itself
// for control (it cannot remove or edit itself), nor anything of another
// project, nor the user's agents.
func (e *Engine) Owns(caller AgentRef, target AgentRef) bool {
	if caller.ProjectID != target.ProjectID || caller.AgentID == target.AgentID {
		return false
	}
	id := target.AgentID
	for i := 0; i < 64 && id != ""; i++ {
		_, a, err := e.agent(target.ProjectID, id)
		if err != nil {
			return false
		}
		a.mu.Lock()
		parent := a.rec.Parent
		a.mu.Unlock()
		if parent == caller.AgentID {
			return true
		}
		id = parent
	}
	return false
}
