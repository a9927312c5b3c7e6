package cli

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ptraceAny attaches to any thread of process pid (and detaches at once).
func ptraceAny(pid string) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ents, err := os.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		return err
	}
	var errs []string
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		if err := unix.PtraceAttach(tid); err != nil {
			errs = append(errs, fmt.Sprintf("%d: %v", tid, err))
			continue
		}
		var ws unix.WaitStatus
		_, _ = unix.Wait4(tid, &ws, unix.WALL, nil)
		_ = unix.PtraceDetach(tid)
		return nil
	}
	return fmt.Errorf("%s", strings.Join(errs, "; "))
}
