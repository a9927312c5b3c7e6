// Command recovery measures the recovery issue's figures with real
// processes: load-time sync + recovery of a project of 1,000 records of which
// 200 are running (and 100 died while no engine watched), and the CPU of a
// watchdog pass and a stale check over those 200 running agents.
//
//	go run ./bench/recovery [-records 1000] [-running 200] [-dead 100]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

func main() {
	records := flag.Int("records", 1000, "agents in the project")
	running := flag.Int("running", 200, "of them running")
	dead := flag.Int("dead", 100, "of them found dead at load (no exit status)")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "shepherd-bench-")
	check(err)
	defer os.RemoveAll(tmp)
	shim := filepath.Join(tmp, "shepherd-shim")
	if out, err := exec.Command("go", "build", "-o", shim, "shepherd/backend/shim/cmd/shepherd-shim").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build shim: %v\n%s", err, out)
		os.Exit(1)
	}
	cfg := supervisor.Config{DataDir: filepath.Join(tmp, "data"), ShimPath: shim, Logger: zerolog.Nop()}
	e, err := supervisor.New(cfg)
	check(err)
	projDir := filepath.Join(tmp, "project")
	check(os.Mkdir(projDir, 0o700))
	p, _, err := e.AddProject(projDir, "bench")
	check(err)
	ctx := context.Background()
	fmt.Printf("Shepherd recovery bench — %d records, %d running, %d found dead; %s, %d CPUs\n\n",
		*records, *running, *dead, runtime.Version(), runtime.NumCPU())

	var pids []int
	for i := range *records {
		id := "agent-" + strconv.Itoa(i)
		on := true
		_, err := e.CreateAgent(p.ID, supervisor.AgentSpec{ID: id, Command: "sleep", Args: []string{"3600"}, StaleCheck: &on})
		check(err)
		if i < *running {
			r, err := e.StartAgent(ctx, p.ID, id)
			check(err)
			pids = append(pids, r.PID)
		}
	}
	defer func() {
		for _, pid := range pids {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}()
	e.Close()
	// Records of agents that were running when the engine went away and
	// died without a trace (a pid that no longer exists).
	gone := exec.Command("true")
	check(gone.Run())
	boot := e.BootID()
	for i := *running; i < *running+*dead && i < *records; i++ {
		b, err := os.ReadFile(filepath.Join(e.Store().AgentDir(p.ID, "agent-"+strconv.Itoa(i)), "record.json"))
		check(err)
		r, err := store.ParseRecord(b)
		check(err)
		now := time.Now().UTC()
		r.Status, r.PID, r.ProcessStartTime, r.BootID, r.StartedAt = lifecycle.Running, gone.Process.Pid, 1, boot, &now
		check(e.Store().SaveRecord(r))
	}

	e2, err := supervisor.New(cfg)
	check(err)
	defer e2.Close()
	t0 := time.Now()
	sum, err := e2.SelectProject(ctx, p.ID)
	check(err)
	fmt.Printf("load-time sync + recovery of %d records: %s (%v)\n", sum.Total, time.Since(t0).Round(100*time.Microsecond), sum.Counts)

	const passes = 20
	pass := func(name string, f func(string) error) time.Duration {
		u0, t0 := cpuTime(), time.Now()
		for range passes {
			check(f(p.ID))
		}
		cpu := (cpuTime() - u0) / passes
		fmt.Printf("%s over %d agents (%d running): %s wall, %s CPU per pass\n", name, sum.Total, *running,
			(time.Since(t0) / passes).Round(10*time.Microsecond), cpu.Round(10*time.Microsecond))
		return cpu
	}
	wd := pass("watchdog pass", e2.WatchdogNow)
	st := pass("stale check", e2.StaleCheckNow)
	fmt.Printf("  at the default intervals (30 s, 60 s): %.3f%% of one CPU\n", 100*(wd.Seconds()/30+st.Seconds()/60))
	_, err = e2.StopAll(ctx, p.ID)
	check(err)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
