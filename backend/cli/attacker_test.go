package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// asAttacker makes the test binary the attacker: a sandboxed agent that
// runs arbitrary code and tries, one op per argument, what the sandbox must
// refuse. Each op prints "OK <op>" (the attack worked) or "FAIL <op>:
// <error>" to stdout, the agent's log.
const asAttacker = "SHEPHERD_TEST_ATTACKER"

func attackerMain(args []string) int {
	for _, arg := range args {
		op, val, _ := strings.Cut(arg, ":")
		if op == "hook" {
			// Said before it is posted: a waiting agent writes nothing
			// after its hook (output after it means it went on).
			fmt.Printf("OK %s\n", arg)
			if err := attack(op, val); err != nil {
				fmt.Printf("FAIL %s: %v\n", arg, err)
			}
			continue
		}
		if err := attack(op, val); err != nil {
			fmt.Printf("FAIL %s: %v\n", arg, err)
		} else {
			fmt.Printf("OK %s\n", arg)
		}
	}
	return 0
}

func attack(op, val string) error {
	switch op {
	case "write":
		return os.WriteFile(val, []byte("attacker was here\n"), 0o644)
	case "read":
		_, err := os.ReadFile(val)
		return err
	case "ls":
		_, err := os.ReadDir(val)
		if err == nil {
			ents, _ := os.ReadDir(val)
			if len(ents) == 0 {
				return fmt.Errorf("empty")
			}
		}
		return err
	case "chmod":
		return os.Chmod(val, 0o777)
	case "setuid":
		return os.Chmod(val, 0o4755)
	case "utimes":
		t := time.Unix(1, 0)
		return os.Chtimes(val, t, t)
	case "xattr":
		return unix.Setxattr(val, "user.attacker", []byte("1"), 0)
	case "fcap":
		// A valid VFS_CAP_REVISION_2 blob granting CAP_SETUID.
		blob := []byte{0, 0, 0, 2, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		return unix.Setxattr(val, "security.capability", blob, 0)
	case "chown":
		return os.Chown(val, 12345, 12345)
	case "mknod":
		// A block device node (the first disk): written through, it would
		// reach any file on it.
		if err := unix.Mknod(val, unix.S_IFBLK|0o600, int(unix.Mkdev(8, 0))); err != nil {
			return err
		}
		f, err := os.OpenFile(val, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		return f.Close()
	case "shm":
		id, _ := strconv.Atoi(val)
		b, err := unix.SysvShmAttach(id, 0, 0)
		if err != nil {
			return err
		}
		copy(b, "attacker")
		return unix.SysvShmDetach(b)
	case "kill":
		pid, _ := strconv.Atoi(val)
		return syscall.Kill(pid, syscall.SIGSTOP)
	case "unix":
		c, err := net.DialTimeout("unix", val, 2*time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	case "abstract":
		c, err := net.DialTimeout("unix", "@"+val, 2*time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	case "api-user":
		// val: the path of engine.json; its token used against the API.
		url, token, err := userToken(val)
		if err != nil {
			return err
		}
		return apiCall("GET", url+"/v1/projects", token, nil)
	case "api-nocred":
		return apiCall("GET", os.Getenv("SHEPHERD_API_URL")+"/v1/projects", "", nil)
	case "api-forge":
		// val: project. Create an agent naming the user as caller, unsandboxed.
		body := map[string]any{"id": "forged", "command": "/bin/true", "caller": nil, "parent": ""}
		return apiCall("POST", os.Getenv("SHEPHERD_API_URL")+"/v1/projects/"+val+"/agents", os.Getenv("SHEPHERD_AGENT_TOKEN"), body)
	case "cli":
		// val: the CLI's arguments, comma-separated; run with this agent's
		// own environment (its credential), as `shepherd` would be.
		self, _ := os.Executable()
		cmd := exec.Command(self, strings.Split(val, ",")...)
		// The informative variables are forged to name the user's agent:
		// they must change nothing.
		cmd.Env = append(os.Environ(), asCLI+"=1", asAttacker+"=", "SHEPHERD_AGENT_ID=users")
		out, err := cmd.CombinedOutput()
		fmt.Printf("  cli %s: %s", val, strings.ReplaceAll(string(out), "\n", "\n  "))
		if err != nil {
			return fmt.Errorf("%v", err)
		}
		return nil
	case "escape":
		// Leave a process in a session of its own, marked by val, that
		// outlives this one unless the box takes it down.
		cmd := exec.Command("/bin/sh", "-c", "exec sleep 1000")
		cmd.Env = append(os.Environ(), "SHEPHERD_ATTACK_MARK="+val)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		return cmd.Start()
	case "ptrace":
		// val: a pid; trace any of its threads (the box's PID 1 is the
		// shim, whose other threads are not boxed).
		return ptraceAny(val)
	case "hostnet":
		// val: a host socket's path; find it in the socket tables any
		// process or thread of the box shows (each its own network's).
		files, _ := filepath.Glob("/proc/*/task/*/net/unix")
		files = append(files, "/proc/net/unix")
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), val) {
				return nil
			}
		}
		return fmt.Errorf("not in the %d socket tables the box shows", len(files))
	case "fds":
		// val: a pid; open or follow any of its open files (the shim holds
		// the agent's status pipe and Shepherd's files).
		ents, err := os.ReadDir("/proc/" + val + "/fd")
		if err != nil {
			return err
		}
		var errs []string
		for _, e := range ents {
			p := "/proc/" + val + "/fd/" + e.Name()
			if _, err := os.Readlink(p); err == nil {
				return nil
			}
			f, err := os.Open(p)
			if err == nil {
				f.Close()
				return nil
			}
			errs = append(errs, err.Error())
		}
		return fmt.Errorf("%d descriptors, none reachable: %s", len(ents), strings.Join(errs, "; "))
	case "mem":
		// val: a pid; write into its memory.
		f, err := os.OpenFile("/proc/"+val+"/mem", os.O_RDWR, 0)
		if err != nil {
			return err
		}
		return f.Close()
	case "initsig":
		// Signals whose default would end the box's PID 1 (the shim).
		var errs []string
		for _, s := range []syscall.Signal{syscall.SIGQUIT, syscall.SIGABRT, syscall.SIGTRAP, syscall.SIGSYS, syscall.SIGILL, syscall.SIGTERM, syscall.SIGKILL} {
			if err := syscall.Kill(1, s); err != nil {
				errs = append(errs, s.String()+": "+err.Error())
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("%s", strings.Join(errs, "; "))
		}
		return nil
	case "killshim":
		// val: a file the test writes the shim's pid into; kill it.
		fmt.Println("READY")
		var pid int
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if b, err := os.ReadFile(val); err == nil {
				if pid, _ = strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 {
					break
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		if pid <= 0 {
			return fmt.Errorf("no pid in %s", val)
		}
		return syscall.Kill(pid, syscall.SIGKILL)
	case "hook":
		// val: a tool. Report a permission request, as Claude Code's
		// PermissionRequest hook does, with this agent's own credential.
		body := map[string]any{"hook_event_name": "PermissionRequest", "session_id": "s", "cwd": "/", "transcript_path": "/t",
			"tool_name": val, "tool_input": map[string]any{}}
		return apiCall("POST", os.Getenv("SHEPHERD_API_URL")+"/v1/hooks/claude", os.Getenv("SHEPHERD_AGENT_TOKEN"), body)
	case "hook-user":
		// val: the path of engine.json; a hook posted with the user's token.
		url, token, err := userToken(val)
		if err != nil {
			return err
		}
		return apiCall("POST", url+"/v1/hooks/claude", token, map[string]any{"hook_event_name": "Stop"})
	case "wait":
		time.Sleep(time.Hour)
		return nil
	}
	if f, ok := attackOps[op]; ok {
		return f(val)
	}
	return fmt.Errorf("unknown op %q", op)
}

// attackOps are further ops, each registered by the file of the attacks
// that use it (registerOp in an init), so that each class of attack lives
// in a file of its own.
var attackOps = map[string]func(val string) error{}

func registerOp(name string, f func(val string) error) {
	if _, dup := attackOps[name]; dup {
		panic("attack op registered twice: " + name)
	}
	attackOps[name] = f
}

// userToken reads the API's address and the user's token from engine.json
// at path (which the sandbox must hide).
func userToken(path string) (url, token string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	var info struct{ URL, Token string }
	if err := json.Unmarshal(b, &info); err != nil {
		return "", "", err
	}
	return info.URL, info.Token, nil
}

func apiCall(method, url, token string, body any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	return nil
}
