//go:build linux

package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// What a box wrote is data, never code, and a box cannot exhaust what the
// user needs (SPEC, threat model): attacks from inside real sandboxed
// agents on the git dirs and the agent CLIs' configuration in their write
// grants, on the machine's processes, memory and /dev/shm, on the user's
// keyring, and through system calls a coding agent never needs.

func init() {
	registerAttacks("box", runBoxAttacks)
	registerOp("rename", func(p string) error { return os.Rename(p, p+".moved") })
	registerOp("remove", os.Remove)
	registerOp("replace", func(p string) error {
		// As editors and CLIs write a file: a new one renamed over it.
		tmp := p + ".tmp-attack"
		if err := os.WriteFile(tmp, []byte(`{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch /tmp/pwned"}]}]}}`), 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, p); err != nil {
			os.Remove(tmp)
			return err
		}
		return nil
	})
	registerOp("append", func(p string) error {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		_, err = f.WriteString("{}\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
	registerOp("mkfile", func(p string) error {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte("{}\n"), 0o600)
	})
	registerOp("unlock", opUnlock)
	registerOp("userns", func(string) error {
		out, err := exec.Command("unshare", "--user", "--net", "true").CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
		}
		return nil
	})
	registerOp("fork", opFork)
	registerOp("hog", opHog)
	registerOp("fill", opFill)
	registerOp("keyread", func(v string) error {
		id, _ := strconv.Atoi(v)
		buf := make([]byte, 256)
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
		if err != nil {
			return err
		}
		fmt.Printf("  read the key: %q\n", buf[:min(n, len(buf))])
		return nil
	})
	registerOp("keydescribe", func(v string) error {
		id, _ := strconv.Atoi(v)
		_, err := unix.KeyctlString(unix.KEYCTL_DESCRIBE, id)
		return err
	})
	registerOp("addkey", func(desc string) error {
		_, err := unix.AddKey("user", desc, []byte("from the box"), unix.KEY_SPEC_SESSION_KEYRING)
		return err
	})
	registerOp("grep", func(v string) error {
		file, want, _ := strings.Cut(v, "|")
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), want) {
			return fmt.Errorf("%s does not show %q", file, want)
		}
		return nil
	})
	registerOp("bpf", func(string) error {
		// A map lookup on no map: reaching the kernel's bpf() at all
		// answers EBADF; refused before it, EPERM.
		var attr [32]byte
		*(*int32)(unsafe.Pointer(&attr[0])) = -1
		_, _, e := unix.Syscall(unix.SYS_BPF, 1 /* BPF_MAP_LOOKUP_ELEM */, uintptr(unsafe.Pointer(&attr[0])), unsafe.Sizeof(attr))
		if e == unix.EBADF {
			return nil
		}
		return e
	})
	registerOp("perf", func(string) error {
		// The task's own CPU clock, user space only: what an unprivileged
		// process may open (perf_event_paranoid 2).
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK,
			Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{})), Bits: unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
		fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, 0)
		if err != nil {
			return err
		}
		return unix.Close(fd)
	})
}

// opUnlock tries to undo the read-only mount on the folder v from a child
// in user and mount namespaces of its own, nested in the box, where it
// holds every capability over its copy of the box's mounts (until it execs,
// so it makes raw system calls only): it unmounts v, or failing that clears
// its read-only flag, then appends to v/config.
func opUnlock(v string) error {
	dir, err := unix.BytePtrFromString(v)
	if err != nil {
		return err
	}
	cfg, _ := unix.BytePtrFromString(v + "/config")
	attr := unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	pDir, pCfg, pAttr := uintptr(unsafe.Pointer(dir)), uintptr(unsafe.Pointer(cfg)), uintptr(unsafe.Pointer(&attr))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pid, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS|uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	if e != 0 {
		return fmt.Errorf("clone into new namespaces: %w", e)
	}
	if pid == 0 {
		// The child: no Go runtime from here on.
		code := uintptr(0)
		if _, _, e := syscall.RawSyscall(syscall.SYS_UMOUNT2, pDir, unix.MNT_DETACH, 0); e != 0 {
			code = 10
			if _, _, e := syscall.RawSyscall6(unix.SYS_MOUNT_SETATTR, ^uintptr(99) /* AT_FDCWD */, pDir, 0, pAttr, unsafe.Sizeof(attr), 0); e != 0 {
				code = 20
			}
		}
		fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, ^uintptr(99), pCfg, syscall.O_WRONLY|syscall.O_APPEND, 0, 0, 0)
		if e != 0 {
			syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 100+code, 0, 0)
		}
		syscall.RawSyscall(syscall.SYS_WRITE, fd, pCfg, 1)
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, code, 0, 0)
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(int(pid), &ws, 0, nil); err != nil {
		return err
	}
	runtime.KeepAlive(dir)
	runtime.KeepAlive(cfg)
	runtime.KeepAlive(&attr)
	how := map[int]string{0: "unmounted", 10: "its read-only flag cleared", 20: "neither unmounted nor made writable"}
	if c := ws.ExitStatus(); c >= 100 {
		return fmt.Errorf("%s, and %s/config could not be written", how[c-100], v)
	}
	fmt.Printf("  %s was %s and written\n", v, how[ws.ExitStatus()])
	return nil
}

