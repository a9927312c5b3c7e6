package logtail

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestParseOffsets(t *testing.T) {
	o, err := ParseOffsets([]byte("12 0\n\n13 4096\n"))
	if err != nil || len(o) != 2 || o[12] != 0 || o[13] != 4096 {
		t.Fatalf("%v %v", o, err)
	}
	if got := string(o.Format([]uint64{13, 12, 13, 99})); got != "13 4096\n12 0\n" {
		t.Errorf("format: %q", got)
	}
	for _, bad := range []string{"12", "x 1", "12 -1", "12 1 2", "12 y", strings.Repeat("1 1\n", 20000)} {
		if _, err := ParseOffsets([]byte(bad)); err == nil {
			t.Errorf("%.20q parsed", bad)
		}
	}
}

func FuzzParseOffsets(f *testing.F) {
	for _, s := range []string{"", "1 0\n", "12 0\n13 4096\n", "1 -1", "a b", "18446744073709551615 9223372036854775807\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := ParseOffsets(b)
		if err != nil {
			return
		}
		var order []uint64
		for ino, off := range o {
			if off < 0 {
				t.Fatalf("negative offset %d", off)
			}
			order = append(order, ino)
		}
		again, err := ParseOffsets(o.Format(order))
		if err != nil || len(again) != len(o) {
			t.Fatalf("round trip: %v %v", again, err)
		}
		for k, v := range o {
			if again[k] != v {
				t.Fatalf("round trip changed %d: %d -> %d", k, v, again[k])
			}
		}
	})
}

// Files named like older parts beside a log that was never rotated (no
// offsets file) are not its parts; a log whose offsets file is damaged is
// read alone, from 0.
func TestUnrotatedLogIgnoresLookalikes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "console.log")
	os.WriteFile(p, []byte("mine\n"), 0o600)
	os.WriteFile(Rotated(p, 1), []byte("someone else's\n"), 0o600)
	b, off, err := Last(p, 1<<20)
	if err != nil || string(b) != "mine\n" || off != 0 || Size(p) != 5 {
		t.Errorf("%q %d %v", b, off, err)
	}
	os.WriteFile(p+OffsetsSuffix, []byte("garbage"), 0o600)
	if b, off, _ := Last(p, 1<<20); string(b) != "mine\n" || off != 0 {
		t.Errorf("damaged offsets: %q %d", b, off)
	}
	// Offsets that place the log but not the older file: the log alone, at
	// its offset.
	fi, _ := os.Stat(p)
	old, _ := os.Stat(Rotated(p, 1))
	line := func(fi os.FileInfo, off int64) string {
		return strconv.FormatUint(Inode(fi), 10) + " " + strconv.FormatInt(off, 10) + "\n"
	}
	os.WriteFile(p+OffsetsSuffix, []byte(line(fi, old.Size())), 0o600)
	if b, off, _ := Last(p, 1<<20); string(b) != "mine\n" || off != old.Size() || Size(p) != old.Size()+5 {
		t.Errorf("placed alone: %q %d", b, off)
	}
	// Offsets that place both: the older part is read before it.
	os.WriteFile(p+OffsetsSuffix, []byte(line(fi, old.Size())+line(old, 0)), 0o600)
	if b, off, _ := Last(p, 1<<20); string(b) != "someone else's\nmine\n" || off != 0 {
		t.Errorf("rotated: %q %d", b, off)
	}
}
