package manager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"shepherd/backend/api"
	"shepherd/backend/hosts"
	"shepherd/backend/hosts/bootstrap"
	"shepherd/backend/hosts/registry"
	"shepherd/backend/hosts/sshhost"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// opened is a host just reached: its engine's address and the way to it.
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