// opFork starts sleepers until n run or the box refuses one, then ends
// them: a fork bomb that stops at the box's process limit.
func opFork(v string) error {
	n, _ := strconv.Atoi(v)
	var pids []int
	defer func() {
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		for _, p := range pids {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(p, &ws, 0, nil)
		}
	}()
	for len(pids) < n {
		pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "60"}, &syscall.ProcAttr{})
		if err != nil {
			return fmt.Errorf("stopped after %d processes: %w", len(pids), err)
		}
		pids = append(pids, pid)
	}
	return nil
}

// opHog maps and touches anonymous memory, 64 MiB at a time, up to v MiB.
func opHog(v string) error {
	mib, _ := strconv.Atoi(v)
	var maps [][]byte
	defer func() {
		for _, m := range maps {
			_ = unix.Munmap(m)
		}
	}()
	for got := 0; got < mib; got += 64 {
		m, err := unix.Mmap(-1, 0, 64<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return fmt.Errorf("stopped at %d MiB: %w", got, err)
		}
		for i := 0; i < len(m); i += 4096 {
			m[i] = 1
		}
		maps = append(maps, m)
	}
	return nil
}

// opFill writes path|MiB, 1 MiB at a time, and removes it.
func opFill(v string) error {
	path, mibs, _ := strings.Cut(v, "|")
	mib, _ := strconv.Atoi(mibs)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer os.Remove(path)
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for i := 0; i < mib; i++ {
		if _, err := f.Write(chunk); err != nil {
			return fmt.Errorf("stopped at %d MiB: %w", i, err)
		}
	}
	return nil
}

func runBoxAttacks(t *testing.T, a *arena) {
	t.Run("git", func(t *testing.T) { boxGitAttacks(t, a) })
	t.Run("cli-config", func(t *testing.T) { cliConfigAttacks(t, a) })
	t.Run("limits", func(t *testing.T) { limitAttacks(t, a) })
	t.Run("kernel", func(t *testing.T) { kernelAttacks(t, a) })
}

