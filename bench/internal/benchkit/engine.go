package benchkit

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"shepherd/backend/api"
	"shepherd/backend/cli"
	"shepherd/backend/paths"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// Isolate points the XDG folders (data, state, runtime, config) into root,
// so that an engine the bench starts has its own.
func Isolate(root string) error {
	for _, v := range []string{"XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"} {
		d := filepath.Join(root, strings.ToLower(v))
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		os.Setenv(v, d)
	}
	return nil
}

// Build builds the headless engine and the shim, without cgo as the
// scripts do, into dir; either is skipped when its path is given. It
// returns their paths.
func Build(dir, engine, shim string) (string, string, error) {
	var builds [][2]string
	if engine == "" {
		engine = filepath.Join(dir, "shepherd-engine")
		builds = append(builds, [2]string{engine, "./backend/cli/cmd/shepherd-engine"})
	}
	if shim == "" {
		shim = filepath.Join(dir, "shepherd-shim")
		builds = append(builds, [2]string{shim, "./backend/shim/cmd/shepherd-shim"})
	}
	for _, b := range builds {
		cmd := exec.Command("go", "build", "-o", b[0], b[1])
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("build %s: %v\n%s", b[1], err, out)
		}
	}
	return engine, shim, nil
}

// Engine is a `shepherd-engine serve` the bench started, a process of its
// own, in the XDG folders of this process (Isolate).
type Engine struct {
	Cmd  *exec.Cmd
	Pid  int
	Info api.EngineInfo
	done chan struct{}
}

// StartEngine starts bin serve with shim as its shim and waits until its
// API answers; its console goes to console.
func StartEngine(bin, shim string, console io.Writer) (*Engine, error) {
	os.Setenv(cli.ShimEnv, shim)
	cmd := exec.Command(bin, "serve")
	cmd.Stdout, cmd.Stderr = console, console
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	e := &Engine{Cmd: cmd, Pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(e.done) }()
	p := paths.Default()
	var err error
	for deadline := time.Now().Add(15 * time.Second); ; {
		if e.Info, err = api.ReadEngineInfo(p.EngineFile()); err == nil {
			if _, err = api.Call(context.Background(), api.NewClient(e.Info), api.GetEngine, api.NoInput{}); err == nil {
				return e, nil
			}
		}
		select {
		case <-e.done:
			return nil, fmt.Errorf("the engine ended before it answered: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-e.done
			return nil, fmt.Errorf("the engine did not answer: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Remote is a client of the engine's API with the few calls the benches make.
type Remote struct{ c *api.Client }

// Remote returns a client of the engine's API.
func (e *Engine) Remote() *Remote { return &Remote{api.NewClient(e.Info)} }

// Client is the API client the calls go through.
func (r *Remote) Client() *api.Client { return r.c }

// AddProject adds the folder dir as a project named name.
func (r *Remote) AddProject(dir, name string) (store.Project, bool, error) {
	out, err := api.Call(context.Background(), r.c, api.AddProject, api.AddProjectIn{Body: api.ProjectInput{Path: dir, Name: name}})
	if err != nil {
		return store.Project{}, false, err
	}
	return out.Body, out.Status == 201, nil
}

// CreateAgent creates an agent in the project.
func (r *Remote) CreateAgent(project string, spec supervisor.AgentSpec) (*store.Record, error) {
	out, err := api.Call(context.Background(), r.c, api.CreateAgent, api.CreateAgentIn{Project: project, Body: spec})
	if err != nil {
		return nil, err
	}
	return out.Body, nil
}

// StartAgent starts an agent.
func (r *Remote) StartAgent(ctx context.Context, project, agent string) (*store.Record, error) {
	out, err := api.Call(ctx, r.c, api.StartAgent, api.AgentIn{Project: project, Agent: agent})
	if err != nil {
		return nil, err
	}
	return out.Body, nil
}

// Processes is every agent of every loaded project, without sampling their
// CPU and memory.
func (r *Remote) Processes() ([]*store.Record, error) {
	out, err := api.Call(context.Background(), r.c, api.ListProcesses, api.StatsIn{})
	if err != nil {
		return nil, err
	}
	return out.Body, nil
}

// StopAll stops every agent of the project.
func (r *Remote) StopAll(ctx context.Context, project string) ([]supervisor.StopResult, error) {
	out, err := api.Call(ctx, r.c, api.StopAll, api.ProjectIn{Project: project})
	if err != nil {
		return nil, err
	}
	return out.Body, nil
}

// Quit asks the engine to quit and waits for it (SIGKILL after 30 s).
func (e *Engine) Quit() {
	_ = CLI(nil, "quit")
	select {
	case <-e.done:
	case <-time.After(30 * time.Second):
		_ = e.Cmd.Process.Kill()
		<-e.done
	}
}

// Kill ends the engine at once (a bench that failed).
func (e *Engine) Kill() {
	_ = e.Cmd.Process.Kill()
	<-e.done
}

// CPUNs is the CPU time of every thread of pid so far, in nanoseconds
// (/proc/PID/task/*/schedstat: exact, where /proc/PID/stat counts ticks).
func CPUNs(pid int) int64 {
	var total int64
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			var n int64
			fmt.Sscan(f[0], &n)
			total += n
		}
	}
	return total
}

// Threads counts pid's threads.
func Threads(pid int) int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	return len(tasks)
}
