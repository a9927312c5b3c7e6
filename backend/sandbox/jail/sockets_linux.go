package jail

import "os"

// HostSockets lists the host's pathname Unix sockets, to be covered in the
// box: those of the calling thread's network namespace, which must be the
// host's (the engine reads them and hands them to the shim).
func HostSockets() []string {
	f, err := os.Open("/proc/thread-self/net/unix")
	if err != nil {
		return nil
	}
	defer f.Close()
	return ParseUnixSockets(f)
}
