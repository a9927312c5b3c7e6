//go:build !linux && !darwin

package sandbox

func totalMemoryMiB() int { return 0 }
