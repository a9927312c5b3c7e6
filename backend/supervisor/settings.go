package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"shepherd/backend/sandbox"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/budget"
)

// Settings are a project's monitoring settings (SPEC "Stale check").
type Settings struct {
	WatchdogIntervalSec   int  `json:"watchdogIntervalSec"`
	StaleCheckIntervalSec int  `json:"staleCheckIntervalSec"`
	StaleThresholdSec     int  `json:"staleThresholdSec"`
	BusyThresholdSec      int  `json:"busyThresholdSec"` // 0: a busy agent is never stale
	ResultGraceSec        int  `json:"resultGraceSec"`
	AutoResumeLimit       int  `json:"autoResumeLimit"`
	PausedExpiryDays      int  `json:"pausedExpiryDays"`
	SafePointWaitSec      int  `json:"safePointWaitSec"` // a pause lets a tool call in flight finish, this long at most
	MaxRunning            int  `json:"maxRunning"`
	NotifyNative          bool `json:"notifyNative"`
	NotifyCompletion      bool `json:"notifyCompletion"`
	// UsageLimitWait: a Claude Code or Codex run refused by its account's
	// usage limit waits for the reset and resumes (usage.go), rather than
	// failing. On by default.
	UsageLimitWait bool `json:"usageLimitWait"`
	// DailyBudgetUsd caps what the project's runs may cost in a (local)
	// day; 0: none (budget.go).
	DailyBudgetUsd float64 `json:"dailyBudgetUsd"`
	// WorktreeSetup is a command line (sh -c) run in each new worktree of
	// the project, e.g. "npm ci"; its output goes to the agent's log.
	WorktreeSetup string `json:"worktreeSetup,omitempty"`
	// What each sandboxed agent's box may use (SPEC threat model: a box
	// cannot exhaust what the user needs): its tasks (processes and
	// threads), its memory and its /dev/shm (also its TMPDIR), applied at
	// each start; 0: no limit of Shepherd's.
	BoxMaxProcesses int `json:"boxMaxProcesses"`
	BoxMemoryMiB    int `json:"boxMemoryMiB"`
	BoxShmMiB       int `json:"boxShmMiB"`
	// LogMaxMiB caps each file of an agent's log: at the cap, agent.log
	// becomes agent.log.1 (.1 becomes .2, …) and a new one is begun;
	// LogKeep older files are kept, the oldest beyond them removed
	// (supervisord's logfile_maxbytes and backups). An agent's log takes at
	// most (LogKeep+1) × LogMaxMiB. A run takes the values it started with.
	LogMaxMiB int `json:"logMaxMiB"`
	LogKeep   int `json:"logKeep"`
}

// DefaultSettings are SPEC's defaults.
func DefaultSettings() Settings {
	return Settings{WatchdogIntervalSec: 30, StaleCheckIntervalSec: 60, StaleThresholdSec: 300, BusyThresholdSec: 1800,
		ResultGraceSec: 5, AutoResumeLimit: 3, PausedExpiryDays: 30, SafePointWaitSec: 120, MaxRunning: 0, NotifyNative: true, UsageLimitWait: true,
		BoxMaxProcesses: sandbox.DefaultProcesses, BoxMemoryMiB: sandbox.DefaultMemoryMiB(), BoxShmMiB: sandbox.DefaultShmMiB,
		LogMaxMiB: DefaultLogMaxMiB, LogKeep: DefaultLogKeep}
}

// BoxLimits are the limits of the project's boxes.
func (s Settings) BoxLimits() sandbox.Limits {
	return sandbox.Limits{Processes: s.BoxMaxProcesses, MemoryMiB: s.BoxMemoryMiB, ShmMiB: s.BoxShmMiB}
}

// Agent logs' rotation by default: 10 MiB a file, 5 older files kept (at
// most 60 MiB an agent).
const (
	DefaultLogMaxMiB = 10
	DefaultLogKeep   = 5
	maxLogMaxMiB     = 10240
	maxLogKeep       = 100
)

// logMaxBytes is s's cap per log file in bytes.
func (s Settings) logMaxBytes() int64 {
	return int64(s.LogMaxMiB) << 20
}

