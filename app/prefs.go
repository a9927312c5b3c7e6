package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/adrg/xdg"

	"shepherd/backend/store"
)

// Prefs are the app's own preferences (not a project's).
type Prefs struct {
	// StopAgentsOnQuit stops every running agent when the window closes.
	// Off by default: agents are durable and outlive the app.
	StopAgentsOnQuit bool `json:"stopAgentsOnQuit"`
}

func prefsPath() string {
	xdg.Reload()
	return filepath.Join(xdg.ConfigHome, "shepherd", "prefs.json")
}

func loadPrefs() Prefs {
	var p Prefs
	b, err := os.ReadFile(prefsPath())
	if err == nil {
		_ = json.Unmarshal(b, &p)
	}
	return p
}

// GetPrefs returns the app's preferences.
func (s *SettingsService) GetPrefs() (Prefs, error) { return loadPrefs(), nil }

// PutPrefs saves the app's preferences.
func (s *SettingsService) PutPrefs(p Prefs) (Prefs, error) {
	path := prefsPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return Prefs{}, err
	}
	if err := store.WriteJSON(path, p); err != nil {
		return Prefs{}, errors.New("cannot save the preferences: " + err.Error())
	}
	return p, nil
}

// stopOnQuit stops the running agents of every project when the user asked
// for it, within a bounded time.
func (a *App) stopOnQuit() {
	if !loadPrefs().StopAgentsOnQuit {
		return
	}
	e, err := a.engine()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l := a.logger()
	for _, p := range e.Projects() {
		res, err := e.StopAll(ctx, p.ID)
		if err != nil {
			l.Warn().Err(err).Str("project", p.ID).Msg("stop on quit")
			continue
		}
		l.Info().Str("project", p.ID).Int("agents", len(res)).Msg("stopped agents on quit")
	}
}
