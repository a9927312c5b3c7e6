// Package manager is the local engine's side of hosts (SPEC "Hosts"): the
// registry of hosts the user added, one connection to each (a
// hosts.Provider: SSH), their state, the proxy's way to each host's engine,
// and each host's event stream followed into the local one. A host that is
// lost is only that: its agents keep running under its own engine, nothing
// is recovered here, and when it is back its stream resumes where it left
// off (Last-Event-ID) and what happened there meanwhile is told once
// (api.HostAway, event host:away).
package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"shepherd/backend/api"
	"shepherd/backend/hosts"
	"shepherd/backend/hosts/bootstrap"
	"shepherd/backend/hosts/hostkeys"
	"shepherd/backend/hosts/registry"
	"shepherd/backend/hosts/sshconfig"
	"shepherd/backend/hosts/sshconn"
)

// Options configure a Manager.
type Options struct {
	// File is the registry (registry.FileName in the data folder).
	File string
	// Builds are the engines to install on hosts.
	Builds bootstrap.Builds
	// SSH is the base of every host's connection options (whose ~/.ssh,
	// keepalives, backoff); OnState is the manager's own.
	SSH sshconn.Options
	// Emit receives host:state, host:event, host:away and host:removed
	// (the local engine's bus); may be nil.
	Emit   func(event string, data any)
	Logger zerolog.Logger
	Clock  clockwork.Clock
	// RetryMin and RetryMax bound the wait between attempts to reach a
	// host that could not be reached at all (sshconn's own backoff takes
	// over once it was); defaults 1 s and 1 min.
	RetryMin, RetryMax time.Duration
}

// Manager holds every host.
type Manager struct {
	opts Options
	reg  *registry.File

	mu     sync.Mutex
	hosts  map[string]*host
	closed bool
	wg     sync.WaitGroup
}

var _ api.Hosts = (*Manager)(nil)

// New reads the registry and starts reaching every host in it, in the
// background.
func New(opts Options) (*Manager, error) {
	if opts.Clock == nil {
		opts.Clock = clockwork.NewRealClock()
	}
	if opts.RetryMin <= 0 {
		opts.RetryMin = time.Second
	}
	if opts.RetryMax < opts.RetryMin {
		opts.RetryMax = max(time.Minute, opts.RetryMin)
	}
	if opts.SSH.Clock == nil {
		opts.SSH.Clock = opts.Clock
	}
	if opts.SSH.Env.Home == "" {
		env, err := sshconfig.DefaultEnv()
		if err != nil {
			return nil, err
		}
		opts.SSH.Env = env
	}
	opts.SSH.Logger = opts.Logger
	m := &Manager{opts: opts, reg: &registry.File{Path: opts.File}, hosts: map[string]*host{}}
	list, err := m.reg.List()
	if err != nil {
		// An unreadable list keeps no engine from starting: it is moved
		// aside (for the user to read) and the hosts start empty.
		aside := opts.File + ".broken-" + opts.Clock.Now().UTC().Format("20060102T150405")
		if rerr := os.Rename(opts.File, aside); rerr != nil {
			return nil, fmt.Errorf("%w (and it could not be moved aside: %v)", err, rerr)
		}
		opts.Logger.Error().Err(err).Str("movedTo", aside).Msg("the hosts' list could not be read; moved aside")
		list = nil
	}
	for _, r := range list {
		h := m.newHost(r)
		h.loadSeen()
		m.hosts[r.Name] = h
		m.start(h, nil, nil)
	}
	return m, nil
}

// Close ends every host's connection; their engines and agents keep
// running.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	hs := make([]*host, 0, len(m.hosts))
	for _, h := range m.hosts {
		hs = append(hs, h)
	}
	m.mu.Unlock()
	for _, h := range hs {
		h.stop()
	}
	m.wg.Wait()
}

func (m *Manager) emit(event string, data any) {
	if m.opts.Emit != nil {
		m.opts.Emit(event, data)
	}
}

