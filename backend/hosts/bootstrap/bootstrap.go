// Package bootstrap readies Shepherd's engine on a host over its SSH
// connection: it finds the host's OS and architecture (`uname -sm`),
// installs the matching static shepherd-engine and shepherd-shim into a
// per-user folder (SFTP, each file under a temporary name then renamed, so
// a cut connection never leaves half a binary), starts the engine so that
// it outlives the SSH session (`systemd-run --user` where the user's
// manager answers and lingers, else detached with `setsid nohup`),
// listening only on a Unix socket (`serve --socket`: 0600, in its runtime
// folder, never TCP), and reads its engine.json back (socket, token). An
// engine of another build is stopped gracefully (SIGTERM: agents keep
// running, and the new engine re-attaches them) and replaced.
package bootstrap

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/pkg/sftp"
	"github.com/rs/zerolog"
	"golang.org/x/crypto/ssh"

	"shepherd/backend/hosts"
)

var (
	// ErrForeignEngine: the host runs an engine Shepherd cannot reach over
	// SSH (one listening on TCP: a window, or `shepherd serve`).
	ErrForeignEngine = errors.New("the host runs another Shepherd engine")
	// ErrStart: the engine did not start on the host.
	ErrStart = errors.New("the host's engine did not start")
)

// Remote is what the bootstrap needs of a host's connection
// (*sshconn.Conn).
type Remote interface {
	// Run runs a POSIX sh script on the host and returns its output.
	Run(ctx context.Context, script string) ([]byte, error)
	// Client is the SSH client, for SFTP.
	Client() (*ssh.Client, error)
	// DialUnix opens a channel to a Unix socket on the host.
	DialUnix(ctx context.Context, path string) (net.Conn, error)
}

// Options configure Ensure.
type Options struct {
	Builds Builds
	// Progress is told each step, in words (may be nil).
	Progress func(step string)
	Logger   zerolog.Logger
}

// Engine is a host's running engine as Ensure left it.
type Engine struct {
	hosts.Address
	Platform Platform
	Dir      string // where the engine and shim are installed on the host
	Runtime  string // the engine's runtime folder (engine.json, the socket)
	// Started: Ensure started it (else it was running already);
	// Upgraded: it replaced an engine of another build.
	Started, Upgraded bool
	// Via is how it was started: "systemd-run" or "setsid" ("" if it was
	// running already).
	Via string
}

// probe is what one look at the host finds.
type probe struct {
	uname, home, runtime, uid string
	userManager, linger       bool
}

const probeScript = `printf 'uname=%s\n' "$(uname -sm)"
printf 'home=%s\n' "$HOME"
printf 'runtime=%s\n' "${XDG_RUNTIME_DIR:-}"
printf 'uid=%s\n' "$(id -u)"
if command -v systemd-run >/dev/null 2>&1 && systemctl --user show-environment >/dev/null 2>&1; then
  printf 'usermanager=yes\n'
  printf 'linger=%s\n' "$(loginctl show-user "$(id -un)" --property=Linger --value 2>/dev/null)"
fi
`

// parseProbe reads probeScript's key=value lines; unknown keys are
// ignored, a missing uname or home is an error.
func parseProbe(out string) (probe, error) {
	var p probe
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch k {
		case "uname":
			p.uname = v
		case "home":
			p.home = v
		case "runtime":
			p.runtime = v
		case "uid":
			p.uid = v
		case "usermanager":
			p.userManager = v == "yes"
		case "linger":
			p.linger = v == "yes"
		}
	}
	if p.uname == "" {
		return p, errors.New("the host did not say its OS and architecture (uname -sm)")
	}
	if !path.IsAbs(p.home) || strings.ContainsAny(p.home, "\n\x00") {
		return p, fmt.Errorf("the host's HOME %q is not an absolute path", p.home)
	}
	if p.runtime != "" && (!path.IsAbs(p.runtime) || strings.ContainsAny(p.runtime, "\n\x00")) {
		p.runtime = "" // not usable: the fallback below
	}
	return p, nil
}

