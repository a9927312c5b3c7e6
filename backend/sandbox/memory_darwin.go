package sandbox

import "golang.org/x/sys/unix"

func totalMemoryMiB() int {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0
	}
	return int(n >> 20)
}
