// Package engine is the engine's setup: the lock on the data folder, the
// supervisor, the event bus, the HTTP API (on loopback TCP or, for a host
// reached over SSH, on a Unix socket), engine.json, and the serve loop; and
// the start of a detached engine process (StartEngine). `shepherd serve`
// (package cli) and the desktop window (package app) are both thin over it.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"shepherd/backend/api"
	"shepherd/backend/eventbus"
	"shepherd/backend/hosts/bootstrap"
	"shepherd/backend/hosts/manager"
	"shepherd/backend/hosts/registry"
	"shepherd/backend/instance"
	"shepherd/backend/logging"
	"shepherd/backend/notify"
	"shepherd/backend/paths"
	"shepherd/backend/prefs"
	"shepherd/backend/supervisor"
)

// The API serves the real engine.
var _ api.Engine = (*supervisor.Engine)(nil)

// ShimEnv names the environment variable that overrides the shim's path.
const ShimEnv = "SHEPHERD_SHIM"

// EventEngineQuit is the event the engine sends its clients when it was
// asked to quit (`shepherd quit`, a window's Quit): the windows close.
const EventEngineQuit = "engine:quit"

// Options configure a Host. Zero values are the defaults of `shepherd
// serve`.
type Options struct {
	Listen   string             // loopback host:port; "": 127.0.0.1:0
	Paths    *paths.Paths       // nil: paths.Default()
	ShimPath string             // "": $SHEPHERD_SHIM, else shepherd-shim next to the executable
	Emitter  supervisor.Emitter // pushed events (the GUI's bridge); may be nil
	Notifier notify.Notifier    // native notifications (the GUI's); may be nil
	Logger   *zerolog.Logger    // nil: the app log file plus Console
	Console  io.Writer          // console log lines and the start-up message; nil: os.Stderr
	// OnQuit is called when a client asks the engine to quit (`shepherd
	// quit`, POST /v1/engine/quit); nil: Serve returns. The app passes its
	// own quit, which ends the window too.
	OnQuit func()
	// Heartbeat of idle event streams; 0: the API's default.
	Heartbeat time.Duration
	// Socket makes the API listen only on a Unix socket (0600) in the
	// runtime folder (SocketFile), never on TCP: the engine of a host
	// reached over SSH. Listen must then be empty.
	Socket bool
	// Version is what GET /v1/engine reports; "": "dev".
	Version string
}

// Host is a running engine with its API: the lock on the data folder, the
// engine, the HTTP server and engine.json. `shepherd serve` runs one; the
// desktop app embeds one and uses Engine directly.
type Host struct {
	Engine *supervisor.Engine
	Bus    *eventbus.Bus // the engine's events, for every client
	Info   api.EngineInfo
	Paths  paths.Paths
	Logger zerolog.Logger

	quit     chan struct{} // closed when a client asks to quit (no OnQuit)
	quitOnce sync.Once

	server     apiServer
	socket     string           // the Unix socket the API listens on (Socket mode)
	hosts      *manager.Manager // other machines' engines (not on a host's own engine)
	lock       *instance.Lock
	logCloser  io.Closer
	closeOnce  sync.Once
	closeError error
}