// runtimeBase is $XDG_RUNTIME_DIR on the host, else a folder of the
// user's own (never a shared /tmp name another user could take first).
func (p probe) runtimeBase() string {
	if p.runtime != "" {
		return p.runtime
	}
	return path.Join(p.home, ".local", "state", "shepherd-runtime")
}

// quote makes s one word for sh.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// socketInfo is engine.json of an engine started with --socket.
type socketInfo struct {
	URL    string `json:"url"`
	Token  string `json:"token"`
	PID    int    `json:"pid"`
	Socket string `json:"socket"`
}

func (o Options) step(s string) {
	o.Logger.Info().Str("step", s).Msg("host bootstrap")
	if o.Progress != nil {
		o.Progress(s)
	}
}

// Ensure readies the host's engine: installed, of this Shepherd's build,
// running on its Unix socket. A host whose platform has no build is an
// error wrapping ErrNoBuild, and nothing is installed.
func Ensure(ctx context.Context, r Remote, o Options) (Engine, error) {
	var eng Engine
	o.step("looking at the host")
	out, err := r.Run(ctx, probeScript)
	if err != nil {
		return eng, fmt.Errorf("look at the host: %w", err)
	}
	pr, err := parseProbe(string(out))
	if err != nil {
		return eng, err
	}
	plat, err := ParseUname(pr.uname)
	if err != nil {
		return eng, err
	}
	eng.Platform = plat
	build, err := o.Builds.For(plat)
	if err != nil {
		return eng, err
	}
	eng.Dir = path.Join(pr.home, ".local", "lib", "shepherd", "engines", build.ID)
	eng.Runtime = path.Join(pr.runtimeBase(), "shepherd")
	engineJSON := path.Join(eng.Runtime, "engine.json")
	enginePath := path.Join(eng.Dir, EngineFile)

	o.step("installing the engine " + build.ID)
	if err := install(ctx, r, build, eng.Dir); err != nil {
		return eng, err
	}
	if out, err := r.Run(ctx, quote(enginePath)+" --version\n"); err != nil || !strings.Contains(string(out), o.Builds.Version) {
		return eng, fmt.Errorf("the engine installed at %s does not run on the host (%s): %q %v", enginePath, plat, out, err)
	}

	cur, running, err := current(ctx, r, engineJSON)
	if err != nil {
		return eng, err
	}
	if running {
		args, _ := argsOf(ctx, r, cur.PID)
		if isEngine(args, enginePath) {
			if err := answers(ctx, r, cur); err == nil {
				eng.Address = hosts.Address{Endpoint: cur.Socket, Token: cur.Token, Version: build.ID, PID: cur.PID}
				return eng, nil
			}
		}
		o.step(fmt.Sprintf("stopping the host's engine of another build (pid %d: %s)", cur.PID, args))
		if err := stop(ctx, r, cur.PID); err != nil {
			return eng, err
		}
		eng.Upgraded = true
	}

	o.step("starting the engine")
	info, via, err := start(ctx, r, pr, enginePath, path.Join(eng.Dir, ShimFile), engineJSON, build.ID)
	if err != nil {
		return eng, err
	}
	if err := answers(ctx, r, info); err != nil {
		return eng, fmt.Errorf("%w: it wrote %s but does not answer on %s: %v", ErrStart, engineJSON, info.Socket, err)
	}
	eng.Started, eng.Via = true, via
	eng.Address = hosts.Address{Endpoint: info.Socket, Token: info.Token, Version: build.ID, PID: info.PID}
	// Builds no engine runs any more go; a running agent's shim keeps its
	// own copy open, so nothing in use is lost.
	if _, err := r.Run(ctx, pruneScript(path.Dir(eng.Dir), build.ID)); err != nil {
		o.Logger.Warn().Err(err).Msg("host bootstrap: could not remove old engine builds")
	}
	return eng, nil
}