// Validate names the first absurd value.
func (s Settings) Validate() error {
	check := func(name string, v, lo, hi int) error {
		if v < lo || v > hi {
			return newErr(ErrValidation, "setting %s must be between %d and %d, not %d", name, lo, hi, v)
		}
		return nil
	}
	return errors.Join(
		check("watchdogIntervalSec", s.WatchdogIntervalSec, 1, 86400),
		check("staleCheckIntervalSec", s.StaleCheckIntervalSec, 1, 86400),
		check("staleThresholdSec", s.StaleThresholdSec, 1, 7*86400),
		check("busyThresholdSec", s.BusyThresholdSec, 0, 7*86400),
		check("resultGraceSec", s.ResultGraceSec, 1, 3600),
		check("autoResumeLimit", s.AutoResumeLimit, 0, 100),
		check("pausedExpiryDays", s.PausedExpiryDays, 1, 3650),
		check("safePointWaitSec", s.SafePointWaitSec, 0, 86400),
		check("maxRunning", s.MaxRunning, 0, 10000),
		checkOff("boxMaxProcesses", s.BoxMaxProcesses, 64, 4000000, ""),
		checkOff("boxMemoryMiB", s.BoxMemoryMiB, 512, 1<<24, " (MiB; Node and Go programs need a few hundred)"),
		checkOff("boxShmMiB", s.BoxShmMiB, 16, 1<<24, " (MiB)"),
		budget.CheckUsd("setting dailyBudgetUsd", s.DailyBudgetUsd),
		check("logMaxMiB", s.LogMaxMiB, 1, maxLogMaxMiB),
		check("logKeep", s.LogKeep, 0, maxLogKeep),
	)
}

// checkOff: 0 (no limit), or between lo and hi.
func checkOff(name string, v, lo, hi int, unit string) error {
	if v != 0 && (v < lo || v > hi) {
		return newErr(ErrValidation, "setting %s must be 0 (no limit) or between %d and %d%s, not %d", name, lo, hi, unit, v)
	}
	return nil
}

func (e *Engine) settingsPath(projectID string) string {
	return filepath.Join(e.st.ProjectDir(projectID), "settings.json")
}

// GetSettings returns a project's settings (defaults where none were saved).
func (e *Engine) GetSettings(projectID string) (Settings, error) {
	p, err := e.project(projectID)
	if err != nil {
		return Settings{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.settings, nil
}

// PutSettings validates and saves a project's settings; changed intervals
// take effect at once.
func (e *Engine) PutSettings(projectID string, s Settings) (Settings, error) {
	if err := s.Validate(); err != nil {
		var ee *Error
		if errors.As(err, &ee) {
			return Settings{}, err
		}
		return Settings{}, newErr(ErrValidation, "%v", err)
	}
	p, err := e.project(projectID)
	if err != nil {
		return Settings{}, err
	}
	if err := store.WriteJSON(e.settingsPath(projectID), s); err != nil {
		return Settings{}, fmt.Errorf("save settings of project '%s': %w", projectID, err)
	}
	p.mu.Lock()
	p.settings = s
	p.mu.Unlock()
	p.q.SetMax(s.MaxRunning)
	e.appendEvent(projectID, store.Event{Time: e.clock.Now().UTC(), Event: "settings", Data: map[string]any{"settings": s}})
	e.restartMonitor(p)
	e.checkDaily(p, false) // a raised or removed daily budget lifts its hold
	return s, nil
}

// loadSettings reads settings.json; a missing or unreadable one gives the
// defaults (an unreadable one is logged).
func (e *Engine) loadSettings(projectID string) Settings {
	s := DefaultSettings()
	b, err := os.ReadFile(e.settingsPath(projectID))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			e.log.Warn().Err(err).Str("project", projectID).Msg("cannot read settings; using defaults")
		}
		return s
	}
	if err := json.Unmarshal(b, &s); err != nil || s.Validate() != nil {
		e.log.Warn().Str("project", projectID).Msg("settings.json is not valid; using defaults")
		return DefaultSettings()
	}
	return s
}