// Start takes the data folder's lock, starts the engine and its API, and
// writes engine.json. A second engine on the same data folder is refused
// with an error that wraps instance.ErrLocked.
func Start(ctx context.Context, opts Options) (_ *Host, err error) {
	if opts.Socket && opts.Listen != "" {
		return nil, errors.New("listen on a Unix socket or on a TCP address, not both (--socket with --listen)")
	}
	listen, err := api.CheckListenAddr(opts.Listen)
	if err != nil {
		return nil, err
	}
	p := paths.Default()
	if opts.Paths != nil {
		p = *opts.Paths
	}
	if err := p.Ensure(); err != nil {
		return nil, fmt.Errorf("create Shepherd's folders: %w", err)
	}
	h := &Host{Paths: p, quit: make(chan struct{})}
	defer func() {
		if err != nil {
			_ = h.release()
		}
	}()
	if h.lock, err = instance.Acquire(p.LockFile()); err != nil {
		return nil, err
	}
	console := opts.Console
	if console == nil {
		console = os.Stderr
	}
	if opts.Logger != nil {
		h.Logger = *opts.Logger
	} else {
		h.Logger, h.logCloser, err = logging.New(p.AppLog(), console, zerolog.InfoLevel)
		if err != nil {
			return nil, fmt.Errorf("open the app log %s: %w", p.AppLog(), err)
		}
	}
	shim := opts.ShimPath
	if shim == "" {
		shim = DefaultShimPath()
	}
	if _, serr := os.Stat(shim); serr != nil {
		h.Logger.Warn().Str("shim", shim).Err(serr).Msg("agent shim not found; starting agents will fail")
	}
	h.Bus = eventbus.New(eventbus.Options{Next: opts.Emitter})
	h.Engine, err = supervisor.New(supervisor.Config{
		DataDir:  p.Data,
		ShimPath: shim,
		Emitter:  h.Bus,
		Notifier: opts.Notifier,
		Logger:   h.Logger,
		// Logs and pause signals through the kernel's file-change
		// notification: an idle engine does not poll.
		WatchFiles: true,
		// Hidden from every sandboxed agent: the records and logs, the app
		// log, the preferences, and engine.json with the API token.
		Private: []string{p.Data, p.State, p.Config, p.Runtime},
		// An idle engine wakes only for its passes, and the Go runtime then
		// seldom gets to give back what a burst (agents starting, a busy
		// window) left free: at most every trimEvery, after a wakeup of
		// the passes, it is given back.
		AfterPasses: trimMemory(),
	})
	if err != nil {
		return nil, fmt.Errorf("start the engine: %w", err)
	}
	token, err := api.NewToken()
	if err != nil {
		return nil, err
	}
	quit := opts.OnQuit
	if quit == nil {
		quit = func() { h.quitOnce.Do(func() { close(h.quit) }) }
	}
	// Asked to quit, the engine first tells its clients, so that the
	// windows attached to it close too.
	quitAll := func() {
		h.Bus.Emit(EventEngineQuit, map[string]int{"pid": os.Getpid()})
		quit()
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	apiOpts := api.Options{Version: version, Bus: h.Bus, Heartbeat: opts.Heartbeat, Quit: quitAll}
	if !opts.Socket {
		h.hosts, err = manager.New(manager.Options{File: filepath.Join(p.Data, registry.FileName), Logger: h.Logger,
			Builds: bootstrap.Builds{Dir: manager.BuildsDir(), Version: version}, Emit: h.Bus.Emit})
		if err != nil {
			return nil, fmt.Errorf("read the hosts: %w", err)
		}
		apiOpts.Hosts = h.hosts
	}
	handler := api.New(h.Engine, token, apiOpts)
	if opts.Socket {
		// Reached through SSH only. Agents get no API address: the hooks
		// and MCP of their CLIs speak HTTP over TCP.
		h.socket = SocketFile(p)
		var srv *socketServer
		if srv, err = serveSocket(h.socket, handler); err != nil {
			return nil, err
		}
		h.server = srv
		h.Info = api.EngineInfo{URL: "unix://" + h.socket, Token: token, PID: os.Getpid()}
		err = writeSocketEngineInfo(p.EngineFile(), h.Info, h.socket)
	} else {
		var srv *api.Server
		if srv, err = api.Serve(context.Background(), listen, handler); err != nil {
			return nil, err
		}
		h.server = srv
		h.Info = api.EngineInfo{URL: srv.URL, Token: token, PID: os.Getpid()}
		h.Engine.SetAPIURL(srv.URL)
		err = api.WriteEngineInfo(p.EngineFile(), h.Info)
	}
	if err != nil {
		return nil, err
	}
	h.Logger.Info().Str("url", h.Info.URL).Int("pid", h.Info.PID).Str("engineFile", p.EngineFile()).
		Msg("engine API listening")
	// Every known project is loaded (synced, its agents watched) in the
	// background, so the API answers at once.
	go h.Engine.LoadAll()
	return h, nil
}

// Done is closed if the API server stops by itself (not by Close).
func (h *Host) Done() <-chan struct{} { return h.server.Done() }

// Close removes engine.json, stops the API (waiting a little for requests
// under way), closes the engine — its agents keep running, they are durable —
// and releases the lock. It is safe to call more than once.
func (h *Host) Close() error {
	h.closeOnce.Do(func() { h.closeError = h.release() })
	return h.closeError
}

func (h *Host) release() error {
	var errs []error
	if h.Info.URL != "" {
		if err := api.RemoveEngineInfo(h.Paths.EngineFile(), h.Info); err != nil {
			errs = append(errs, fmt.Errorf("remove engine.json: %w", err))
		}
	}
	if h.Bus != nil {
		h.Bus.Close() // ends the event streams, so the server can shut down
	}
	if h.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = h.server.Shutdown(ctx)
		cancel()
	}
	if h.hosts != nil {
		h.hosts.Close() // the hosts' engines and agents keep running
	}
	if h.Engine != nil {
		h.Engine.Close()
		h.Logger.Info().Msg("engine closed; agents keep running")
	}
	if h.socket != "" {
		if err := os.Remove(h.socket); err != nil && !os.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("remove the API socket: %w", err))
		}
	}
	if h.lock != nil {
		if err := h.lock.Release(); err != nil {
			errs = append(errs, fmt.Errorf("release the engine lock: %w", err))
		}
	}
	if h.logCloser != nil {
		_ = h.logCloser.Close()
	}
	return errors.Join(errs...)
}

