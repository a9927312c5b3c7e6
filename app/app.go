// Package app is the thin layer Wails binds to the frontend. Every exported
// method of a bound struct becomes a JavaScript call, so lifecycle hooks stay
// unexported and the logic lives in backend/.
package app

import (
	"context"
	"sync"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"shepherd/backend/cli"
)

// App is the bound struct of the window. It grows one service per area later.
type App struct {
	version string

	mu        sync.Mutex // guards the fields below, set on start-up and read from other goroutines
	ctx       context.Context
	host      *cli.Host
	engineErr error
}

// New returns an App ready to be bound; version is what Version reports.
func New(version string) *App { return &App{version: version} }

// OnStartup is the hook for options.App.OnStartup. It is a function rather
// than a method so that Wails does not expose it to the frontend.
func OnStartup(a *App) func(context.Context) { return a.startup }

// startup keeps the Wails context, which every runtime call needs, and
// starts the embedded engine.
func (a *App) startup(ctx context.Context) {
	a.mu.Lock()
	a.ctx = ctx
	a.mu.Unlock()
	a.startEngine()
}

// wailsContext is the context from startup; nil before it.
func (a *App) wailsContext() context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ctx
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
