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
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
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
	"shepherd/backend/hosts/sshhost"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
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

type opened struct {
	addr hosts.Address
	tr   hosts.Transport
}

// host is one host's connection and what is known of its engine.
type host struct {
	m      *Manager
	reg    registry.Host
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{} // a transport's state changed

	mu    sync.Mutex
	tr    hosts.Transport
	rt    http.RoundTripper
	phase string // own phase while no transport carries it
	since time.Time
	err   error
	next  time.Time
	// what the stream has seen
	lastID uint64
	pid    int
	agents map[string]*store.Record // by project/agent
	away   *api.HostAway
	lost   time.Time // when the stream was lost (zero: never, or reported)
	// what was seen is kept on disk (seen.go)
	saveTimer clockwork.Timer
	removed   bool
}

func (m *Manager) newHost(r registry.Host) *host {
	ctx, cancel := context.WithCancel(context.Background())
	return &host{m: m, reg: r, ctx: ctx, cancel: cancel, done: make(chan struct{}), wake: make(chan struct{}, 1),
		phase: api.HostConnecting, since: m.opts.Clock.Now(), agents: map[string]*store.Record{}}
}

func (h *host) provider() hosts.Provider {
	o := h.m.opts.SSH
	o.OnState = func(hosts.State) {
		select {
		case h.wake <- struct{}{}:
		default:
		}
		h.m.emit(api.EventHostState, h.view())
	}
	return sshhost.Provider{Dest: h.reg.URL, SSH: o, Bootstrap: bootstrap.Options{Builds: h.m.opts.Builds, Logger: h.m.opts.Logger}}
}

func (m *Manager) start(h *host, first *opened, ready chan struct{}) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(h.done)
		h.run(first, ready)
	}()
}

func (h *host) stop() {
	h.cancel()
	<-h.done
	h.saveSeen()
}

func (h *host) setPhase(phase string, err error) {
	now := h.m.opts.Clock.Now()
	h.mu.Lock()
	if h.phase != phase {
		h.since = now
	}
	h.phase, h.err = phase, err
	h.mu.Unlock()
	h.m.emit(api.EventHostState, h.view())
}

// view is the host as the API shows it.
func (h *host) view() api.HostView {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := api.HostView{Name: h.reg.Name, URL: h.reg.URL, State: h.phase, Since: h.since, Agents: len(h.agents), PID: h.pid,
		WhileAway: h.away}
	if h.err != nil {
		v.Error = h.err.Error()
	}
	if !h.next.IsZero() && h.phase == api.HostUnreachable {
		t := h.next
		v.NextTry = &t
	}
	if h.tr != nil && h.phase == api.HostConnected {
		st := h.tr.State()
		switch st.Phase {
		case hosts.Connecting:
			v.State, v.Since = api.HostConnecting, st.Since
		case hosts.Unreachable:
			v.State, v.Since = api.HostUnreachable, st.Since
			if st.Err != nil {
				v.Error = st.Err.Error()
			}
			if !st.Retrying {
				v.State = api.HostRefused
			} else {
				t := st.NextTry
				v.NextTry = &t
			}
		}
		if a, ok := h.tr.(hosts.Addressed); ok {
			v.Version = a.Address().Version
		}
	}
	c := h.countsLocked()
	v.Running, v.NeedsYou = c.running, c.needsYou
	return v
}

// run reaches the host until it is removed or the manager closes: it opens
// the host (retrying with backoff while it cannot be reached; waiting for
// the user when it is refused), then follows its engine's events over the
// connection for as long as it lasts.
func (h *host) run(first *opened, ready chan struct{}) {
	log := h.m.opts.Logger.With().Str("host", h.reg.Name).Logger()
	wait := h.m.opts.RetryMin
	for h.ctx.Err() == nil {
		o := first
		first = nil
		if o == nil {
			h.setPhase(api.HostConnecting, nil)
			addr, tr, err := h.provider().Open(h.ctx)
			if err != nil {
				if h.ctx.Err() != nil {
					return
				}
				phase := phaseOf(err)
				log.Warn().Err(err).Str("state", phase).Msg("host not reached")
				h.mu.Lock()
				h.next = h.m.opts.Clock.Now().Add(wait)
				if h.lost.IsZero() && len(h.agents) > 0 {
					h.lost = h.m.opts.Clock.Now()
				}
				h.mu.Unlock()
				h.setPhase(phase, err)
				// A refused host and one without a build wait longer: they need the user.
				d := wait
				if phase != api.HostUnreachable {
					d = h.m.opts.RetryMax
				}
				select {
				case <-h.ctx.Done():
					return
				case <-h.m.opts.Clock.After(d):
				}
				wait = min(wait*2, h.m.opts.RetryMax)
				continue
			}
			o = &opened{addr, tr}
		}
		wait = h.m.opts.RetryMin
		h.mu.Lock()
		h.tr, h.rt = o.tr, hosts.HTTPTransport(o.tr)
		h.next = time.Time{}
		h.mu.Unlock()
		h.setPhase(api.HostConnected, nil)
		h.follow(o.tr, log, ready)
		ready = nil
		h.mu.Lock()
		h.tr, h.rt = nil, nil
		h.mu.Unlock()
		o.tr.Close()
	}
}

