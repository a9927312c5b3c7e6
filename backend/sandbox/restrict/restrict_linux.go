// Package restrict enforces a sandbox's Landlock rules on the calling
// process (github.com/landlock-lsm/go-landlock). Only the shim imports it:
// the library brings psx, which the engine has no use for.
package restrict

import (
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"

	"shepherd/backend/sandbox"
)

// Restrict applies g's rules to this process and everything it starts from
// now on: read and execute everywhere, write only in g's folders, a few
// devices and the box's own /dev/shm and /dev/pts; and (ABI 6 and newer) no
// signal and no abstract Unix socket to any process outside the sandbox.
// Files already open (the agent's log, its stdout and stderr) stay
// writable. It fails — it never goes on unrestricted — when the kernel has
// no Landlock; rights newer than the kernel's ABI are left out (best
// effort), and the engine refuses to start what would then be unenforced
// (sandbox.Support.Check).
func Restrict(g sandbox.Grants) error {
	abi, err := sandbox.LandlockABI()
	if err != nil || abi < 1 {
		return fmt.Errorf("%w: the kernel has no Landlock (ABI %d, %v)", sandbox.ErrUnavailable, abi, err)
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(sandbox.WritableDevices...).IgnoreIfMissing(),
		landlock.RWDirs(sandbox.BoxScratchDirs...).IgnoreIfMissing(),
	}
	if len(g.WriteDirs) > 0 {
		rules = append(rules, landlock.RWDirs(g.WriteDirs...).WithRefer())
	}
	cfg := landlock.Config{HandledAccessFS: landlock.V7.HandledAccessFS, Scoped: landlock.V7.Scoped}
	if err := cfg.BestEffort().Restrict(rules...); err != nil {
		return fmt.Errorf("%w: Landlock: %v", sandbox.ErrUnavailable, err)
	}
	return nil
}
