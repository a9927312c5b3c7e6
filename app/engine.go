package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"shepherd/backend/api"
	"shepherd/backend/engine"
	"shepherd/backend/instance"
	"shepherd/backend/notify"
	"shepherd/backend/paths"
	"shepherd/backend/supervisor"
)

// The window talks to one engine through its API (api.Client): the engine it
// started or found (the usual case: `shepherd serve`, another window, or
// the shepherd-engine it started), over HTTP with its events through GET
// /v1/events; or, without an engine binary, the engine it embeds, whose API
// handler it calls in this process.

// Engine states the window shows.
const (
	EngineEmbedded = "embedded" // this window runs the engine
	EngineAttached = "attached" // another process runs it; this window is its client
	EngineLost     = "lost"     // the engine this window was attached to went away
	EngineNone     = "none"     // no engine: it could not start
)

// EngineStatus tells the window which engine it talks to, where its API
// listens (so the CLI and scripts can reach the same engine), and what is
// wrong when there is none.
type EngineStatus struct {
	State   string `json:"state"`
	URL     string `json:"url"`
	PID     int    `json:"pid"`
	DataDir string `json:"dataDir"`
	Message string `json:"message,omitempty"`
	// Alerts are what about the engine itself needs the user (its data
	// folder's disk nearly full), shown at the top of Needs you; pushed
	// again as engine:alerts when they change.
	Alerts []supervisor.Alert `json:"alerts,omitempty"`
}

// EventEngineStatus is pushed when the engine the window talks to changes.
const EventEngineStatus = "engine:status"

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

// startEngine makes the window a client of the engine: the one that owns
// the data folder (started by `shepherd serve`, at login, or by another
// window), or else one it starts itself, detached — `shepherd-engine
// serve`, a headless process built without cgo, which outlives the window
// however the window ends. Without an engine binary (a test build, `wails
// dev` without SHEPHERD_ENGINE) the engine runs inside the window.
func (a *App) startEngine() {
	if a.attach() == nil {
		return
	}
	if bin := engine.DefaultEnginePath(); fileExists(bin) {
		ctx, cancel := context.WithTimeout(context.Background(), engineStartTimeout)
		_, err := engine.StartEngine(ctx, bin, paths.Default(), webViewEnvSet...)
		cancel()
		if err == nil {
			if err = a.attach(); err == nil {
				return
			}
		}
		a.mu.Lock()
		a.engineErr = err
		a.mu.Unlock()
		a.emit(EventEngineStatus, a.status())
		return
	}
	a.embedEngine()
}

// engineStartTimeout bounds the wait for a started engine to answer.
const engineStartTimeout = 15 * time.Second

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// embedEngine runs the same engine and API as `shepherd serve` inside the
// app. If another engine already owns the data folder, the window becomes
// its client instead.
func (a *App) embedEngine() {
	h, err := engine.Start(context.Background(), engine.Options{Version: a.version, Emitter: emitter{a}, Notifier: notify.Func(a.notifyNative),
		OnQuit: a.quit})
	if errors.Is(err, instance.ErrLocked) {
		if rerr := a.attach(); rerr == nil {
			return
		} else {
			err = fmt.Errorf("%w; the engine that holds it does not answer: %v", err, rerr)
		}
	}
	a.mu.Lock()
	a.host, a.engineErr = h, err
	if h != nil {
		a.local = api.NewInProcess(api.New(h.Engine, h.Info.Token, api.Options{Version: a.version, Bus: h.Bus}), h.Info.Token)
	}
	a.mu.Unlock()
	a.emit(EventEngineStatus, a.status())
}

// attach makes the window a client of the engine named by engine.json.
func (a *App) attach() error {
	info, err := api.ReadEngineInfo(paths.Default().EngineFile())
	if err != nil {
		return err
	}
	r := api.NewClient(info)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	st, err := api.Call(ctx, r, api.GetEngine, api.NoInput{})
	cancel()
	if err != nil {
		return err
	}
	sctx, stop := context.WithCancel(context.Background())
	a.mu.Lock()
	a.remote, a.remoteInfo, a.remotePID, a.engineErr = r, info, st.Body.PID, nil
	a.stopRemote = stop
	a.mu.Unlock()
	go a.followRemote(sctx, r)
	a.emit(EventEngineStatus, a.status())
	return nil
}

