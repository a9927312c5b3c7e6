package supervisor

// Being written: signatures of the engine's next operations.

import (
	"context"

	"shepherd/backend/store"
)

// Settings are a project's monitoring settings (SPEC "Stale check").
type Settings struct {
	WatchdogIntervalSec   int  `json:"watchdogIntervalSec"`
	StaleCheckIntervalSec int  `json:"staleCheckIntervalSec"`
	StaleThresholdSec     int  `json:"staleThresholdSec"`
	ResultGraceSec        int  `json:"resultGraceSec"`
	AutoResumeLimit       int  `json:"autoResumeLimit"`
	PausedExpiryDays      int  `json:"pausedExpiryDays"`
	MaxRunning            int  `json:"maxRunning"`
	NotifyNative          bool `json:"notifyNative"`
	NotifyCompletion      bool `json:"notifyCompletion"`
}

func (e *Engine) ResumeAgent(ctx context.Context, projectID, agentID string) (*store.Record, error) {
	return nil, newErr(ErrNotResumable, "not yet")
}
func (e *Engine) GetSettings(projectID string) (Settings, error) { return Settings{}, nil }
func (e *Engine) PutSettings(projectID string, s Settings) (Settings, error) {
	return s, nil
}
func (e *Engine) RenameProject(projectID, name string) (store.Project, error) {
	return store.Project{}, nil
}
func (e *Engine) RemoveProject(ctx context.Context, projectID string, force bool) error { return nil }

// UpdateAgent changes the user-set fields of an agent that is not live.
func (e *Engine) UpdateAgent(projectID string, spec AgentSpec) (*store.Record, error) {
	return nil, nil
}