// follow reads the host's event stream, again after each loss, until the
// transport ends for good (closed, refused) or the host is stopped.
func (h *host) follow(tr hosts.Transport, log zerolog.Logger, ready chan struct{}) {
	client := &api.Client{BaseURL: hosts.BaseURL, HTTP: hosts.HTTPClient(tr)}
	wait := h.m.opts.RetryMin
	for h.ctx.Err() == nil {
		err := h.stream(client, ready, log)
		ready = nil
		if h.ctx.Err() != nil {
			return
		}
		h.markLost()
		log.Info().Err(err).Msg("host's event stream ended")
		// Wait for the connection to be back (sshconn reconnects by
		// itself), or for a while if it is the engine that did not answer.
		st := tr.State()
		switch {
		case st.Phase == hosts.Closed:
			return
		case st.Phase == hosts.Unreachable && !st.Retrying:
			h.setPhase(api.HostRefused, st.Err)
			return
		case st.Phase == hosts.Connected:
			h.mu.Lock()
			h.err = err
			h.mu.Unlock()
			select {
			case <-h.ctx.Done():
				return
			case <-h.m.opts.Clock.After(wait):
			}
			wait = min(wait*2, h.m.opts.RetryMax)
			continue
		}
		wait = h.m.opts.RetryMin
		for {
			st := tr.State()
			if st.Phase == hosts.Connected {
				break
			}
			if st.Phase == hosts.Closed {
				return
			}
			if st.Phase == hosts.Unreachable && !st.Retrying {
				h.setPhase(api.HostRefused, st.Err)
				return
			}
			select {
			case <-h.ctx.Done():
				return
			case <-h.wake:
			}
		}
	}
}

func (h *host) markLost() {
	h.mu.Lock()
	if h.lost.IsZero() {
		h.lost = h.m.opts.Clock.Now()
	}
	h.mu.Unlock()
}

// stream follows the engine's events once, from the last id seen: the
// first answer (hello) says where the engine is, and a reconnect compares
// what it finds with what was known before.
func (h *host) stream(client *api.Client, ready chan struct{}, log zerolog.Logger) error {
	h.mu.Lock()
	after := h.lastID
	h.mu.Unlock()
	in := api.StreamIn{}
	if after > 0 {
		in.LastEventID = strconv.FormatUint(after, 10)
	}
	var replayUpTo uint64
	return client.Stream(h.ctx, in, func(ev api.StreamEvent) error {
		switch ev.Name {
		case "hello":
			var hello api.Hello
			_ = json.Unmarshal(ev.Data, &hello)
			replayUpTo = hello.LastEventID
			if err := h.reconcile(client, after, hello.LastEventID, log); err != nil {
				return err
			}
			if ready != nil {
				close(ready)
				ready = nil
			}
			return nil
		case "dropped":
			return fmt.Errorf("the host's engine dropped the stream: %s", ev.Data)
		case "reset", "agent:log":
			return nil
		}
		h.mu.Lock()
		if ev.ID > h.lastID {
			h.lastID = ev.ID
		}
		before := h.countsLocked()
		// Replayed events are older than the state reconcile took.
		if ev.ID == 0 || ev.ID > replayUpTo {
			h.apply(ev)
			if ev.Name == "agent:state" || ev.Name == "agent:removed" {
				h.seenChanged()
			}
		}
		changed := h.countsLocked() != before
		h.mu.Unlock()
		h.m.emit(api.EventHostEvent, api.HostEvent{Host: h.reg.Name, ID: ev.ID, Event: ev.Name, Data: json.RawMessage(ev.Data)})
		if changed { // its counts in the sidebar
			h.m.emit(api.EventHostState, h.view())
		}
		return nil
	})
}

func key(p, a string) string { return p + "/" + a }

// counts are what a host's view counts of its agents.
type counts struct{ agents, running, needsYou int }

// countsLocked counts the agents as last seen. h.mu is held.
func (h *host) countsLocked() counts {
	c := counts{agents: len(h.agents)}
	for _, r := range h.agents {
		if r.Status.Live() {
			c.running++
		}
		if r.Attention != "" {
			c.needsYou++
		}
	}
	return c
}

