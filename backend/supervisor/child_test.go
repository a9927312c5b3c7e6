package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/rs/zerolog"
)

// runChildEngine is the test binary run as an engine in a process of its
// own, so a test can SIGKILL it the way a crash would end the app. It adds
// the project, creates and starts the agents it is given, prints "ready" and
// waits to be killed.
func runChildEngine() int {
	var agents []AgentSpec
	if err := json.Unmarshal([]byte(os.Getenv("SHEPHERD_TEST_AGENTS")), &agents); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	e, err := New(Config{DataDir: os.Getenv("SHEPHERD_TEST_ENGINE"), ShimPath: os.Getenv("SHEPHERD_TEST_SHIM"), Logger: zerolog.Nop()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p, _, err := e.AddProject(os.Getenv("SHEPHERD_TEST_PROJECT"), "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, a := range agents {
		if _, err := e.CreateAgent(p.ID, a); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if _, err := e.StartAgent(context.Background(), p.ID, a.ID); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Println("ready")
	select {}
}
