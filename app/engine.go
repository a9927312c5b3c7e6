package app

import (
	"context"
	"fmt"

	"shepherd/backend/cli"
	"shepherd/backend/notify"
)

// EngineStatus tells the window where its embedded engine's API listens,
// so the CLI and scripts can reach the same engine.
type EngineStatus struct {
	URL     string `json:"url"`
	PID     int    `json:"pid"`
	DataDir string `json:"dataDir"`
}

// emitter bridges the engine's pushed events to Wails events.
type emitter struct{ a *App }

func (e emitter) Emit(event string, data any) { e.a.emit(event, data) }

// notifyNative shows a notification on the desktop when the project's
// settings want it (the engine marks each one: native on/off, completions
// opt-in). The engine calls it off its own goroutines.
func (a *App) notifyNative(n notify.Notification) {
	if n.Native {
		a.native.Notify(n)
	}
}

// startEngine runs the same engine and API as `shepherd serve` inside the
// app. If another engine already owns the data folder, the window says so.
func (a *App) startEngine() {
	h, err := cli.Start(context.Background(), cli.ServeOptions{Emitter: emitter{a}, Notifier: notify.Func(a.notifyNative)})
	a.mu.Lock()
	defer a.mu.Unlock()
	a.host, a.engineErr = h, err
}

// OnShutdown is the hook for options.App.OnShutdown: log follows end, the
// engine stops watching and its API closes; the agents keep running (they
// are durable).
func OnShutdown(a *App) func(context.Context) {
	return func(context.Context) {
		a.stopOnQuit()
		a.mu.Lock()
		h, hub := a.host, a.follow
		a.host, a.follow = nil, nil
		a.mu.Unlock()
		if hub != nil {
			hub.Close()
		}
		if h != nil {
			_ = h.Close()
		}
	}
}

// Engine reports the embedded engine, or why it could not start.
func (a *App) Engine() (EngineStatus, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.engineErr != nil {
		return EngineStatus{}, fmt.Errorf("the engine did not start: %w", a.engineErr)
	}
	if a.host == nil {
		return EngineStatus{}, fmt.Errorf("the engine is not running")
	}
	return EngineStatus{URL: a.host.Info.URL, PID: a.host.Info.PID, DataDir: a.host.Paths.Data}, nil
}
