package manager

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2"

	"shepherd/backend/store"
)

// What a host's stream had seen (the host's engine's pid, the last event
// id, its agents) is kept on disk beside the registry, so that a local
// engine that was closed or crashed resumes each host's stream where it left
// off and tells what happened there meanwhile — a host:away like any other
// loss, from when this was last written.
type seen struct {
	PID    int                      `json:"pid"`
	LastID uint64                   `json:"lastEventId"`
	Agents map[string]*store.Record `json:"agents"`
	At     time.Time                `json:"at"`
}

// seenDelay is how long after a change what was seen is written: a burst
// of events is one write.
const seenDelay = 2 * time.Second

// seenPath is the file of what was seen of a host, beside the registry.
func (m *Manager) seenPath(name string) string {
	return filepath.Join(filepath.Dir(m.opts.File), "hosts-seen", name+".json")
}

// loadSeen takes what was seen of h before this engine started; an
// unreadable file is only logged (the host is then looked at afresh).
func (h *host) loadSeen() {
	b, err := os.ReadFile(h.m.seenPath(h.reg.Name))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			h.m.opts.Logger.Warn().Err(err).Str("host", h.reg.Name).Msg("what was seen of the host cannot be read")
		}
		return
	}
	var s seen
	if err := json.Unmarshal(b, &s); err != nil || s.PID <= 0 {
		h.m.opts.Logger.Warn().Err(err).Str("host", h.reg.Name).Msg("what was seen of the host is unreadable: ignored")
		return
	}
	h.pid, h.lastID, h.lost = s.PID, s.LastID, s.At
	if s.Agents != nil {
		h.agents = s.Agents
	}
}

// saveSeen writes what the stream has seen now (nothing before its first
// look).
func (h *host) saveSeen() {
	h.mu.Lock()
	if h.saveTimer != nil {
		h.saveTimer.Stop()
		h.saveTimer = nil
	}
	if h.pid == 0 || h.removed {
		h.mu.Unlock()
		return
	}
	b, err := json.Marshal(seen{PID: h.pid, LastID: h.lastID, Agents: h.agents, At: h.m.opts.Clock.Now().UTC()})
	h.mu.Unlock()
	path := h.m.seenPath(h.reg.Name)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o700)
	}
	if err == nil {
		err = renameio.WriteFile(path, b, 0o600, renameio.WithTempDir(filepath.Dir(path)))
	}
	if err != nil {
		h.m.opts.Logger.Warn().Err(err).Str("host", h.reg.Name).Msg("what was seen of the host cannot be kept")
	}
}

// seenChanged writes what was seen a little later (seenDelay). h.mu is held.
func (h *host) seenChanged() {
	if h.saveTimer == nil {
		h.saveTimer = h.m.opts.Clock.AfterFunc(seenDelay, h.saveSeen)
	}
}

// forgetSeen removes a removed host's file.
func (m *Manager) forgetSeen(name string) {
	if err := os.Remove(m.seenPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		m.opts.Logger.Warn().Err(err).Str("host", name).Msg("what was seen of a removed host cannot be removed")
	}
}
