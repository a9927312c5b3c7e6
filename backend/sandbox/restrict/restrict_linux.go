// Package restrict enforces a sandbox's filesystem rules on the calling
// process, with Landlock (github.com/landlock-lsm/go-landlock). Only the
// shim imports it: the library brings psx, which the engine (a GTK app on
// Linux) has no use for.
package restrict

import (
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"

	"shepherd/backend/sandbox"
)

// Restrict applies g's filesystem rules to this process and everything it
// starts from now on: read and execute everywhere, write only in g's
// folders and a few devices. Files already open (the agent's log, its
// stdout and stderr) stay writable. It fails — it never goes on
// unrestricted — when the kernel has no Landlock; newer Landlock rights the
// kernel lacks are left out (best effort above ABI 1).
func Restrict(g sandbox.Grants) error {
	abi, err := sandbox.LandlockABI()
	if err != nil || abi < 1 {
		return fmt.Errorf("%w: the kernel has no Landlock (ABI %d, %v)", sandbox.ErrUnavailable, abi, err)
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(sandbox.WritableDevices...).IgnoreIfMissing(),
	}
	if len(g.WriteDirs) > 0 {
		rules = append(rules, landlock.RWDirs(g.WriteDirs...).WithRefer())
	}
	if err := landlock.V7.BestEffort().RestrictPaths(rules...); err != nil {
		return fmt.Errorf("%w: Landlock: %v", sandbox.ErrUnavailable, err)
	}
	return nil
}
