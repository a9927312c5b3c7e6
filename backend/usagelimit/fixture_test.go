package usagelimit

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The fixture CLIs' usage-limit modes (backend/supervisor/testdata) print
// what the real ones print; a Reader finds the reset in each, in the zone
// the CLI ran in.
func TestFixtureCLIs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fixture CLIs")
	}
	dir := t.TempDir()
	build := func(name string) string {
		bin := filepath.Join(dir, name)
		if out, err := exec.Command("go", "build", "-o", bin, "shepherd/backend/supervisor/testdata/"+name).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, out)
		}
		return bin
	}
	claude, codex := build("fakeclaude"), build("fakecodex")
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	reset := time.Now().Add(3 * time.Hour).Truncate(time.Minute)
	weekly := time.Now().Add(3 * 24 * time.Hour).Truncate(time.Minute)
	for _, tc := range []struct {
		name, bin, mode string
		reset           time.Time
		window          string
		kind            Kind
	}{
		{"claude session", claude, "usage-limit", reset, FiveHour, KindEvent},
		{"claude weekly", claude, "usage-limit-weekly", weekly, SevenDay, KindEvent},
		{"codex today", codex, "usage-limit", reset, "", KindCodex},
		{"codex another day", codex, "usage-limit", weekly, "", KindCodex},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"-p", "--output-format", "stream-json", "x"}
			if tc.bin == codex {
				args = []string{"exec", "--json", "x"}
			}
			cmd := exec.Command(tc.bin, args...)
			cmd.Env = append(os.Environ(), "FAKE_CLAUDE_MODE="+tc.mode, "FAKE_CODEX_MODE="+tc.mode, "TZ=Asia/Tokyo",
				"FAKE_CLAUDE_RESETS_AT="+itoa(tc.reset.Unix()), "FAKE_CODEX_RESETS_AT="+itoa(tc.reset.Unix()))
			out, err := cmd.Output()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Fatalf("exit: %v", err)
			}
			r := NewReader()
			sc := bufio.NewScanner(bytes.NewReader(out))
			now := time.Now()
			for sc.Scan() {
				if tc.bin == codex {
					r.Codex(sc.Bytes(), now, tokyo)
				} else {
					r.Claude(sc.Bytes(), now)
				}
			}
			l, ok := r.Limit()
			if !ok || !l.ResetsAt.Equal(tc.reset) || l.Window != tc.window || l.Kind != tc.kind || l.Message == "" {
				t.Fatalf("%+v %v, want the reset %v\n%s", l, ok, tc.reset, out)
			}
			if tc.bin == claude {
				// The words alone say the same, to the minute, in Tokyo's time.
				text, ok := ClaudeText(l.Message, now)
				if !ok || !text.ResetsAt.Equal(tc.reset) {
					t.Fatalf("%q: %+v", l.Message, text)
				}
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
