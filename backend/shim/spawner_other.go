//go:build !linux

package shim

import (
	"fmt"
	"os"
)

// Spawner: only Linux starts shims in boxes.
func Spawner(conn *os.File) int {
	fmt.Fprintln(os.Stderr, "shepherd-shim: the spawner is Linux only")
	return 2
}
