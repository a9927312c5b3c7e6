// Package restrict enforces a sandbox's Landlock rules on the calling
// thread (the Landlock system calls of github.com/landlock-lsm/go-landlock).
// Only the shim imports it.
package restrict

import (
	"fmt"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"shepherd/backend/sandbox"
)

// Access rights, as go-landlock groups them.
const (
	fsRead  = llsys.AccessFSExecute | llsys.AccessFSReadFile | llsys.AccessFSReadDir
	fsWrite = llsys.AccessFSWriteFile | llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile |
		llsys.AccessFSMakeChar | llsys.AccessFSMakeDir | llsys.AccessFSMakeReg | llsys.AccessFSMakeSock |
		llsys.AccessFSMakeFifo | llsys.AccessFSMakeBlock | llsys.AccessFSMakeSym | llsys.AccessFSTruncate
	// fsFile are the rights that apply to a file (not a folder).
	fsFile = llsys.AccessFSExecute | llsys.AccessFSWriteFile | llsys.AccessFSReadFile | llsys.AccessFSTruncate
)

// handledFS are the file-system rights the kernel of Landlock ABI abi
// knows (each ABI adds to the one before).
func handledFS(abi int) uint64 {
	h := uint64(fsRead | fsWrite&^llsys.AccessFSTruncate)
	if abi >= 2 {
		h |= llsys.AccessFSRefer
	}
	if abi >= 3 {
		h |= llsys.AccessFSTruncate
	}
	if abi >= 5 {
		h |= llsys.AccessFSIoctlDev
	}
	return h
}

// scoped is what the kernel of ABI abi can keep inside the sandbox: signals
// and abstract Unix sockets (ABI 6 and newer).
func scoped(abi int) uint64 {
	if abi >= 6 {
		return llsys.ScopeAbstractUnixSocket | llsys.ScopeSignal
	}
	return 0
}

type rule struct {
	paths  []string
	access uint64
	// optional paths may be missing (a device this machine lacks).
	optional bool
}

// Restrict applies g's rules to the calling thread and to everything it
// starts from then on: read and execute everywhere, write only in g's
// folders, a few devices and the box's own /dev/shm and /dev/pts; and (ABI 6
// and newer) no signal and no abstract Unix socket to any process outside
// the sandbox. Only this thread: the caller locks its goroutine to it and
// starts the agent from it (the shim's other threads keep writing the
// agent's status). Files already open (the agent's log) stay writable. It
// sets no_new_privs on the thread. It fails — it never goes on unrestricted
// — when the kernel has no Landlock; rights newer than the kernel's ABI are
// left out (the engine refuses to start what would then be unenforced:
// sandbox.Support.Check).
func Restrict(g sandbox.Grants) error {
	abi, err := sandbox.LandlockABI()
	if err != nil || abi < 1 {
		return fmt.Errorf("%w: the kernel has no Landlock (ABI %d, %v)", sandbox.ErrUnavailable, abi, err)
	}
	handled := handledFS(abi)
	rules := []rule{
		{paths: []string{"/"}, access: fsRead},
		{paths: sandbox.WritableDevices, access: fsFile, optional: true},
		{paths: sandbox.BoxScratchDirs, access: fsRead | fsWrite, optional: true},
		{paths: g.WriteDirs, access: fsRead | fsWrite | llsys.AccessFSRefer},
	}
	fd, err := llsys.LandlockCreateRuleset(&llsys.RulesetAttr{HandledAccessFS: handled, Scoped: scoped(abi)}, 0)
	if err != nil {
		return fmt.Errorf("%w: Landlock: create the rule set: %v", sandbox.ErrUnavailable, err)
	}
	defer unix.Close(fd)
	for _, r := range rules {
		for _, p := range r.paths {
			if err := addPath(fd, p, r.access&handled); err != nil {
				if r.optional && (err == unix.ENOENT) {
					continue
				}
				return fmt.Errorf("%w: Landlock: the rule for %s: %v", sandbox.ErrUnavailable, p, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("%w: no_new_privs: %v", sandbox.ErrUnavailable, err)
	}
	if err := llsys.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("%w: Landlock: %v", sandbox.ErrUnavailable, err)
	}
	return nil
}

// addPath allows access beneath path (on a file, only the rights a file
// has).
func addPath(ruleset int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fsFile
	}
	return llsys.LandlockAddPathBeneathRule(ruleset, &llsys.PathBeneathAttr{AllowedAccess: access, ParentFd: fd}, 0)
}