// followRemote passes the attached engine's events on to the window, until
// the window detaches or the engine goes away (then the window says so).
func (a *App) followRemote(ctx context.Context, r *api.Client) {
	var last uint64
	for ctx.Err() == nil {
		in := api.StreamIn{}
		if last > 0 {
			in.LastEventID = strconv.FormatUint(last, 10)
		}
		err := r.Stream(ctx, in, func(ev api.StreamEvent) error {
			if ev.ID > 0 {
				last = ev.ID
			}
			switch ev.Name {
			case "hello":
				a.following.Store(true)
				return nil
			case "dropped":
				return nil
			case "reset": // missed too much: the window fetches everything again
				a.emit(EventEngineStatus, a.status())
				return nil
			case "notify":
				var n notify.Notification
				if json.Unmarshal(ev.Data, &n) == nil {
					a.notifyNative(n)
				}
			case engine.EventEngineQuit: // `shepherd quit`: the window goes with its engine
				a.engineQuit.Store(true)
				a.quit()
				return nil
			}
			a.emit(ev.Name, json.RawMessage(ev.Data))
			return nil
		}, api.Reveal(true))
		if ctx.Err() != nil {
			return
		}
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, serr := api.Call(sctx, r, api.GetEngine, api.NoInput{})
		cancel()
		if serr != nil {
			a.mu.Lock()
			a.lost = fmt.Sprintf("The engine (pid %d) went away: %v", a.remotePID, err)
			a.mu.Unlock()
			a.emit(EventEngineStatus, a.status())
			return
		}
		// Dropped (the window was slow) or a network hiccup: go on from the
		// last event seen.
		time.Sleep(200 * time.Millisecond)
	}
}

// StartEngine starts an engine in this window after the one it was
// attached to went away (or attaches to another that took its place).
func (a *App) StartEngine() (EngineStatus, error) {
	a.mu.Lock()
	if a.host != nil {
		a.mu.Unlock()
		return a.status(), nil
	}
	if a.stopRemote != nil {
		a.stopRemote()
	}
	a.remote, a.stopRemote, a.lost = nil, nil, ""
	a.mu.Unlock()
	a.startEngine()
	st := a.status()
	if st.State == EngineNone {
		return st, errors.New(st.Message)
	}
	return st, nil
}

// quit ends the app: the menu's Quit Shepherd, a signal, or the API's POST
// /v1/engine/quit (`shepherd quit`). Before the window is up, start-up
// sees the flag and quits at once.
func (a *App) quit() {
	a.quitting.Store(true)
	a.armQuitDeadline()
	if ctx := a.wailsContext(); ctx != nil {
		a.quitFn(ctx)
	}
}

// engineQuitTimeout bounds the window's request that its engine quit.
const engineQuitTimeout = 1500 * time.Millisecond

// OnShutdown is the hook for options.App.OnShutdown: the agents are stopped
// if the preference says so, log follows end, the engine stops watching and
// its API closes; the agents keep running (they are durable). A window
// attached to another engine only detaches from it.
func OnShutdown(a *App) func(context.Context) {
	return func(context.Context) {
		a.shuttingDown.Store(true)
		a.mu.Lock()
		h, hub, stop, r, lost := a.host, a.follow, a.stopRemote, a.remote, a.lost
		a.host, a.local, a.follow, a.remote, a.stopRemote = nil, nil, nil, nil, nil
		a.mu.Unlock()
		if stop != nil {
			stop()
		}
		// Quit quits Shepherd, not only this window: the engine it talks to
		// is asked to quit too (it applies the stop-on-quit preference),
		// unless that engine is what asked.
		if r != nil && lost == "" && a.quitting.Load() && !a.engineQuit.Load() {
			ctx, cancel := context.WithTimeout(context.Background(), engineQuitTimeout)
			if _, err := api.Call(ctx, r, api.QuitEngine, api.NoInput{}); err != nil {
				l := a.logger()
				l.Warn().Err(err).Msg("quit: the engine did not answer; it keeps running")
			}
			cancel()
		}
		if hub != nil {
			hub.Close()
		}
		if h != nil {
			h.StopAgentsIfAsked()
			_ = h.Close()
		}
	}
}

// Engine reports which engine the window talks to, or why there is none,
// with the engine's alerts.
func (a *App) Engine() (EngineStatus, error) {
	st := a.status()
	if st.State == EngineNone {
		return st, errors.New(st.Message)
	}
	if c, err := a.client(); err == nil {
		if e, err := api.Call(context.Background(), c, api.GetEngine, api.NoInput{}); err == nil {
			st.Alerts = e.Body.Alerts
		}
	}
	return st, nil
}

func (a *App) status() EngineStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.host != nil:
		return EngineStatus{State: EngineEmbedded, URL: a.host.Info.URL, PID: a.host.Info.PID, DataDir: a.host.Paths.Data}
	case a.remote != nil && a.lost != "":
		return EngineStatus{State: EngineLost, URL: a.remoteInfo.URL, PID: a.remotePID, DataDir: paths.Default().Data, Message: a.lost}
	case a.remote != nil:
		return EngineStatus{State: EngineAttached, URL: a.remoteInfo.URL, PID: a.remotePID, DataDir: paths.Default().Data}
	case a.engineErr != nil:
		return EngineStatus{State: EngineNone, Message: "the engine did not start: " + a.engineErr.Error()}
	}
	return EngineStatus{State: EngineNone, Message: "the engine is not running"}
}

// client is the API of the engine the window talks to, or why there is
// none.
func (a *App) client() (*api.Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.host != nil:
		return a.local, nil
	case a.remote != nil && a.lost != "":
		return nil, errors.New(a.lost)
	case a.remote != nil:
		return a.remote, nil
	case a.engineErr != nil:
		return nil, fmt.Errorf("the engine did not start: %w", a.engineErr)
	}
	return nil, errors.New("the engine is not running")
}
