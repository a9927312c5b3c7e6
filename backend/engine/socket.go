package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2"

	"shepherd/backend/api"
	"shepherd/backend/paths"
)

// apiServer is the engine's API server: on TCP (api.Server) or on a Unix
// socket (socketServer).
type apiServer interface {
	Done() <-chan struct{}
	Err() error
	Shutdown(ctx context.Context) error
}

// SocketFile is where an engine started with --socket listens: in its
// runtime folder ($XDG_RUNTIME_DIR/shepherd), beside engine.json.
func SocketFile(p paths.Paths) string { return filepath.Join(p.Runtime, "engine.sock") }

// SocketEngineInfo is engine.json of an engine that listens on a Unix
// socket: its URL is unix://<Socket>, and Socket says where, for the host
// bootstrap that reads it over SSH.
type SocketEngineInfo struct {
	api.EngineInfo
	Socket string `json:"socket"`
}

// socketServer serves the API on a Unix socket.
type socketServer struct {
	srv  *http.Server
	done chan struct{}
	err  error
}

// serveSocket listens on path, mode 0600 (its folder is 0700 already). The
// engine holds the data folder's lock, so a socket left at path is a dead
// engine's and is replaced.
func serveSocket(path string, h http.Handler) (*socketServer, error) {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("remove the stale API socket %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	// Between bind and chmod the socket has the umask's mode, which gives
	// no one else write access (connect needs it) under the 0700 folder.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod %s: %w", path, err)
	}
	s := &socketServer{
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 20 * time.Second},
		done: make(chan struct{}),
	}
	go func() {
		if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
		close(s.done)
	}()
	return s, nil
}

func (s *socketServer) Done() <-chan struct{} { return s.done }

func (s *socketServer) Err() error {
	<-s.done
	return s.err
}

func (s *socketServer) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	<-s.done
	return err
}

// writeSocketEngineInfo writes engine.json with the socket's path, as
// api.WriteEngineInfo does (atomically, 0600, its folder 0700).
func writeSocketEngineInfo(path string, info api.EngineInfo, socket string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	b, err := json.MarshalIndent(SocketEngineInfo{EngineInfo: info, Socket: socket}, "", "  ")
	if err != nil {
		return err
	}
	if err := renameio.WriteFile(path, append(b, '\n'), 0o600, renameio.WithStaticPermissions(0o600)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
