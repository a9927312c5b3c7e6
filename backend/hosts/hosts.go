// Package hosts is the seam between Shepherd and the engines of other
// machines (SPEC "Hosts"). A host is another shepherd-engine; a Provider
// readies it and produces two things: the Address of its engine (where it
// answers on its machine, and the token it takes) and a Transport that
// opens connections to it. The SSH provider (sshhost) is the first; a pod or
// a VM reached through Kubernetes or a cloud API would be another, producing
// the same two things. Everything above (the API proxy per host, the
// window's sidebar, `--host` on the CLI) speaks HTTP over Transport.DialEngine
// and shows Transport.State, and knows nothing of SSH.
package hosts

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Phase is what a host's transport is doing.
type Phase string

const (
	// Connecting: the first connection, or a reconnect, is under way.
	Connecting Phase = "connecting"
	// Connected: the engine can be dialled.
	Connected Phase = "connected"
	// Unreachable: the connection is lost (State.Since says since when,
	// State.Err why); a reconnect is tried at State.NextTry, unless
	// State.Retrying is false (a refused host key: the user must act).
	Unreachable Phase = "unreachable"
	// Closed: Close was called.
	Closed Phase = "closed"
)

// State is a transport's state, reported on every change.
type State struct {
	Phase Phase
	// Since is when the host entered this phase; for Unreachable, when it
	// was first lost (failed reconnects do not move it).
	Since time.Time
	// Err is why the host is unreachable (nil otherwise).
	Err error
	// Attempt counts the reconnects tried since the host was lost.
	Attempt int
	// NextTry is when the next reconnect is due (Unreachable, Retrying).
	NextTry time.Time
	// Retrying is false when no reconnect will be tried by itself.
	Retrying bool
}

// ErrUnreachable wraps every failure to reach a host that is not connected.
var ErrUnreachable = errors.New("host unreachable")

// ErrClosed is returned by a transport after Close.
var ErrClosed = errors.New("host connection closed")

// Address is where a host's engine answers, as its provider found it.
type Address struct {
	// Endpoint is where the engine listens on its own machine (for SSH: the
	// path of its Unix socket), for display and diagnostics.
	Endpoint string
	// Token is the engine's API token. It is read from the host over the
	// provider's own authenticated channel and never written locally.
	Token string
	// Version is the engine's build (its version and the hash of its
	// binaries, for engines Shepherd installed).
	Version string
	// PID is the engine's process id on its machine.
	PID int
}

// Transport reaches one host's engine.
type Transport interface {
	// DialEngine opens a new connection to the engine's API. It fails at
	// once (wrapping ErrUnreachable) while the host is not connected: an
	// unreachable host is never waited for.
	DialEngine(ctx context.Context) (net.Conn, error)
	// State is the transport's state now.
	State() State
	// Close ends the transport; the engine and its agents keep running.
	Close() error
}

// Provider readies a host's engine (installs, starts, upgrades it as its
// kind of host requires) and connects to it.
type Provider interface {
	Open(ctx context.Context) (Address, Transport, error)
}

// BaseURL is the base of API requests sent through HTTPClient: the host
// part is a placeholder, every connection goes to the transport's engine.
const BaseURL = "http://shepherd-engine"

// Addressed is a Transport that knows its engine's address now: it
// changes when the engine is restarted on its host (a new token).
type Addressed interface {
	Address() Address
}

// HTTPClient is an HTTP client whose every connection is a new
// DialEngine of t, so the API client (api.Client with BaseURL, the
// Address's token and this client) talks to a host's engine as to the
// local one. When t is Addressed, every request carries the engine's
// token of the moment, so a restart of the engine on its host is not seen
// by the client. Connections are kept for reuse briefly: each is one
// forwarded channel, not one SSH session, so many cost the host little.
func HTTPClient(t Transport) *http.Client {
	var rt http.RoundTripper = HTTPTransport(t)
	if a, ok := t.(Addressed); ok {
		rt = bearer{rt, a}
	}
	return &http.Client{Transport: rt}
}

// HTTPTransport is HTTPClient's transport (without the token).
func HTTPTransport(t Transport) *http.Transport {
	return &http.Transport{
		DialContext:         func(ctx context.Context, _, _ string) (net.Conn, error) { return t.DialEngine(ctx) },
		MaxIdleConnsPerHost: 8,
		// Shorter than the engine's own idle timeout (20 s), so the
		// client never reuses a connection the engine is closing.
		IdleConnTimeout: 15 * time.Second,
	}
}

type bearer struct {
	next http.RoundTripper
	a    Addressed
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	tok := b.a.Address().Token
	resp, err := b.next.RoundTrip(b.with(r, tok))
	// The connection of this very request may have found the engine gone
	// and started it again (a new token): once more, with that one.
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	now := b.a.Address().Token
	if now == tok || (r.Body != nil && r.GetBody == nil) {
		return resp, nil
	}
	r2 := b.with(r, now)
	if r.Body != nil {
		body, err := r.GetBody()
		if err != nil {
			return resp, nil
		}
		r2.Body = body
	}
	resp.Body.Close()
	return b.next.RoundTrip(r2)
}

func (b bearer) with(r *http.Request, tok string) *http.Request {
	if tok == "" {
		return r
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	return r
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// transport's pool.
func (b bearer) CloseIdleConnections() {
	if c, ok := b.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