// Serve runs a Host until ctx is done (SIGINT/SIGTERM for `shepherd serve`),
// then closes it.
func Serve(ctx context.Context, opts Options) error {
	h, err := Start(ctx, opts)
	if err != nil {
		return err
	}
	console := opts.Console
	if console == nil {
		console = os.Stderr
	}
	fmt.Fprintf(console, "Shepherd engine listening on %s (pid %d). Ctrl-C stops the engine; agents keep running.\n",
		h.Info.URL, h.Info.PID)
	var serveErr error
	select {
	case <-ctx.Done():
	case <-h.Done():
		serveErr = h.server.Err()
	case <-h.quit:
		fmt.Fprintln(console, "Asked to quit.")
		h.StopAgentsIfAsked()
	}
	return errors.Join(serveErr, h.Close())
}

// StopAgentsIfAsked stops the agents of every project when the user's
// preference says to on quit (off by default: agents outlive Shepherd),
// within a bounded time.
func (h *Host) StopAgentsIfAsked() {
	p, err := prefs.Load()
	if err != nil {
		h.Logger.Warn().Err(err).Msg("cannot read the preferences; agents are left running")
		return
	}
	if !p.StopAgentsOnQuit {
		h.Logger.Info().Msg("quit: agents keep running")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, pr := range h.Engine.Projects() {
		res, err := h.Engine.StopAll(ctx, pr.ID)
		if err != nil {
			h.Logger.Warn().Err(err).Str("project", pr.ID).Msg("stop on quit")
			continue
		}
		h.Logger.Info().Str("project", pr.ID).Int("agents", len(res)).Msg("stopped agents on quit")
	}
}

// DefaultShimPath is $SHEPHERD_SHIM, or shepherd-shim in the folder of the
// running executable.
func DefaultShimPath() string {
	if p := os.Getenv(ShimEnv); p != "" {
		return p
	}
	return besideExecutable("shepherd-shim")
}

// trimEvery spaces the engine's returns of free memory to the system.
const trimEvery = 2 * time.Minute

// trimMemory returns free memory to the system at most every trimEvery
// (a collection of a small heap: a few milliseconds).
func trimMemory() func() {
	var last time.Time
	return func() {
		if now := time.Now(); now.Sub(last) >= trimEvery {
			last = now
			debug.FreeOSMemory()
		}
	}
}