// install copies the engine and the shim to dir over SFTP, each under a
// temporary name, made executable, then renamed into place. Files already
// there (the folder is named for the build's hash) are kept.
func install(ctx context.Context, r Remote, b Build, dir string) error {
	cl, err := r.Client()
	if err != nil {
		return err
	}
	sc, err := sftp.NewClient(cl, sftp.UseConcurrentWrites(true))
	if err != nil {
		return fmt.Errorf("open SFTP on the host (is its sftp subsystem on?): %w", err)
	}
	defer sc.Close()
	if err := sc.MkdirAll(dir); err != nil {
		return fmt.Errorf("create %s on the host: %w", dir, err)
	}
	if err := sc.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("chmod %s on the host: %w", dir, err)
	}
	for _, f := range []struct{ local, name string }{{b.Engine, EngineFile}, {b.Shim, ShimFile}} {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		li, err := os.Stat(f.local)
		if err != nil {
			return err
		}
		dst := path.Join(dir, f.name)
		if ri, err := sc.Stat(dst); err == nil && ri.Size() == li.Size() && ri.Mode()&0o100 != 0 {
			continue
		}
		if err := copyFile(sc, f.local, dst); err != nil {
			return fmt.Errorf("install %s on the host: %w", dst, err)
		}
	}
	return nil
}

func copyFile(sc *sftp.Client, local, dst string) error {
	src, err := os.Open(local)
	if err != nil {
		return err
	}
	defer src.Close()
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	tmp := path.Join(path.Dir(dst), "."+path.Base(dst)+".tmp-"+hex.EncodeToString(suffix))
	f, err := sc.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			_ = sc.Remove(tmp)
		}
	}()
	if _, err := f.ReadFrom(src); err != nil {
		return err
	}
	if err := f.Chmod(0o755); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := sc.PosixRename(tmp, dst); err != nil {
		return err
	}
	ok = true
	return nil
}

// current reads the host's engine.json: the engine it names, and whether
// that engine's process is alive. An engine that listens on TCP is
// ErrForeignEngine.
func current(ctx context.Context, r Remote, engineJSON string) (socketInfo, bool, error) {
	var info socketInfo
	f := quote(engineJSON)
	out, err := r.Run(ctx, "if [ -f "+f+" ]; then cat "+f+"; fi\n")
	if err != nil {
		return info, false, fmt.Errorf("read %s on the host: %w", engineJSON, err)
	}
	if strings.TrimSpace(string(out)) == "" {
		return info, false, nil
	}
	if err := json.Unmarshal(out, &info); err != nil || info.PID <= 0 {
		return info, false, nil // unreadable: no engine to speak of; a new one replaces it
	}
	if _, err := r.Run(ctx, "kill -0 "+strconv.Itoa(info.PID)+" 2>/dev/null\n"); err != nil {
		return info, false, nil // stale
	}
	if info.Socket == "" {
		return info, true, fmt.Errorf("%w: pid %d listens on %s (a window, or `shepherd serve` without --socket); quit it on the host, and Shepherd starts one it can reach over SSH",
			ErrForeignEngine, info.PID, info.URL)
	}
	return info, true, nil
}

// argsOf is a process's command line, its words joined by spaces.
func argsOf(ctx context.Context, r Remote, pid int) (string, error) {
	p := strconv.Itoa(pid)
	out, err := r.Run(ctx, "if [ -r /proc/"+p+"/cmdline ]; then tr '\\000' ' ' </proc/"+p+"/cmdline; else ps -o args= -p "+p+"; fi\n")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// isEngine: args run the engine at path with serve (a home folder with a
// blank in its name stays one word here, unlike in ps's columns).
func isEngine(args, path string) bool {
	return strings.HasPrefix(args, path+" serve")
}

// answers checks that the engine answers GET /v1/engine on its socket
// with its token, over the connection.
func answers(ctx context.Context, r Remote, info socketInfo) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c := &http.Client{Transport: &http.Transport{
		DialContext:       func(ctx context.Context, _, _ string) (net.Conn, error) { return r.DialUnix(ctx, info.Socket) },
		DisableKeepAlives: true,
	}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hosts.BaseURL+"/v1/engine", nil)
	req.Header.Set("Authorization", "Bearer "+info.Token)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /v1/engine: %s", resp.Status)
	}
	return nil
}

