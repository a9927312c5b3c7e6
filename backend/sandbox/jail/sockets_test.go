package jail

import (
	"slices"
	"strings"
	"testing"
)

func TestParseUnixSockets(t *testing.T) {
	in := `Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 20480 /run/user/1000/bus
0000000000000000: 00000002 00000000 00010000 0001 01 20481 @/tmp/.X11-unix/X0
0000000000000000: 00000003 00000000 00000000 0001 03 20482
0000000000000000: 00000002 00000000 00010000 0001 01 20483 /tmp/with space/sock
0000000000000000: 00000002 00000000 00010000 0001 01 20484 /run/user/1000/bus
short line
`
	got := ParseUnixSockets(strings.NewReader(in))
	want := []string{"/run/user/1000/bus", "/tmp/with space/sock"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func FuzzParseUnixSockets(f *testing.F) {
	f.Add("Num RefCount Protocol Flags Type St Inode Path\n0: 2 0 10000 1 1 5 /a/b\n")
	f.Add("0: 2 0 10000 1 1 5 @abstract\n\n\x00")
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range ParseUnixSockets(strings.NewReader(s)) {
			if !strings.HasPrefix(p, "/") {
				t.Fatalf("not a pathname socket: %q", p)
			}
		}
	})
}