// apply keeps the agents' state up to date from an event. h.mu is held.
func (h *host) apply(ev api.StreamEvent) {
	switch ev.Name {
	case "agent:state":
		var r store.Record
		if json.Unmarshal(ev.Data, &r) == nil && r.ID != "" {
			h.agents[key(r.ProjectID, r.ID)] = &r
		}
	case "agent:removed":
		var ref struct {
			ProjectID string `json:"projectId"`
			AgentID   string `json:"agentId"`
		}
		if json.Unmarshal(ev.Data, &ref) == nil {
			delete(h.agents, key(ref.ProjectID, ref.AgentID))
		}
	}
}

// reconcile takes the engine's agents as they are now and, after a loss,
// tells what changed while the host was away (host:away). An engine whose
// event ids went back (or whose pid changed) was restarted: its own
// recovery's summary is added.
func (h *host) reconcile(client *api.Client, after, last uint64, log zerolog.Logger) error {
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	st, err := api.Call(ctx, client, api.GetEngine, api.NoInput{})
	if err != nil {
		return err
	}
	recs, err := api.Call(ctx, client, api.ListProcesses, api.StatsIn{})
	if err != nil {
		return err
	}
	now := map[string]*store.Record{}
	for _, r := range recs.Body {
		now[key(r.ProjectID, r.ID)] = r
	}
	h.mu.Lock()
	before, lost, pid := h.agents, h.lost, h.pid
	restarted := pid != 0 && st.Body.PID != pid || after > 0 && last < after
	h.agents, h.pid, h.lost = now, st.Body.PID, time.Time{}
	if restarted {
		h.lastID = last // the new engine's ids
	}
	h.mu.Unlock()
	h.saveSeen()
	if pid == 0 || lost.IsZero() && !restarted {
		h.m.emit(api.EventHostState, h.view())
		return nil // the first look: nothing to compare with
	}
	if lost.IsZero() {
		lost = h.m.opts.Clock.Now()
	}
	away := &api.HostAway{Lost: lost, Back: h.m.opts.Clock.Now(), EngineRestarted: restarted, Agents: changes(before, now)}
	if restarted {
		away.Recovery = whileClosed(ctx, client)
	}
	if len(away.Agents) == 0 && !restarted {
		h.m.emit(api.EventHostState, h.view())
		return nil
	}
	h.mu.Lock()
	h.away = away
	h.mu.Unlock()
	log.Info().Int("agents", len(away.Agents)).Bool("engineRestarted", restarted).Msg("host back: what happened while away")
	v := h.view()
	h.m.emit(api.EventHostAway, v)
	h.m.emit(api.EventHostState, v)
	return nil
}

// whileClosed is a restarted engine's own summary, once it has loaded its
// projects (a few seconds at most).
func whileClosed(ctx context.Context, client *api.Client) *supervisor.WhileClosed {
	for i := 0; i < 50; i++ {
		wc, err := api.Call(ctx, client, api.GetWhileClosed, api.NoInput{})
		if err == nil {
			return wc.Body
		}
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// changes are the agents whose state differs between two looks: ended
// runs (counted from the runs, restarts and resumes), a status or an
// attention that changed, agents made or removed.
func changes(before, now map[string]*store.Record) []api.HostAgentChange {
	var out []api.HostAgentChange
	for k, n := range now {
		b := before[k]
		c := api.HostAgentChange{ProjectID: n.ProjectID, AgentID: n.ID, To: string(n.Status), ExitCode: n.ExitCode}
		if n.Attention != "" {
			c.Attention = n.Attention
		}
		if b == nil {
			if n.Status.Terminal() {
				c.Ended = 1
			}
			out = append(out, c)
			continue
		}
		c.From = string(b.Status)
		runs := func(r *store.Record) int { return r.RestartCount + r.ResumeCount + r.AutoResumeCount }
		c.Ended = max(0, runs(n)-runs(b))
		if n.Status.Terminal() && (b.Status.Live() || !sameTime(b.StoppedAt, n.StoppedAt)) {
			c.Ended++
		}
		if c.Ended == 0 && b.Status == n.Status && b.Attention == n.Attention {
			continue
		}
		if b.Attention == n.Attention && c.Ended == 0 {
			c.Attention = ""
		}
		out = append(out, c)
	}
	for k, b := range before {
		if _, ok := now[k]; !ok {
			out = append(out, api.HostAgentChange{ProjectID: b.ProjectID, AgentID: b.ID, From: string(b.Status)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return key(out[i].ProjectID, out[i].AgentID) < key(out[j].ProjectID, out[j].AgentID)
	})
	return out
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
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
