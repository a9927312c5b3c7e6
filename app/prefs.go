package app

import (
	"os"

	"shepherd/backend/prefs"
)

// Prefs are the app's own preferences (not a project's): stop the agents
// when Shepherd quits, start Shepherd at login.
type Prefs = prefs.Prefs

// GetPrefs returns the app's preferences.
func (s *SettingsService) GetPrefs() (Prefs, error) { return prefs.Load() }

// PutPrefs saves the app's preferences and applies them (the start-at-login
// entry is written or removed at once).
func (s *SettingsService) PutPrefs(p Prefs) (Prefs, error) {
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	}
	return prefs.Save(p, exe)
}