func mkfiles(t *testing.T, files map[string]string) {
	t.Helper()
	for p, content := range files {
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// unchanged fails the test for each file whose content is no longer what
// it was made with.
func unchanged(t *testing.T, files map[string]string) {
	t.Helper()
	for p, want := range files {
		if strings.HasSuffix(p, "/") {
			continue
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s changed: %q, %v", p, b, err)
		}
	}
}

// .git is read-only in every box, also under @write:<repo>: its hooks and
// config (which git runs), a nested repository's, a worktree's .git file.
func boxGitAttacks(t *testing.T, a *arena) {
	repo := filepath.Join(a.root, "repo")
	wt := filepath.Join(a.root, "wt")
	files := map[string]string{
		repo + "/.git/config":          "[core]\n\trepositoryformatversion = 0\n",
		repo + "/.git/HEAD":            "ref: refs/heads/main\n",
		repo + "/.git/hooks/":          "",
		repo + "/.mcp.json":            `{"mcpServers":{}}`,
		repo + "/src/main.go":          "package main\n",
		repo + "/sub/.git/config":      "[core]\n",
		repo + "/sub/.git/hooks/":      "",
		repo + "/node_modules/x/.git/": "",
		wt + "/.git":                   "gitdir: " + repo + "/.git/worktrees/wt\n",
	}
	mkfiles(t, files)
	for i, m := range netModes {
		perms := []string{"@write:" + repo, "@write:" + wt}
		if m.name == "network" {
			perms = append(perms, "@network")
		}
		bad := []string{
			"unlock:" + repo + "/.git",
			"write:" + repo + "/.git/hooks/post-checkout", "write:" + repo + "/.git/config", "rename:" + repo + "/.git",
			"write:" + repo + "/.git/HEAD", "write:" + repo + "/sub/.git/hooks/pre-commit", "rename:" + repo + "/sub/.git",
			"write:" + wt + "/.git", "replace:" + wt + "/.git", "remove:" + wt + "/.git",
			"mkfile:" + repo + "/.claude/settings.json", "write:" + repo + "/.mcp.json",
		}
		good := []string{"write:" + repo + "/src/main.go", "write:" + repo + "/sub/new.txt", "write:" + wt + "/file.txt"}
		log := a.run("git"+strconv.Itoa(i), perms, append(bad, good...)...)
		refused(t, log, bad...)
		worked(t, log, good...)
	}
	delete(files, repo+"/src/main.go")
	unchanged(t, files)
	if _, err := os.Stat(repo + "/.git/hooks/post-checkout"); err == nil {
		t.Error("a hook was planted")
	}
}

// The agent CLIs' configuration that the user's own runs read is never
// writable from a box, present or not, while what the CLI writes itself
// (sessions, history, credentials) still is.
func cliConfigAttacks(t *testing.T, a *arena) {
	home := filepath.Join(a.root, "home")
	claude, codex := home+"/.claude", home+"/.codex"
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home) // the engine's (in this process) and so the user's and the agents'
	// Absent: nothing of either CLI exists; the box may write the home folder.
	for i, m := range netModes {
		perms := []string{"@write:" + home}
		if m.name == "network" {
			perms = append(perms, "@network")
		}
		bad := []string{"mkfile:" + claude + "/settings.json", "replace:" + claude + "/settings.json",
			"mkfile:" + claude + "/hooks/session-start.sh", "mkfile:" + claude + "/plugins/evil/plugin.json",
			"mkfile:" + home + "/.claude.json", "mkfile:" + codex + "/config.toml", "mkfile:" + codex + "/rules/default.rules"}
		good := []string{"mkfile:" + claude + "/projects/p/s" + strconv.Itoa(i) + ".jsonl", "append:" + claude + "/history.jsonl",
			"mkfile:" + codex + "/sessions/s" + strconv.Itoa(i) + ".jsonl"}
		log := a.run("cfg-absent"+strconv.Itoa(i), perms, append(bad, good...)...)
		refused(t, log, bad...)
		worked(t, log, good...)
	}
	for _, p := range []string{claude + "/settings.json", codex + "/config.toml"} {
		if b, err := os.ReadFile(p); err != nil || strings.Contains(string(b), "hooks") {
			t.Errorf("%s: %q %v", p, b, err)
		}
	}
	if _, err := os.Stat(claude + "/hooks/session-start.sh"); err == nil {
		t.Error("a hook script was planted")
	}
	// Present, granted as the presets grant them (the CLI's own folder).
	files := map[string]string{
		claude + "/settings.json":     `{"model":"mine"}`,
		claude + "/.credentials.json": `{"token":"old"}`,
		claude + "/hooks/mine.sh":     "#!/bin/sh\n",
		codex + "/config.toml":        "model = \"mine\"\n",
		codex + "/auth.json":          "{}",
	}
	mkfiles(t, files)
	for i, m := range netModes {
		perms := []string{"@write:" + claude, "@write:" + codex}
		if m.name == "network" {
			perms = append(perms, "@network")
		}
		bad := []string{"write:" + claude + "/settings.json", "replace:" + claude + "/settings.json",
			"remove:" + claude + "/settings.json", "rename:" + claude + "/hooks", "write:" + claude + "/hooks/mine.sh",
			"mkfile:" + claude + "/hooks/evil.sh", "write:" + codex + "/config.toml", "replace:" + codex + "/config.toml"}
		good := []string{"mkfile:" + claude + "/projects/p/t" + strconv.Itoa(i) + ".jsonl",
			"replace:" + claude + "/.credentials.json", "write:" + codex + "/auth.json"}
		log := a.run("cfg-present"+strconv.Itoa(i), perms, append(bad, good...)...)
		refused(t, log, bad...)
		worked(t, log, good...)
	}
	delete(files, claude+"/.credentials.json")
	delete(files, codex+"/auth.json")
	unchanged(t, files)
}

// A box cannot exhaust what the user needs: a fork bomb stops at the
// process limit, a memory hog at the memory limit, /dev/shm at its size;
// the engine, the user's agent and the next start are unharmed.
func limitAttacks(t *testing.T, a *arena) {
	var before map[string]any
	okJSON(t, &before, "settings", "arena")
	ok(t, "settings", "arena", "--boxMaxProcesses", "256", "--boxMemoryMiB", "1024", "--boxShmMiB", "64")
	defer ok(t, "settings", "arena", "--boxMaxProcesses", fmt.Sprint(before["boxMaxProcesses"]),
		"--boxMemoryMiB", fmt.Sprint(before["boxMemoryMiB"]), "--boxShmMiB", fmt.Sprint(before["boxShmMiB"]))
	for i, m := range netModes {
		ops := []string{"fork:1200", "hog:1536", "fill:/dev/shm/fill|256"}
		start := time.Now()
		log := a.run("limits"+strconv.Itoa(i), m.perms(a), ops...)
		refused(t, log, ops...)
		t.Logf("%s: the attacks ended in %s:\n%s", m.name, time.Since(start).Round(time.Millisecond), log)
		if r := record(t, a.proj, "limits"+strconv.Itoa(i)); r.ExitCode == nil || *r.ExitCode != 0 {
			t.Errorf("the box's end was not recorded: %+v %q", r.ExitCode, r.Signal)
		}
		if r := record(t, a.proj, "users"); r.Status != "running" {
			t.Fatalf("the user's agent is %s", r.Status)
		}
	}
	// What the box may use is still there for the next one.
	log := a.run("after-limits", netModes[0].perms(a), "fork:20", "hog:256", "fill:/dev/shm/fill|16")
	worked(t, log, "fork:20", "hog:256", "fill:/dev/shm/fill|16")
}

// The user's keyring is not the box's: a key the user holds can be neither
// read nor described (nor seen in /proc/keys), and none can be added; bpf()
// and perf events are refused, and so are new namespaces. (The key's owner may read it by its
// permissions, without possessing it through a keyring: which session
// keyring a Go thread has depends on the thread.)
func kernelAttacks(t *testing.T, a *arena) {
	desc := fmt.Sprintf("shepherd-attack-%d", os.Getpid())
	id, err := unix.AddKey("user", desc, []byte("the user's secret"), unix.KEY_SPEC_SESSION_KEYRING)
	if err != nil {
		t.Fatalf("add a key to this test's session keyring: %v", err)
	}
	defer unix.KeyctlInt(unix.KEYCTL_REVOKE, id, 0, 0, 0)
	const possessorAll, userViewReadSearch = 0x3f000000, 0x000b0000
	if err := unix.KeyctlSetperm(id, possessorAll|userViewReadSearch); err != nil {
		t.Fatal(err)
	}
	for i, m := range netModes {
		planted := desc + "-planted" + strconv.Itoa(i)
		ops := []string{"keyread:" + strconv.Itoa(id), "keydescribe:" + strconv.Itoa(id), "addkey:" + planted,
			"grep:/proc/keys|" + desc, "bpf:", "perf:", "userns:"}
		log := a.run("kernel"+strconv.Itoa(i), m.perms(a), ops...)
		refused(t, log, ops...)
		if strings.Contains(log, "the user's secret") {
			t.Errorf("%s: the box read the user's key", m.name)
		}
		// A key the box added is visible here (same owner), whichever
		// keyring it went to.
		if b, _ := os.ReadFile("/proc/keys"); strings.Contains(string(b), planted) {
			t.Errorf("%s: a key the box added is on the host:\n%s", m.name, b)
		}
	}
}
