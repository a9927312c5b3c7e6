package api

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"

	"shepherd/backend/supervisor"
)

// EngineInfo is what a running engine writes to engine.json so that the CLI
// can find it.
type EngineInfo struct {
	URL   string `json:"url"`
	Token string `json:"token"`
	PID   int    `json:"pid"`
}

// NewToken returns 32 random bytes, hex-encoded.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make API token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// WriteEngineInfo writes info to path atomically, the file 0600 and its
// folder 0700 (it holds the token).
func WriteEngineInfo(path string, info EngineInfo) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	if err := renameio.WriteFile(path, append(b, '\n'), 0o600, renameio.WithStaticPermissions(0o600)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadEngineInfo reads engine.json. A missing file is reported with an error
// that satisfies errors.Is(err, os.ErrNotExist).
func ReadEngineInfo(path string) (EngineInfo, error) {
	var info EngineInfo
	b, err := os.ReadFile(path)
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("read %s: %w", path, err)
	}
	if info.URL == "" || info.Token == "" {
		return info, fmt.Errorf("read %s: url or token missing", path)
	}
	return info, nil
}

// RemoveEngineInfo removes path if it still describes info (another engine
// may have replaced it since).
func RemoveEngineInfo(path string, info EngineInfo) error {
	cur, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	var got EngineInfo
	if json.Unmarshal(bytes.TrimSpace(cur), &got) == nil && got != info {
		return nil
	}
	return os.Remove(path)
}

// AgentEngineInfo is the engine as an agent Shepherd started knows it: the
// API address and the agent's own credential from its environment. ok is
// false outside such an agent.
func AgentEngineInfo() (EngineInfo, bool) {
	tok, url := os.Getenv(supervisor.EnvAgentToken), os.Getenv(supervisor.EnvAPIURL)
	if tok == "" {
		return EngineInfo{}, false
	}
	return EngineInfo{URL: url, Token: tok}, true
}

// DiscoverEngine is how a client finds the engine: inside an agent, with
// that agent's identity and only with it (its credential; the user's
// engine.json is not even looked at); otherwise through engine.json.
func DiscoverEngine(engineFile string) (info EngineInfo, asAgent bool, err error) {
	if info, ok := AgentEngineInfo(); ok {
		if info.URL == "" {
			return info, true, fmt.Errorf("this agent was given a credential but no API address (%s is empty): its engine has no API", supervisor.EnvAPIURL)
		}
		return info, true, nil
	}
	info, err = ReadEngineInfo(engineFile)
	return info, false, err
}
