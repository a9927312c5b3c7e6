// Package app is the thin layer Wails binds to the frontend. Every exported
// method of a bound struct becomes a JavaScript call, so lifecycle hooks stay
// unexported and the logic lives in backend/.
package app

import (
	"context"
	"os"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
	"github.com/wailsapp/wails/v2/pkg/runtime"

	"shepherd/backend/api"
	"shepherd/backend/engine"
	"shepherd/backend/logfollow"
	"shepherd/backend/notify"
)

// App is the bound struct of the window; its services are bound beside it.
type App struct {
	version string

	Projects *ProjectService
	Agents   *AgentService
	Logs     *LogService
	Settings *SettingsService

	native notify.Notifier

	// emitFn sends a pushed event to the window; tests replace it.
	emitFn func(ctx context.Context, event string, data any)

	// quitFn ends the app and hideFn hides the window (runtime.Quit and
	// runtime.WindowHide); tests replace them.
	quitFn func(ctx context.Context)
	hideFn func(ctx context.Context)

	// quitting is set once the user (or a signal, or the engine) asked the
	// app to quit: from then on a close is let through instead of hiding the
	// window, since Wails routes its own quit through the before-close hook.
	quitting     atomic.Bool
	shuttingDown atomic.Bool // OnShutdown has begun
	engineQuit   atomic.Bool // the engine asked this window to quit
	following    atomic.Bool // the attached engine's event stream has said hello
	deadlineOnce sync.Once
	// exitFn ends the process when a quit does not end it in time (os.Exit);
	// tests replace it.
	exitFn func(code int)

	mu         sync.Mutex // guards the fields below, set on start-up and read from other goroutines
	ctx        context.Context
	host       *engine.Host // the embedded engine
	local      *api.Client  // its API, called in this process
	remote     *api.Client  // or the API of the engine this window is attached to
	remoteInfo api.EngineInfo
	remotePID  int
	stopRemote context.CancelFunc
	lost       string // why the attached engine is gone ("" while it answers)
	engineErr  error
	follow     *logfollow.Hub
	// machine is the host whose engine the window shows ("": this
	// computer's), and hostLogs its agents' logs followed over the API.
	machine  string
	hostLogs map[string]context.CancelFunc
}

// New returns an App ready to be bound; version is what Version reports.
func New(version string) *App {
	a := &App{version: version, emitFn: func(ctx context.Context, event string, data any) {
		runtime.EventsEmit(ctx, event, data)
	}, quitFn: runtime.Quit, hideFn: runtime.WindowHide, exitFn: os.Exit}
	a.Projects = &ProjectService{a}
	a.Agents = &AgentService{a}
	a.Logs = &LogService{a}
	a.Settings = &SettingsService{a}
	a.native = newNativeNotifier(a.logger)
	return a
}

// Bind lists the structs main binds to the frontend.
func Bind(a *App) []any { return []any{a, a.Projects, a.Agents, a.Logs, a.Settings} }

// OnStartup is the hook for options.App.OnStartup. It is a function rather
// than a method so that Wails does not expose it to the frontend.
func OnStartup(a *App) func(context.Context) { return a.startup }

// startup keeps the Wails context, which every runtime call needs, and
// starts the embedded engine.
func (a *App) startup(ctx context.Context) {
	a.mu.Lock()
	a.ctx = ctx
	a.mu.Unlock()
	if a.quitting.Load() { // asked to quit before the window was up
		a.quitFn(ctx)
		return
	}
	a.startEngine()
}

// wailsContext is the context from startup; nil before it.
func (a *App) wailsContext() context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ctx
}

// logger is the engine's logger, or a quiet one before the engine starts.
func (a *App) logger() zerolog.Logger {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.host != nil {
		return a.host.Logger
	}
	return zerolog.Nop()
}

// OnBeforeClose is the hook for options.App.OnBeforeClose. Closing the
// window hides it: the engine keeps supervising (stale checks, recovery,
// notifications) until the user quits (the app menu's Quit Shepherd,
// Ctrl/Cmd+Q, `shepherd quit`, or a signal). Launching Shepherd again shows
// it. Wails calls this hook for its own quit too (runtime.Quit, and its
// SIGINT/SIGTERM handler), so a quit asked for is let through.
func OnBeforeClose(a *App) func(context.Context) bool {
	return func(ctx context.Context) bool {
		if a.quitting.Load() {
			return false
		}
		a.hideFn(ctx)
		return true // prevent the close
	}
}

// Quit ends Shepherd (the app menu's Quit Shepherd).
func (a *App) Quit() { a.quit() }

// Show brings the hidden window back (the app menu, a second launch).
func (a *App) Show() { Focus(a) }

// emit sends a pushed event to the window (none before startup).
func (a *App) emit(event string, data any) {
	if ctx := a.wailsContext(); ctx != nil {
		a.emitFn(ctx, event, data)
	}
}

// Version is the version of this build.
func (a *App) Version() string { return a.version }

// Focus brings the window to the front; main calls it when a second launch
// hands over to this one. Before startup there is no window yet.
func Focus(a *App) {
	ctx := a.wailsContext()
	if ctx == nil {
		return
	}
	runtime.WindowUnminimise(ctx)
	runtime.WindowShow(ctx)
}
