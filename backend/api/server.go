package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// DefaultListen is a random free port on the loopback interface.
const DefaultListen = "127.0.0.1:0"

// ErrNotLoopback is returned for a listen address other machines could reach.
var ErrNotLoopback = errors.New("the API listens on loopback only")

// Server is a running API server.
type Server struct {
	URL  string // http://127.0.0.1:PORT
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
	err  error
}

// CheckListenAddr refuses an address that is not host:port on a loopback
// interface ("localhost", 127.0.0.0/8, ::1). An empty address is DefaultListen.
func CheckListenAddr(addr string) (string, error) {
	if addr == "" {
		return DefaultListen, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("listen address %q must be host:port, e.g. %s: %v", addr, DefaultListen, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return "", fmt.Errorf("listen address %q: bad port %q", addr, port)
	}
	if strings.EqualFold(host, "localhost") {
		return addr, nil
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	if ip == nil || !ip.IsLoopback() {
		if host == "" {
			host = "all interfaces"
		}
		return "", fmt.Errorf("%w: refusing to listen on %s (%q); use 127.0.0.1 or ::1", ErrNotLoopback, host, addr)
	}
	return addr, nil
}

// Serve listens on listenAddr (loopback only; "" means DefaultListen) and
// serves h in the background until ctx is done or Shutdown is called. It
// returns once the listener is open, so Server.URL is usable at once.
// idleTimeout closes a kept-alive connection idle for that long (event
// streams are not idle: they carry a heartbeat).
const idleTimeout = 20 * time.Second

func Serve(ctx context.Context, listenAddr string, h http.Handler) (*Server, error) {
	addr, err := CheckListenAddr(listenAddr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	// "localhost" could resolve to anything: check what was really bound.
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("%w: %s resolved to %s", ErrNotLoopback, addr, ln.Addr())
	}
	s := &Server{
		URL: "http://" + ln.Addr().String(),
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			// A kept-alive connection left idle (a CLI call's, which
			// never closes its own) costs the engine a goroutine and
			// its buffers until it is closed.
			IdleTimeout: idleTimeout,
		},
		ln:   ln,
		done: make(chan struct{}),
	}
	if o, ok := h.(interface{ OnShutdown() }); ok {
		s.srv.RegisterOnShutdown(o.OnShutdown)
	}
	go func() {
		err := s.srv.Serve(ln)
		if !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
		close(s.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = s.Shutdown(sctx)
		case <-s.done:
		}
	}()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Shutdown stops accepting requests and waits for the running ones until ctx
// is done; then it closes what is left.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	<-s.done
	return err
}

// Done is closed when the server has stopped.
func (s *Server) Done() <-chan struct{} { return s.done }

// Err is why the server stopped, if it was not shut down (valid after Done).
func (s *Server) Err() error {
	<-s.done
	return s.err
}
