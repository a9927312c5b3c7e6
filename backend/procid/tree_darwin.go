package procid

import (
	"fmt"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// CPUResolution is the granularity of the CPU times read here (gopsutil
// reads them in nanoseconds on macOS).
const CPUResolution = time.Duration(0)

// descendants walks the process table once (macOS has no /proc): the
// children of pid, theirs, and so on.
func descendants(pid int) []int {
	all, err := process.Processes()
	if err != nil {
		return nil
	}
	kids := map[int32][]int32{}
	for _, p := range all {
		if pp, err := p.Ppid(); err == nil {
			kids[pp] = append(kids[pp], p.Pid)
		}
	}
	var out []int
	queue := kids[int32(pid)]
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if !Alive(int(c)) {
			continue
		}
		out = append(out, int(c))
		queue = append(queue, kids[c]...)
	}
	return out
}

func treeUsage(pid int) (Usage, error) {
	if !Alive(pid) {
		return Usage{}, fmt.Errorf("process %d is gone", pid)
	}
	var u Usage
	for _, p := range append([]int{pid}, descendants(pid)...) {
		pr, err := process.NewProcess(int32(p))
		if err != nil {
			continue
		}
		u.Processes++
		if t, err := pr.Times(); err == nil {
			u.CPU += time.Duration((t.User + t.System) * float64(time.Second))
		}
		if m, err := pr.MemoryInfo(); err == nil {
			u.RSS += int64(m.RSS)
		}
	}
	return u, nil
}
