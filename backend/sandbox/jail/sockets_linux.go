package jail

import "os"

// HostSockets lists the host's pathname Unix sockets, to be covered in the
// box: those of the calling thread's network namespace, which must be the
// host's (the shim calls it from any thread but the box's).
func HostSockets() []string {
	f, err := os.Open("/proc/thread-self/net/unix")
	if err != nil {
		return nil
	}
	defer f.Close()
	return ParseUnixSockets(f)
}
