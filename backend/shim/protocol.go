package shim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"shepherd/backend/jsonone"
)

// The shim's protocol with the engine: the descriptors it is given, the lines
// it writes on the status pipe, and the files it leaves next to the record.
// These are the only definitions of those shapes; the engine's process handle
// (package proc) reads them with the functions below.

// StatusFD is the descriptor of the status pipe the engine gives the shim.
// The shim writes two JSON lines on it: a Hello once the agent is started (or
// could not be), and the agent's ExitStatus when it ends — the same status it
// writes to exit.json, sent first so that an engine that is listening learns
// of the exit without waiting for the disk. If the engine is gone the writes
// fail quietly: the pipe is not stdout, so there is no SIGPIPE.
const StatusFD = 3

// GoFD is the descriptor of the go-ahead pipe. A shim started with it waits
// for one byte before it starts the agent, and exits without starting
// anything when the pipe closes first. The engine records the shim's pid
// before it sends that byte, so an agent can never exist that no record
// leads to (an engine that dies in between closes the pipe).
const GoFD = 4

// Hello is the first line on the status pipe: the agent's pid, or why it
// could not be started.
type Hello struct {
	PID   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
}

// ExitStatus is how the agent ended: its real exit code or the signal that
// killed it, and when. The shim sends it on the status pipe and writes it to
// exit.json, readable even if the engine was down then.
type ExitStatus struct {
	PID      int       `json:"pid"`
	ExitCode *int      `json:"exitCode,omitempty"`
	Signal   string    `json:"signal,omitempty"`
	ExitedAt time.Time `json:"exitedAt"`
}

// RunInfo is what the shim writes to run.json once it has started the
// agent, so that an engine that died before it learnt the pid can find it.
type RunInfo struct {
	PID       int       `json:"pid"`
	ShimPID   int       `json:"shimPid"`
	StartedAt time.Time `json:"startedAt"`
}

// decodeOne decodes exactly one JSON value of b into v.
func decodeOne(b []byte, v any, what string) error {
	err := jsonone.Decode(b, v, false)
	switch {
	case errors.Is(err, jsonone.ErrTrailing):
		return fmt.Errorf("%s has data after its JSON value", what)
	case err != nil:
		return fmt.Errorf("%s is not valid JSON: %w", what, err)
	}
	return nil
}

// ParseHello reads a Hello line: a pid > 0 or an error, not both.
func ParseHello(b []byte) (Hello, error) {
	var h Hello
	if err := decodeOne(b, &h, "shim hello"); err != nil {
		return Hello{}, err
	}
	switch {
	case h.Error != "" && h.PID != 0:
		return Hello{}, errors.New("shim hello has both a pid and an error")
	case h.Error == "" && h.PID <= 0:
		return Hello{}, fmt.Errorf("shim hello has no error and no valid pid (%d)", h.PID)
	}
	return h, nil
}

// ParseExit reads an exit status (a status line or exit.json): a pid > 0 and
// at most one of an exit code or a signal. Neither means the shim lost the
// agent (it was not its child any more): the end is known, its cause not.
func ParseExit(b []byte) (*ExitStatus, error) {
	var st ExitStatus
	if err := decodeOne(b, &st, "exit status"); err != nil {
		return nil, err
	}
	switch {
	case st.PID <= 0:
		return nil, fmt.Errorf("exit status has no valid pid (%d)", st.PID)
	case st.ExitCode != nil && st.Signal != "":
		return nil, errors.New("exit status has both an exit code and a signal")
	case st.ExitCode != nil && (*st.ExitCode < 0 || *st.ExitCode > 255):
		return nil, fmt.Errorf("exit status has an impossible exit code %d", *st.ExitCode)
	}
	return &st, nil
}

// ParseRun reads run.json: the agent's and the shim's pids.
func ParseRun(b []byte) (*RunInfo, error) {
	var ri RunInfo
	if err := decodeOne(b, &ri, "run info"); err != nil {
		return nil, err
	}
	if ri.PID <= 0 || ri.ShimPID <= 0 {
		return nil, fmt.Errorf("run info has no valid pids (agent %d, shim %d)", ri.PID, ri.ShimPID)
	}
	return &ri, nil
}

// ReadExit reads exit.json; (nil, nil) when there is none.
func ReadExit(path string) (*ExitStatus, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st, err := ParseExit(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// ReadRun reads run.json; (nil, nil) when there is none.
func ReadRun(path string) (*RunInfo, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ri, err := ParseRun(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ri, nil
}

// The shim writes its lines and files with the appenders below rather than
// encoding/json: the same bytes json.Marshal writes (FuzzParse* checks it),
// without the reflection and the allocations, in a process paid for per
// agent.

func (h Hello) append(b []byte) []byte {
	b = append(b, '{')
	if h.PID != 0 {
		b = strconv.AppendInt(append(b, `"pid":`...), int64(h.PID), 10)
	}
	if h.Error != "" {
		if h.PID != 0 {
			b = append(b, ',')
		}
		b = appendString(append(b, `"error":`...), h.Error)
	}
	return append(b, '}')
}

func (st ExitStatus) append(b []byte) []byte {
	b = strconv.AppendInt(append(b, `{"pid":`...), int64(st.PID), 10)
	if st.ExitCode != nil {
		b = strconv.AppendInt(append(b, `,"exitCode":`...), int64(*st.ExitCode), 10)
	}
	if st.Signal != "" {
		b = appendString(append(b, `,"signal":`...), st.Signal)
	}
	return append(appendTime(append(b, `,"exitedAt":`...), st.ExitedAt), '}')
}

func (ri RunInfo) append(b []byte) []byte {
	b = strconv.AppendInt(append(b, `{"pid":`...), int64(ri.PID), 10)
	b = strconv.AppendInt(append(b, `,"shimPid":`...), int64(ri.ShimPID), 10)
	return append(appendTime(append(b, `,"startedAt":`...), ri.StartedAt), '}')
}

// appendTime appends t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds; the shim's times are the clock's, within its years).
func appendTime(b []byte, t time.Time) []byte {
	return append(t.AppendFormat(append(b, '"'), time.RFC3339Nano), '"')
}

// appendString appends s as a JSON string, escaped as encoding/json does by
// default: quotes, backslashes and control characters; <, > and & (as
// \u003c…); invalid UTF-8 as U+FFFD; U+2028 and U+2029.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}

// RuntimeEnv adds to env, the environment a shim is started with, what its
// own Go runtime is to run with: one P (GOMAXPROCS=1), which keeps the
// runtime's per-P caches and the threads it starts to one set from the
// process's first instruction (about 0.1 MiB less per agent than setting it
// from main). A variable env sets already is left as it is. own names the
// variables added: the shim removes them from the agent's environment
// (Options.OwnEnv), which stays env.
func RuntimeEnv(env []string) (shimEnv, own []string) {
	for _, kv := range env {
		if strings.HasPrefix(kv, "GOMAXPROCS=") {
			return env, nil
		}
	}
	return append(env[:len(env):len(env)], "GOMAXPROCS=1"), []string{"GOMAXPROCS"}
}

// agentEnv is the shim's environment without the variables that are its
// own (RuntimeEnv): the agent's.
func agentEnv(env, own []string) []string {
	if len(own) == 0 {
		return env
	}
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		for _, name := range own {
			if len(kv) > len(name) && kv[len(name)] == '=' && kv[:len(name)] == name {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
