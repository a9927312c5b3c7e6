// Package benchkit holds what the benchmark programs in bench/ share: the
// CLI run in-process against the engine, and /proc figures.
package benchkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"shepherd/backend/cli"
)

// CLI runs a CLI verb in this process against the engine engine.json names;
// with out, its --json answer is decoded there.
func CLI(out any, args ...string) error {
	var stdout, stderr bytes.Buffer
	if out != nil {
		args = append([]string{"--json"}, args...)
	}
	if code := cli.Main(context.Background(), args, &stdout, &stderr); code != 0 {
		return fmt.Errorf("shepherd %s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(stderr.String()))
	}
	if out != nil {
		return json.Unmarshal(stdout.Bytes(), out)
	}
	return nil
}

// ProcKiB reads a "Key: N kB" line of /proc/PID/<file> (status,
// smaps_rollup); 0 when there is none.
func ProcKiB(pid int, file, key string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, key) {
			f := strings.Fields(line[len(key):])
			if len(f) > 0 {
				n, _ := strconv.ParseFloat(f[0], 64)
				return n
			}
		}
	}
	return 0
}

// ShimFigures says what the shims of pids cost, each: RSS and PSS
// (/proc/PID/smaps_rollup) and threads, averaged over those that run.
func ShimFigures(pids []int) string {
	n, rss, pss, th := 0, 0.0, 0.0, 0
	for _, pid := range pids {
		r, p := ProcKiB(pid, "smaps_rollup", "Rss:"), ProcKiB(pid, "smaps_rollup", "Pss:")
		if r == 0 {
			continue
		}
		n++
		rss += r
		pss += p
		th += Threads(pid)
	}
	if n == 0 {
		return "shims: none running"
	}
	return fmt.Sprintf("shims: %d, each RSS %.2f MiB, PSS %.2f MiB, %.1f threads (averages)", n, rss/float64(n)/1024, pss/float64(n)/1024, float64(th)/float64(n))
}