// stop ends the engine pid with SIGTERM — which leaves its agents running,
// unlike a quit, which may stop them by preference — and waits up to 10 s,
// then SIGKILLs it (agents survive that too: they are the shims'). A pid
// that is no longer an engine is left alone.
func stop(ctx context.Context, r Remote, pid int) error {
	p := strconv.Itoa(pid)
	script := `pid=` + p + `
if [ -r /proc/$pid/cmdline ]; then args=$(tr '\000' ' ' </proc/$pid/cmdline); else args=$(ps -o args= -p $pid 2>/dev/null) || exit 0; fi
case "$args" in *shepherd-engine*serve*) ;; *) exit 0 ;; esac
kill -TERM $pid 2>/dev/null || exit 0
i=0
while kill -0 $pid 2>/dev/null; do
  i=$((i+1))
  if [ $i -ge 100 ]; then kill -KILL $pid 2>/dev/null; sleep 0.2; echo killed; exit 0; fi
  sleep 0.1
done
echo stopped
`
	out, err := r.Run(ctx, script)
	if err != nil {
		return fmt.Errorf("stop the host's engine (pid %d): %w", pid, err)
	}
	_ = out
	return nil
}

// start starts the engine detached from the SSH session and waits for its
// engine.json (15 s).
func start(ctx context.Context, r Remote, pr probe, engine, shim, engineJSON, buildID string) (socketInfo, string, error) {
	var info socketInfo
	runtimeBase := path.Dir(path.Dir(engineJSON))
	logFile := path.Join(pr.home, ".local", "state", "shepherd", "engine-console.log")
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	unit := "shepherd-engine-" + hex.EncodeToString(suffix)
	via := "setsid"
	var b strings.Builder
	fmt.Fprintf(&b, "set -e\numask 077\nmkdir -p %s %s\nrm -f %s\ncd \"$HOME\"\n",
		quote(runtimeBase), quote(path.Dir(logFile)), quote(engineJSON))
	if pr.userManager && pr.linger {
		// A user service outlives the session; KillMode=process leaves
		// the agents (in the unit's cgroup) running when the engine ends.
		via = "systemd-run"
		fmt.Fprintf(&b, "systemd-run --user --quiet --collect --unit=%s -p KillMode=process --setenv=XDG_RUNTIME_DIR=%s --setenv=SHEPHERD_SHIM=%s %s serve --socket\n",
			quote(unit), quote(runtimeBase), quote(shim), quote(engine))
	} else {
		fmt.Fprintf(&b, "export XDG_RUNTIME_DIR=%s SHEPHERD_SHIM=%s\n", quote(runtimeBase), quote(shim))
		fmt.Fprintf(&b, "if command -v setsid >/dev/null 2>&1; then setsid nohup %s serve --socket </dev/null >>%s 2>&1 &\nelse nohup %s serve --socket </dev/null >>%s 2>&1 &\nfi\n",
			quote(engine), quote(logFile), quote(engine), quote(logFile))
	}
	fmt.Fprintf(&b, `i=0
while [ ! -s %[1]s ]; do
  i=$((i+1))
  if [ $i -ge 150 ]; then
    echo "no engine.json after 15 s" >&2
    if [ %[2]s = systemd-run ]; then journalctl --user -u %[3]s -n 20 --no-pager >&2 2>/dev/null || true; else tail -n 20 %[4]s >&2 2>/dev/null || true; fi
    exit 3
  fi
  sleep 0.1
done
cat %[1]s
`, quote(engineJSON), via, quote(unit), quote(logFile))
	out, err := r.Run(ctx, b.String())
	if err != nil {
		return info, via, fmt.Errorf("%w (%s): %v", ErrStart, via, err)
	}
	if err := json.Unmarshal(out, &info); err != nil || info.Socket == "" || info.Token == "" {
		return info, via, fmt.Errorf("%w: its engine.json is not one of an engine on a Unix socket: %q", ErrStart, out)
	}
	return info, via, nil
}

// pruneScript removes the builds in dir other than keep.
func pruneScript(dir, keep string) string {
	return "cd " + quote(dir) + " || exit 0\nfor d in *; do [ \"$d\" = " + quote(keep) + " ] || [ ! -d \"$d\" ] || rm -rf -- \"$d\"; done\n"
}
