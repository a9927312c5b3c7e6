package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"shepherd/backend/api"
	"shepherd/backend/paths"
	"shepherd/backend/procid"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

// The sandbox attacked from inside (SPEC, threat model): for each guarantee
// a real sandboxed agent — this test binary as the attacker, running
// arbitrary code — tries to break it, with and without @network, against a
// real engine with its API. The suite runs as the user running the tests
// and, when that is root, once more as an unprivileged uid (the test binary
// re-run as nobody, with an engine of its own).

// unprivilegedChild marks the re-run as nobody.
const unprivilegedChild = "SHEPHERD_TEST_UNPRIVILEGED"

func TestSandboxAttacks(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the attack suite runs the Linux sandbox")
	}
	as := "unprivileged uid"
	if os.Geteuid() == 0 {
		as = "root"
	}
	t.Run(as, runAttacks)
	if os.Geteuid() == 0 && os.Getenv(unprivilegedChild) == "" {
		t.Run("unprivileged uid", runAttacksAsNobody)
	}
}

// runAttacksAsNobody re-runs this test as uid 65534 from copies of the test
// binary and the shim it can reach.
func runAttacksAsNobody(t *testing.T) {
	const uid, gid = 65534, 65534
	dir, err := os.MkdirTemp("", "shepherd-attack-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, d := range []string{dir, filepath.Join(dir, "tmp"), filepath.Join(dir, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	bin, shimCopy := filepath.Join(dir, "cli.test"), filepath.Join(dir, "shepherd-shim")
	for from, to := range map[string]string{os.Args[0]: bin, shimPath: shimCopy} {
		if err := copyFile(from, to); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^TestSandboxAttacks$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(dir, "home"), "TMPDIR=" + filepath.Join(dir, "tmp"),
		unprivilegedChild + "=1", testShimEnv + "=" + shimCopy}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSandboxAttacks/unprivileged_uid") {
		t.Fatalf("the attack suite as uid %d: %v\n%s", uid, err, out)
	}
	t.Logf("as uid %d:\n%s", uid, tailLines(string(out), 30))
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func tailLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// arena is one engine, one project and the host-side things the attacks
// aim at.
type arena struct {
	t        *testing.T
	p        paths.Paths
	c        *api.Client
	proj     string
	root     string
	granted  string // a folder attackers are granted
	outside  string // a folder nobody is granted
	victim   string // a file in outside
	usersPID int    // the user's own unsandboxed agent
	usersRec store.Record
}

func newArena(t *testing.T) *arena {
	p := isolate(t)
	serve(t, p)
	a := &arena{t: t, p: p, c: clientOf(t, p), root: t.TempDir()}
	a.granted = filepath.Join(a.root, "granted")
	a.outside = filepath.Join(a.root, "outside")
	for _, d := range []string{a.granted, a.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(a.granted, "proof"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a.victim = filepath.Join(a.outside, "victim.txt")
	if err := os.WriteFile(a.victim, []byte("the user's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var proj store.Project
	okJSON(t, &proj, "add-project", a.root, "--name", "arena")
	a.proj = proj.ID
	ok(t, "create", "arena", "users", "--", "sleep", "1000")
	ok(t, "start", "arena", "users")
	a.usersRec = waitStatus(t, a.proj, "users", "running")
	a.usersPID = a.usersRec.PID
	return a
}

// spawn creates and starts an attacker with perms (nil: the baseline
// sandbox) running ops, and returns its id.
func (a *arena) spawn(id string, perms []string, ops ...string) {
	a.t.Helper()
	if perms == nil {
		perms = []string{}
	}
	self, err := os.Executable()
	if err != nil {
		a.t.Fatal(err)
	}
	body := map[string]any{"id": id, "command": self, "args": ops, "permissions": perms,
		"env": map[string]string{asAttacker: "1"}}
	if _, err := a.c.JSON(a.t.Context(), "POST", "/v1/projects/"+a.proj+"/agents", body, nil); err != nil {
		a.t.Fatalf("create %s: %v", id, err)
	}
	ok(a.t, "start", "arena", id)
}

// run spawns an attacker and returns its log once it has ended.
func (a *arena) run(id string, perms []string, ops ...string) string {
	a.t.Helper()
	a.spawn(id, perms, ops...)
	r := waitStatus(a.t, a.proj, id, "completed", "failed")
	b, err := os.ReadFile(r.LogPath)
	if err != nil {
		a.t.Fatal(err)
	}
	return string(b)
}

// refused checks that every op failed inside the sandbox (and that it ran).
func refused(t *testing.T, log string, ops ...string) {
	t.Helper()
	for _, op := range ops {
		switch {
		case strings.Contains(log, "OK "+op+"\n"):
			t.Errorf("attack %q worked:\n%s", op, log)
		case !strings.Contains(log, "FAIL "+op):
			t.Errorf("attack %q did not run:\n%s", op, log)
		}
	}
}

func worked(t *testing.T, log string, ops ...string) {
	t.Helper()
	for _, op := range ops {
		if !strings.Contains(log, "OK "+op+"\n") {
			t.Errorf("%q, which the sandbox allows, failed:\n%s", op, log)
		}
	}
}

var netModes = []struct {
	name  string
	perms func(a *arena) []string
}{
	{"no network", func(a *arena) []string { return []string{"@write:" + a.granted} }},
	{"network", func(a *arena) []string { return []string{"@network", "@write:" + a.granted} }},
}

func runAttacks(t *testing.T) {
	a := newArena(t)
	engineJSON := a.p.EngineFile()
	usersRecord := filepath.Join(a.p.Data, "projects", a.proj, "agents", "users", "record.json")

	// Who is calling is never self-declared: the user's token and
	// Shepherd's folders are out of reach; the agent's own credential acts
	// as the agent (what it creates is sandboxed within its own grants and
	// is its), and nothing else.
	t.Run("identity", func(t *testing.T) {
		for i, m := range netModes {
			id := fmt.Sprintf("id%d", i)
			evil := filepath.Join(a.outside, "evil"+strconv.Itoa(i))
			log := a.run(id, m.perms(a),
				"read:"+engineJSON, "read:"+usersRecord, "ls:"+a.p.Data, "ls:"+a.p.State,
				"api-user:"+engineJSON, "api-nocred:", "api-forge:"+a.proj,
				"cli:stop,arena,users", "cli:rm,arena,users,--force",
				"cli:create,arena,child"+strconv.Itoa(i)+",--,/bin/sh,-c,echo pwned >"+evil,
				"cli:start,arena,child"+strconv.Itoa(i),
				"write:"+filepath.Join(a.granted, "proof"))
			worked(t, log, "write:"+filepath.Join(a.granted, "proof"))
			refused(t, log, "read:"+engineJSON, "read:"+usersRecord, "ls:"+a.p.Data, "ls:"+a.p.State,
				"api-user:"+engineJSON, "api-nocred:", "api-forge:"+a.proj,
				"cli:stop,arena,users", "cli:rm,arena,users,--force")
			if m.name == "network" {
				// Its own credential works, as itself: the child is sandboxed
				// (no network, writes at most where it may) and is its.
				worked(t, log, "cli:create,arena,child1,--,/bin/sh,-c,echo pwned >"+evil, "cli:start,arena,child1")
				child := waitStatus(t, a.proj, "child1", "completed", "failed")
				if child.Sandbox == nil || child.Sandbox.Network || len(child.Sandbox.WriteDirs) != 0 || child.Parent != id {
					t.Errorf("what the agent created: sandbox %+v, parent %q", child.Sandbox, child.Parent)
				}
			} else {
				refused(t, log, "cli:create,arena,child0,--,/bin/sh,-c,echo pwned >"+evil)
			}
			if _, err := os.Stat(evil); err == nil {
				t.Errorf("a process the agent created wrote outside its grants")
			}
			if r := record(t, a.proj, "users"); r.Status != "running" {
				t.Fatalf("the user's agent is %s after the attack", r.Status)
			}
		}
		// The user's own agent's credential, borrowed: no sandbox can read
		// it (its environment is in another PID namespace).
		log := a.run("borrow", netModes[1].perms(a), "read:/proc/"+strconv.Itoa(a.usersPID)+"/environ")
		refused(t, log, "read:/proc/"+strconv.Itoa(a.usersPID)+"/environ")
	})

	// Grants resolve to real folders: a symlink in a granted folder names
	// the folder it leads to, which the caller does not hold; a folder
	// swapped for a symlink after the grant is not followed at start.
	t.Run("symlinks", func(t *testing.T) {
		link := filepath.Join(a.granted, "link")
		if err := os.Symlink(a.outside, link); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(link)
		log := a.run("linker", []string{"@network", "@write:" + a.granted},
			"cli:create,arena,widened,--permissions,@write:"+link+",--,/bin/true",
			"write:"+filepath.Join(link, "through-link"))
		refused(t, log, "cli:create,arena,widened,--permissions,@write:"+link+",--,/bin/true", "write:"+filepath.Join(link, "through-link"))
		if !strings.Contains(log, "permission denied") || !strings.Contains(log, "cannot grant @write:"+a.outside) {
			t.Errorf("the refusal does not name the real folder:\n%s", log)
		}
		// The user grants a real folder, which is then swapped for a link.
		swap := filepath.Join(a.root, "swap")
		if err := os.Mkdir(swap, 0o755); err != nil {
			t.Fatal(err)
		}
		self, _ := os.Executable()
		body := map[string]any{"id": "swapped", "command": self, "args": []string{"write:" + filepath.Join(swap, "x")},
			"permissions": []string{"@write:" + swap}, "env": map[string]string{asAttacker: "1"}}
		if _, err := a.c.JSON(t.Context(), "POST", "/v1/projects/"+a.proj+"/agents", body, nil); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(swap, swap+".real"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(a.outside, swap); err != nil {
			t.Fatal(err)
		}
		fails(t, ExitError, "its granted folder "+swap+" now leads to "+a.outside, "start", "arena", "swapped")
		if _, err := os.Stat(filepath.Join(a.outside, "x")); err == nil {
			t.Error("the swapped-in link widened the grant")
		}
	})

	// Read-only is read-only: no change of contents or metadata outside the
	// grants, no device node even where it may write, no capability, no
	// other process's SysV shared memory.
	t.Run("read-only", func(t *testing.T) {
		id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		before, _ := os.Stat(a.victim)
		for i, m := range netModes {
			dev := filepath.Join(a.granted, "dev"+strconv.Itoa(i))
			ops := []string{"chmod:" + a.victim, "setuid:" + a.victim, "utimes:" + a.victim, "xattr:" + a.victim,
				"fcap:" + a.victim, "chown:" + a.victim, "write:" + a.victim, "mknod:" + dev,
				"shm:" + strconv.Itoa(id), "fcap:" + filepath.Join(a.granted, "proof")}
			log := a.run("ro"+strconv.Itoa(i), m.perms(a), ops...)
			refused(t, log, ops...)
			_ = m
		}
		after, _ := os.Stat(a.victim)
		if after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime()) {
			t.Errorf("the victim changed: %v %v -> %v %v", before.Mode(), before.ModTime(), after.Mode(), after.ModTime())
		}
		if sz, err := unix.Getxattr(a.victim, "user.attacker", nil); err == nil && sz > 0 {
			t.Error("the victim got an xattr")
		}
		b, err := unix.SysvShmAttach(id, 0, 0)
		if err == nil {
			if strings.HasPrefix(string(b), "attacker") {
				t.Error("the host's shared memory was written")
			}
			unix.SysvShmDetach(b)
		}
	})

	// Nothing outside the box is reachable: no signal to the engine, a
	// shim or another agent; no Unix socket of the host (pathname or
	// abstract).
	t.Run("outside", func(t *testing.T) {
		sock := filepath.Join(a.root, "host.sock")
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		abstract := fmt.Sprintf("shepherd-attack-%d-%d", os.Getpid(), time.Now().UnixNano())
		al, err := net.Listen("unix", "@"+abstract)
		if err != nil {
			t.Fatal(err)
		}
		defer al.Close()
		targets := []int{os.Getpid(), a.usersPID, a.usersRec.ShimPID}
		for i, m := range netModes {
			ops := []string{"unix:" + sock, "abstract:" + abstract, "ptrace:1", "mem:1", "hostnet:" + sock,
				"read:/proc/1/root" + engineJSON, "fds:1", "ls:/proc/1/root" + a.p.Data}
			for _, pid := range targets {
				ops = append(ops, "kill:"+strconv.Itoa(pid))
			}
			log := a.run("out"+strconv.Itoa(i), m.perms(a), ops...)
			// A pid number may exist inside the box too (its own init is
			// pid 1): what matters is that no host process was stopped.
			refused(t, log, "unix:"+sock, "abstract:"+abstract, "ptrace:1", "mem:1",
				"read:/proc/1/root"+engineJSON, "fds:1", "ls:/proc/1/root"+a.p.Data)
			if m.name == "no network" {
				// Not even the host's socket table shows through the box's
				// PID 1 (the shim) or any of its threads.
				refused(t, log, "hostnet:"+sock)
			}
			for _, pid := range targets {
				if procState(pid) == 'T' {
					syscall.Kill(pid, syscall.SIGCONT)
					t.Errorf("%s: host process %d was stopped from the sandbox", m.name, pid)
				}
			}
		}
	})

	// Stop means gone: what the agent left in a session of its own dies
	// with it, and its shim cannot be killed from inside; if the shim dies
	// anyway, the box goes with it.
	t.Run("stop", func(t *testing.T) {
		for i, how := range []string{"stop", "shim killed"} {
			mark := fmt.Sprintf("attack-%d-%d", os.Getpid(), i)
			pidFile := filepath.Join(a.granted, "shimpid"+strconv.Itoa(i))
			id := "esc" + strconv.Itoa(i)
			a.spawn(id, []string{"@write:" + a.granted}, "escape:"+mark, "killshim:"+pidFile, "initsig:", "wait:")
			r := waitStatus(t, a.proj, id, "running")
			testutil.Eventually(t, "the attacker ready", func() bool { b, _ := os.ReadFile(r.LogPath); return strings.Contains(string(b), "READY") })
			// Its environment cannot be read while it runs exec (sh, then
			// sleep): looked for until it can.
			testutil.Eventually(t, "the escaped process there to begin with", func() bool { return len(marked(mark)) > 0 })
			if !procid.Alive(r.ShimPID) {
				t.Fatalf("the shim died before the attack")
			}
			os.WriteFile(pidFile, []byte(strconv.Itoa(r.ShimPID)), 0o644)
			testutil.Eventually(t, "the shim-kill attempts", func() bool { b, _ := os.ReadFile(r.LogPath); return strings.Contains(string(b), " initsig:") })
			b, _ := os.ReadFile(r.LogPath)
			refused(t, string(b), "killshim:"+pidFile)
			if !procid.Alive(r.ShimPID) {
				t.Fatalf("the agent killed its shim")
			}
			if how == "stop" {
				ok(t, "stop", "arena", id, "--grace", "2")
			} else {
				syscall.Kill(r.ShimPID, syscall.SIGKILL)
				// The kernel ends the box's processes as its init dies; one
				// may still be on its way out (running its exit) when the
				// agent is gone. One that escaped the box stays: the wait
				// fails.
				testutil.Eventually(t, "the box, the agent and what it left, to go with its shim", func() bool {
					return !procid.Alive(r.PID) && len(marked(mark)) == 0
				})
			}
			if left := marked(mark); len(left) > 0 {
				t.Errorf("%s: processes outlived it: %v", how, left)
				for _, p := range left {
					syscall.Kill(p, syscall.SIGKILL)
				}
			}
		}
	})
	for _, s := range attackSuites {
		t.Run(s.name, func(t *testing.T) { s.run(t, a) })
	}
	ok(t, "stop", "arena", "users")
}

// attackSuites are further classes of attack, each registered by a file of
// its own (registerAttacks in an init), run against the same arena after
// the ones above.
var attackSuites []struct {
	name string
	run  func(t *testing.T, a *arena)
}

func registerAttacks(name string, run func(t *testing.T, a *arena)) {
	attackSuites = append(attackSuites, struct {
		name string
		run  func(t *testing.T, a *arena)
	}{name, run})
}

// marked lists the processes whose environment carries the attack mark.
func marked(mark string) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !strings.Contains(string(b), "SHEPHERD_ATTACK_MARK="+mark) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil && procState(pid) != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

func procState(pid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}
