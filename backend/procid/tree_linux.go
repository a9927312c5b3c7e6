package procid

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
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
	threads int
	zombied bool
}

// parseProcStat reads the state, utime, stime, num_threads and rss of a
// /proc/<pid>/stat line without allocating: the stale check reads the
// process tree of every silent agent on each pass.
func parseProcStat(b []byte) (procStat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, false
	}
	var st procStat
	var ut, stime uint64
	n := 0 // fields after the command name, as statFields counts them
	for j := i + 2; j < len(b); {
		for j < len(b) && isSpace(b[j]) {
			j++
		}
		k := j
		for k < len(b) && !isSpace(b[k]) {
			k++
		}
		if k == j {
			break
		}
		f := b[j:k]
		var err error
		switch n {
		case 0:
			if len(f) != 1 {
				return procStat{}, false
			}
			st.state = f[0]
		case 11:
			ut, err = parseUint(f)
		case 12:
			stime, err = parseUint(f)
		case 17:
			var t uint64
			if t, err = parseUint(f); err == nil {
				st.threads = int(min(t, 1<<20))
			} else {
				st.threads, err = 0, nil // not a number: read every task
			}
		case 21:
			var rss int64
			if rss, err = strconv.ParseInt(string(f), 10, 64); err == nil && rss < 0 {
				return procStat{}, false
			}
			st.rss = rss * pageSize
		}
		if err != nil {
			return procStat{}, false
		}
		n++
		j = k
	}
	if n < 22 {
		return procStat{}, false
	}
	st.cpu = time.Duration(ut+stime) * time.Second / clockTicks
	st.zombied = st.state == 'Z' || st.state == 'X'
	return st, true
}

// isSpace is what strings.Fields splits /proc's ASCII lines on.
func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

func parseUint(f []byte) (uint64, error) {
	var v uint64
	if len(f) == 0 || len(f) > 19 {
		return strconv.ParseUint(string(f), 10, 64)
	}
	for _, c := range f {
		if c < '0' || c > '9' {
			return strconv.ParseUint(string(f), 10, 64)
		}
		v = v*10 + uint64(c-'0')
	}
	return v, nil
}

// readSmall reads a small /proc file into buf with plain system calls (no
// *os.File, no allocation); ok=false when it cannot be read or fills buf.
func readSmall(path string, buf []byte) (int, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, buf)
	if err != nil || n < 0 || n == len(buf) {
		return 0, false
	}
	return n, true
}

func readProcStat(pid int) (procStat, bool) {
	var buf [1024]byte
	n, ok := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
	if !ok {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return procStat{}, false
		}
		return parseProcStat(b)
	}
	return parseProcStat(buf[:n])
}

// children reads the children of every thread of pid; threads is its
// thread count (0: unknown). A process of one thread has its children in
// its own task's file: one read, where listing the tasks takes two more.
func children(pid, threads int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	if threads == 1 {
		return appendChildren(nil, dir+"/"+strconv.Itoa(pid)+"/children")
	}
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		out = appendChildren(out, dir+"/"+t.Name()+"/children")
	}
	return out
}

// appendChildren appends the pids listed in a task's children file.
func appendChildren(out []int, path string) []int {
	var buf [512]byte
	b := buf[:]
	n, ok := readSmall(path, b)
	if ok {
		b = b[:n]
	} else {
		var err error
		if b, err = os.ReadFile(path); err != nil {
			return out
		}
	}
	for j := 0; j < len(b); {
		for j < len(b) && isSpace(b[j]) {
			j++
		}
		k := j
		for k < len(b) && !isSpace(b[k]) {
			k++
		}
		if k > j {
			if c, err := parseUint(b[j:k]); err == nil && c > 0 && c < 1<<31 {
				out = append(out, int(c))
			}
		}
		j = k
	}
	return out
}

// descendant is a live descendant and what it uses.
type descendant struct {
	pid int
	st  procStat
}

// walk lists the live descendants of pid, whose own stat is root, with
// their stats: each process's stat is read once.
func walk(pid int, root procStat) []descendant {
	var out []descendant
	seen := map[int]bool{pid: true}
	queue := children(pid, root.threads)
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if seen[c] {
			continue
		}
		seen[c] = true
		st, ok := readProcStat(c)
		if !ok || st.zombied {
			continue
		}
		out = append(out, descendant{c, st})
		queue = append(queue, children(c, st.threads)...)
	}
	return out
}

func descendants(pid int) []int {
	root, ok := readProcStat(pid)
	if !ok {
		root = procStat{} // gone or unreadable: list its tasks' children if any remain
	}
	var out []int
	for _, d := range walk(pid, root) {
		out = append(out, d.pid)
	}
	return out
}

func treeUsage(pid int) (Usage, error) {
	root, ok := readProcStat(pid)
	if !ok || root.zombied {
		return Usage{}, fmt.Errorf("process %d is gone", pid)
	}
	u := Usage{Processes: 1, CPU: root.cpu, RSS: root.rss}
	for _, d := range walk(pid, root) {
		u.Processes++
		u.CPU += d.st.cpu
		u.RSS += d.st.rss
	}
	return u, nil
}
