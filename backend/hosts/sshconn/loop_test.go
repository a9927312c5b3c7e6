package sshconn

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"shepherd/backend/hosts"
	"shepherd/backend/hosts/hostkeys"
	"shepherd/backend/hosts/internal/sshtest"
	"shepherd/internal/testutil"
)

// A host that stops answering is unreachable after a missed keepalive
// (no wall clock: the test drives the clock), dials to it fail at once,
// reconnects back off 1 s, 2 s, 4 s while it is down, and when it comes
// back the same Conn is connected again, on a new connection.
func TestKeepaliveReconnectBackoff(t *testing.T) {
	h := newHome(t)
	pub, _ := h.key(t, "id_ed25519", "")
	srv := sshtest.New(t, pub)
	h.trust(t, srv)
	sock := echoSocket(t)
	clock := clockwork.NewFakeClock()
	st := newStates()
	opts := h.opts()
	opts.Clock, opts.OnState = clock, st.on
	opts.Keepalive, opts.KeepaliveTimeout = 10*time.Second, 5*time.Second
	opts.BackoffMin, opts.BackoffMax = time.Second, 4*time.Second
	kept := make(chan error, 10)
	opts.keepaliveDone = func(err error) { kept <- err }
	c, err := Dial(context.Background(), srv.Addr, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st.next(t, hosts.Connected)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// A keepalive answered keeps it connected.
	if err := clock.BlockUntilContext(ctx, 1); err != nil { // the ticker
		t.Fatal(err)
	}
	clock.Advance(10 * time.Second)
	select {
	case err := <-kept:
		if err != nil {
			t.Fatalf("keepalive: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("no keepalive was sent")
	}
	if srv.Keepalives() != 1 {
		t.Fatalf("%d keepalives reached the host", srv.Keepalives())
	}

	srv.Freeze(true)
	clock.Advance(10 * time.Second)
	if err := clock.BlockUntilContext(ctx, 2); err != nil { // ticker + the answer's timeout
		t.Fatal(err)
	}
	lostAt := clock.Now().Add(5 * time.Second)
	clock.Advance(5 * time.Second)
	down := st.next(t, hosts.Unreachable)
	if !down.Since.Equal(lostAt) || !down.Retrying || down.NextTry.Sub(lostAt) != time.Second || !strings.Contains(down.Err.Error(), "keepalive") {
		t.Fatalf("unreachable state %+v", down)
	}
	if _, err := c.DialUnix(context.Background(), sock); !errors.Is(err, hosts.ErrUnreachable) {
		t.Fatalf("dial while unreachable: %v", err)
	}
	srv.Stop()
	srv.Freeze(false)

	// Down: each failed reconnect doubles the wait, up to the maximum.
	for _, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		if err := clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatal(err)
		}
		clock.Advance(wait)
		st.next(t, hosts.Connecting)
		s := st.next(t, hosts.Unreachable)
		next := min(2*wait, 4*time.Second)
		if !s.Since.Equal(lostAt) || s.NextTry.Sub(clock.Now()) != next {
			t.Fatalf("after a failed reconnect: since %v (want %v), next try in %v (want %v)", s.Since, lostAt, s.NextTry.Sub(clock.Now()), next)
		}
	}
	srv.Start()
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(4 * time.Second)
	st.next(t, hosts.Connected)
	// The client's handshake can end before the server's side of it has
	// returned and counted the connection.
	testutil.Eventually(t, "the server to count the reconnect", func() bool { return srv.Connections() >= 2 })
	if srv.Connections() != 2 {
		t.Fatalf("%d connections, want 2 (the first and the reconnect)", srv.Connections())
	}
	conn, err := c.DialUnix(context.Background(), sock)
	if err != nil {
		t.Fatalf("dial after the reconnect: %v", err)
	}
	conn.Close()

	// A connection the host drops is seen without a keepalive.
	srv.Stop()
	st.next(t, hosts.Unreachable)
	srv.Start()
	c.Reconnect() // now, not after the backoff
	st.next(t, hosts.Connected)
}

// A refused host key on reconnect (the host's key changed while it was
// away) stops the retries: the user must act.
func TestReconnectChangedKeyStops(t *testing.T) {
	h := newHome(t)
	pub, _ := h.key(t, "id_ed25519", "")
	srv := sshtest.New(t, pub)
	h.trust(t, srv)
	clock := clockwork.NewFakeClock()
	st := newStates()
	opts := h.opts()
	opts.Clock, opts.OnState = clock, st.on
	c, err := Dial(context.Background(), srv.Addr, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv.Stop()
	st.next(t, hosts.Unreachable)
	srv.SetHostKey(sshtest.NewSigner(t))
	srv.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 1); err != nil { // the backoff
		t.Fatal(err)
	}
	clock.Advance(DefaultBackoffMin)
	s := st.next(t, hosts.Unreachable)
	for s.Attempt == 0 {
		s = st.next(t, hosts.Unreachable)
	}
	if s.Retrying || !errors.Is(s.Err, hostkeys.ErrChangedKey) || !s.NextTry.IsZero() {
		t.Fatalf("after a changed key: %+v", s)
	}
}