// ListHosts lists the hosts by name.
func (m *Manager) ListHosts() []api.HostView {
	m.mu.Lock()
	hs := make([]*host, 0, len(m.hosts))
	for _, h := range m.hosts {
		hs = append(hs, h)
	}
	m.mu.Unlock()
	out := make([]api.HostView, 0, len(hs))
	for _, h := range hs {
		out = append(out, h.view())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (m *Manager) get(name string) (*host, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h, ok := m.hosts[name]; ok {
		return h, nil
	}
	return nil, api.HostProblem(http.StatusNotFound, "HostNotFound", fmt.Sprintf("Host '%s' not found", name))
}

// GetHost is one host.
func (m *Manager) GetHost(name string) (api.HostView, error) {
	h, err := m.get(name)
	if err != nil {
		return api.HostView{}, err
	}
	return h.view(), nil
}

// AddHost connects to a new host (accepting its key when acceptKey is the
// fingerprint it offers and known_hosts does not know it), readies its
// engine and keeps it. Nothing is kept when any of it fails.
func (m *Manager) AddHost(ctx context.Context, name, url, acceptKey string) (api.HostView, error) {
	if err := registry.CheckName(name); err != nil {
		return api.HostView{}, api.HostProblem(http.StatusBadRequest, "ValidationError", err.Error())
	}
	if err := registry.CheckURL(url); err != nil {
		return api.HostView{}, api.HostProblem(http.StatusBadRequest, "ValidationError", err.Error())
	}
	m.mu.Lock()
	_, taken := m.hosts[name]
	m.mu.Unlock()
	if taken {
		return api.HostView{}, api.HostProblem(http.StatusConflict, "HostExists", fmt.Sprintf("Host '%s' already exists", name))
	}
	h := m.newHost(registry.Host{Name: name, URL: url, AddedAt: m.opts.Clock.Now().UTC()})
	addr, tr, err := h.provider().Open(ctx)
	var unknown *hostkeys.UnknownKeyError
	if errors.As(err, &unknown) && acceptKey != "" {
		if acceptKey != unknown.Fingerprint {
			return api.HostView{}, api.HostProblem(http.StatusConflict, "HostKeyUnknown",
				fmt.Sprintf("the host key of %s is %s %s, not %s: not accepted", name, unknown.Type, unknown.Fingerprint, acceptKey))
		}
		target, rerr := sshconfig.Resolve(url, m.opts.SSH.Env)
		if rerr != nil {
			return api.HostView{}, rerr
		}
		if aerr := sshconn.HostKeys(target).Accept(unknown.Host, unknown.Key); aerr != nil {
			return api.HostView{}, hostError(name, aerr)
		}
		m.opts.Logger.Info().Str("host", name).Str("fingerprint", unknown.Fingerprint).Msg("host key accepted")
		addr, tr, err = h.provider().Open(ctx)
	}
	if err != nil {
		return api.HostView{}, hostError(name, err)
	}
	m.mu.Lock()
	if _, taken := m.hosts[name]; taken || m.closed {
		m.mu.Unlock()
		tr.Close()
		return api.HostView{}, api.HostProblem(http.StatusConflict, "HostExists", fmt.Sprintf("Host '%s' already exists", name))
	}
	if err := m.reg.Add(h.reg); err != nil {
		m.mu.Unlock()
		tr.Close()
		return api.HostView{}, err
	}
	m.hosts[name] = h
	m.mu.Unlock()
	m.opts.Logger.Info().Str("host", name).Str("url", url).Str("engine", addr.Version).Int("pid", addr.PID).Msg("host added")
	ready := make(chan struct{})
	m.start(h, &opened{addr, tr}, ready)
	select {
	case <-ready: // its agents counted, its stream followed
	case <-ctx.Done():
	case <-time.After(addSettle): // added all the same; its state says what follows
	}
	return h.view(), nil
}

// addSettle bounds how long AddHost waits for the new host's first look
// (its agents counted) before it answers.
const addSettle = 30 * time.Second

// RemoveHost forgets a host and closes its connection; its engine and
// agents keep running there.
func (m *Manager) RemoveHost(name string) error {
	h, err := m.get(name)
	if err != nil {
		return err
	}
	if err := m.reg.Remove(name); err != nil && !errors.Is(err, registry.ErrNotFound) {
		return err
	}
	m.mu.Lock()
	delete(m.hosts, name)
	m.mu.Unlock()
	h.mu.Lock()
	h.removed = true
	h.mu.Unlock()
	h.stop()
	m.forgetSeen(name)
	m.emit(api.EventHostRemoved, api.HostRemoved{Name: name, Removed: true})
	m.opts.Logger.Info().Str("host", name).Msg("host removed")
	return nil
}

// HostTransport is the way to a connected host's engine.
func (m *Manager) HostTransport(name string) (http.RoundTripper, func() string, error) {
	h, err := m.get(name)
	if err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	rt, tr := h.rt, h.tr
	h.mu.Unlock()
	v := h.view()
	if tr == nil || v.State != api.HostConnected {
		return nil, nil, api.HostProblem(http.StatusServiceUnavailable, "HostUnreachable", unreachableText(v))
	}
	tok := func() string {
		if a, ok := tr.(hosts.Addressed); ok {
			return a.Address().Token
		}
		return ""
	}
	return rt, tok, nil
}

// unreachableText says why a host cannot be reached now.
func unreachableText(v api.HostView) string {
	s := fmt.Sprintf("host '%s' is %s", v.Name, v.State)
	if v.State == api.HostUnreachable || v.State == api.HostRefused {
		s += " since " + v.Since.Local().Format("15:04")
	}
	if v.Error != "" {
		s += ": " + v.Error
	}
	return s
}

// hostError is an error of reaching a host as the API answers it.
func hostError(name string, err error) error {
	var (
		unknown *hostkeys.UnknownKeyError
		ae      *api.Error
	)
	switch {
	case errors.As(err, &unknown):
		return api.HostProblem(http.StatusConflict, "HostKeyUnknown",
			fmt.Sprintf("%s. Accept it with --accept-key %s", err.Error(), unknown.Fingerprint))
	case errors.Is(err, hostkeys.ErrChangedKey), errors.Is(err, hostkeys.ErrRevokedKey):
		return api.HostProblem(http.StatusConflict, "HostKeyChanged", err.Error())
	case errors.Is(err, bootstrap.ErrNoBuild):
		return api.HostProblem(http.StatusUnprocessableEntity, "NeedsNewerEngine", fmt.Sprintf("host '%s': %v (engines for hosts are looked for in %s)", name, err, BuildsDir()))
	case errors.Is(err, sshconn.ErrAuth):
		return api.HostProblem(http.StatusUnprocessableEntity, "HostAuthFailed", err.Error())
	case errors.Is(err, bootstrap.ErrForeignEngine), errors.Is(err, bootstrap.ErrStart):
		return api.HostProblem(http.StatusUnprocessableEntity, "HostEngineFailed", err.Error())
	case errors.As(err, &ae):
		return err
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return api.HostProblem(http.StatusBadGateway, "HostUnreachable", fmt.Sprintf("host '%s' could not be reached: %v", name, err))
}

// phaseOf is the state an error to open a host leaves it in.
func phaseOf(err error) string {
	switch {
	case errors.Is(err, bootstrap.ErrNoBuild):
		return api.HostNeedsNewerEngine
	case errors.Is(err, hostkeys.ErrChangedKey), errors.Is(err, hostkeys.ErrRevokedKey),
		errors.Is(err, hostkeys.ErrUnknownKey), errors.Is(err, sshconn.ErrAuth):
		return api.HostRefused
	}
	return api.HostUnreachable
}

// BuildsEnv names the environment variable that says where the engines
// for hosts are (build_host_engines' folder); default: hosts/ beside this
// executable.
const BuildsEnv = "SHEPHERD_HOST_ENGINES"

// BuildsDir is where the engines for hosts are.
func BuildsDir() string {
	if d := os.Getenv(BuildsEnv); d != "" {
		return d
	}
	exe, err := os.Executable()
	if err != nil {
		return "hosts"
	}
	return filepath.Join(filepath.Dir(exe), "hosts")
}
