package procid

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc/<pid>/stat: 100
// on every Linux build that matters (it is fixed in the kernel's ABI).
const clockTicks = 100

// CPUResolution is the granularity of the CPU times read here: one clock
// tick. A difference of one tick may be rounding, not use.
const CPUResolution = time.Second / clockTicks

var pageSize = int64(os.Getpagesize())

// statFields returns the fields of /proc/<pid>/stat after the command name
// (which may hold spaces and parentheses, so it ends at the last ')'):
// fields[0] is the state, [1] the ppid, [11] utime, [12] stime, [21] rss.
func statFields(b []byte) ([]string, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return nil, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 22 || len(f[0]) != 1 {
		return nil, false
	}
	return f, true
}

type procStat struct {
	state   byte
	cpu     time.Duration
	rss     int64
	zombied bool
}

func parseProcStat(b []byte) (procStat, bool) {
	f, ok := statFields(b)
	if !ok {
		return procStat{}, false
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	rss, err3 := strconv.ParseInt(f[21], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || rss < 0 {
		return procStat{}, false
	}
	ticks := ut + st
	return procStat{state: f[0][0], cpu: time.Duration(ticks) * time.Second / clockTicks, rss: rss * pageSize,
		zombied: f[0][0] == 'Z' || f[0][0] == 'X'}, true
}

func readProcStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseProcStat(b)
}

// children reads the children of every thread of pid.
func children(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(s); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

func descendants(pid int) []int {
	var out []int
	seen := map[int]bool{pid: true}
	queue := children(pid)
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if seen[c] {
			continue
		}
		seen[c] = true
		if st, ok := readProcStat(c); !ok || st.zombied {
			continue
		}
		out = append(out, c)
		queue = append(queue, children(c)...)
	}
	return out
}

func treeUsage(pid int) (Usage, error) {
	root, ok := readProcStat(pid)
	if !ok || root.zombied {
		return Usage{}, fmt.Errorf("process %d is gone", pid)
	}
	u := Usage{Processes: 1, CPU: root.cpu, RSS: root.rss}
	for _, c := range descendants(pid) {
		if st, ok := readProcStat(c); ok {
			u.Processes++
			u.CPU += st.cpu
			u.RSS += st.rss
		}
	}
	return u, nil
}
