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

// EventNotify is the engine's toast payload (a notify.Notification).
const EventNotify = "notify"

// emitter bridges the engine's pushed events to Wails events, and hands
// notifications to the native notifier too.
type emitter struct{ a *App }

func (e emitter) Emit(event string, data any) {
	e.a.emit(event, data)
	if event != EventNotify {
		return
	}
	var n notify.Notification
	switch v := data.(type) {
	case notify.Notification:
		n = v
	case *notify.Notification:
		if v == nil {
			return
		}
		n = *v
	default:
		return
	}
	// Never block the engine: a full queue drops the desktop copy (the
	// window's toast still shows).
	select {
	case e.a.notes <- n:
	default:
	}
}

// startNotes runs the goroutine that shows native notifications, apart from
// the engine's goroutines (a notification service can be slow, and settings
// are read from the engine).
func (a *App) startNotes() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopNotes != nil {
		return
	}
	a.notes = make(chan notify.Notification, 64)
	a.stopNotes = make(chan struct{})
	notes, stop := a.notes, a.stopNotes
	go func() {
		for {
			select {
			case <-stop:
				return
			case n := <-notes:
				if a.wantNative(n) {
					a.native.Notify(n)
				}
			}
		}
	}()
}

// wantNative follows the engine, which marks each notification with what
// the project's settings want (native on/off, completions opt-in).
func (a *App) wantNative(n notify.Notification) bool { return n.Native }

// startEngine runs the same engine and API as `shepherd serve` inside the
// app. If another engine already owns the data folder, the window says so.
func (a *App) startEngine() {
	h, err := cli.Start(context.Background(), cli.ServeOptions{Emitter: emitter{a}})
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
		h, hub, stop := a.host, a.follow, a.stopNotes
		a.host, a.follow, a.stopNotes = nil, nil, nil
		a.mu.Unlock()
		if hub != nil {
			hub.Close()
		}
		if stop != nil {
			close(stop)
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
