package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"shepherd/backend/api"
	"shepherd/backend/logtail"
	"shepherd/backend/paths"
)

// EngineEnv names the environment variable that overrides where the engine
// binary (shepherd-engine) is, as ShimEnv does for the shim: `wails dev` and
// the scripts set it.
const EngineEnv = "SHEPHERD_ENGINE"

// DefaultEnginePath is $SHEPHERD_ENGINE, or shepherd-engine in the folder of
// the running executable (build/bin, or the macOS bundle's Contents/MacOS).
func DefaultEnginePath() string {
	if p := os.Getenv(EngineEnv); p != "" {
		return p
	}
	return besideExecutable("shepherd-engine")
}

func besideExecutable(name string) string {
	exe, err := os.Executable()
	if err != nil {
		return name
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return filepath.Join(filepath.Dir(exe), name)
}

// ErrEngineDidNotStart wraps why an engine started by StartEngine never
// answered.
var ErrEngineDidNotStart = errors.New("the engine did not start")

// StartEngine starts `bin serve` detached from the caller — in a session of
// its own, its console appended to p.EngineConsole() — so that it outlives
// the window that started it, however that window ends. It returns once the
// engine answers (or another engine, started at the same moment, owns the
// data folder and answers), within ctx. The engine gets the caller's
// environment without the variables named in without (those the window set
// for itself only: the agents the engine starts must not inherit them).
func StartEngine(ctx context.Context, bin string, p paths.Paths, without ...string) (api.EngineInfo, error) {
	if err := p.Ensure(); err != nil {
		return api.EngineInfo{}, fmt.Errorf("create Shepherd's folders: %w", err)
	}
	// One that answers already is the engine: starting another would only
	// leave a process that takes the data folder once this one quits.
	if info, err := answering(ctx, p); err == nil {
		return info, nil
	}
	console, err := os.OpenFile(p.EngineConsole(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return api.EngineInfo{}, fmt.Errorf("open the engine's console log: %w", err)
	}
	defer console.Close()
	start, _ := console.Seek(0, 2)
	cmd := exec.Command(bin, "serve")
	cmd.Stdout, cmd.Stderr = console, console
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if len(without) > 0 {
		cmd.Env = environWithout(without)
	}
	if err := cmd.Start(); err != nil {
		return api.EngineInfo{}, fmt.Errorf("%w: %v", ErrEngineDidNotStart, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it when it ends while the caller lives
	for {
		if info, err := answering(ctx, p); err == nil {
			return info, nil
		}
		select {
		case err := <-exited:
			// Another engine may have won the data folder's lock meanwhile.
			if info, aerr := answering(ctx, p); aerr == nil {
				return info, nil
			}
			return api.EngineInfo{}, fmt.Errorf("%w: %s serve ended (%v): %s", ErrEngineDidNotStart, bin, err, consoleSince(p, start))
		case <-ctx.Done():
			return api.EngineInfo{}, fmt.Errorf("%w: %s serve did not answer in time: %s", ErrEngineDidNotStart, bin, consoleSince(p, start))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// environWithout is this process's environment without the named variables.
func environWithout(names []string) []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		if !slices.Contains(names, strings.SplitN(kv, "=", 2)[0]) {
			out = append(out, kv)
		}
	}
	return out
}

// answering is the engine named by engine.json if it answers.
func answering(ctx context.Context, p paths.Paths) (api.EngineInfo, error) {
	info, err := api.ReadEngineInfo(p.EngineFile())
	if err != nil {
		return info, err
	}
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err = api.Call(sctx, api.NewClient(info), api.GetEngine, api.NoInput{})
	return info, err
}

// consoleSince is the last lines the engine wrote to its console since
// offset, for an error message.
func consoleSince(p paths.Paths, offset int64) string {
	c, err := logtail.Since(p.EngineConsole(), offset, 2048, true)
	if err != nil || len(bytes.TrimSpace(c.Data)) == 0 {
		return "it wrote nothing"
	}
	return string(bytes.TrimSpace(c.Data))
}
