package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"shepherd/backend/jsonone"
	"shepherd/backend/sandbox"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/renameio/v2"

	"shepherd/backend/lifecycle"
	"shepherd/backend/logrotate"
	"shepherd/backend/logtail"
)

const (
	dirMode  = 0o700
	fileMode = 0o600

	recordFile = "record.json"
	logFile    = "agent.log"
	exitFile   = "exit.json"
	runFile    = "run.json"
	eventsFile = "events.jsonl"
)

// Store is the on-disk state under one data folder ($XDG_DATA_HOME/shepherd).
type Store struct {
	root string
	mu   sync.Mutex // serialises projects.json and events.jsonl appends

	fault atomic.Pointer[func(path string) error]
}

// InjectFault makes every write of a record, an event or a file through
// the store fail with f's error first (nil: none) — a full disk, for tests
// of what the engine does then. f(nil) removes it.
func (s *Store) InjectFault(f func(path string) error) {
	if f == nil {
		s.fault.Store(nil)
		return
	}
	s.fault.Store(&f)
}

func (s *Store) faulty(path string) error {
	if f := s.fault.Load(); f != nil {
		return (*f)(path)
	}
	return nil
}

// WriteFile is the package's WriteFile, for the engine's own files under
// the data folder.
func (s *Store) WriteFile(path string, b []byte, mode os.FileMode) error {
	if err := s.faulty(path); err != nil {
		return err
	}
	return WriteFile(path, b, mode)
}

// Open returns a store rooted at root, creating it (0700) if needed.
func Open(root string) (*Store, error) {
	if err := os.MkdirAll(root, dirMode); err != nil {
		return nil, fmt.Errorf("create data folder %s: %w", root, err)
	}
	return &Store{root: root}, nil
}

// Root is the data folder.
func (s *Store) Root() string { return s.root }

// ProjectDir is the folder of one project.
func (s *Store) ProjectDir(projectID string) string {
	return filepath.Join(s.root, "projects", projectID)
}

// AgentDir is the folder of one agent.
func (s *Store) AgentDir(projectID, agentID string) string {
	return filepath.Join(s.ProjectDir(projectID), "agents", agentID)
}

// LogPath is the absolute path of an agent's log.
func (s *Store) LogPath(projectID, agentID string) string {
	return filepath.Join(s.AgentDir(projectID, agentID), logFile)
}

// ExitPath is where the shim writes the exit status of the agent's run.
func (s *Store) ExitPath(projectID, agentID string) string {
	return filepath.Join(s.AgentDir(projectID, agentID), exitFile)
}

// RunPath is where the shim writes the pid of the run it started.
func (s *Store) RunPath(projectID, agentID string) string {
	return filepath.Join(s.AgentDir(projectID, agentID), runFile)
}

// SandboxPath is the agent's sandbox.json: its grants, which the shim
// enforces (seed 001).
func (s *Store) SandboxPath(projectID, agentID string) string {
	return filepath.Join(s.AgentDir(projectID, agentID), sandbox.FileName)
}

// EventsPath is a project's events.jsonl.
func (s *Store) EventsPath(projectID string) string {
	return filepath.Join(s.ProjectDir(projectID), eventsFile)
}

var safeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidID reports whether id is safe as a file name: letters, digits, '.',
// '_' and '-', starting with a letter or digit, at most 128 characters.
func ValidID(id string) error {
	if !safeID.MatchString(id) {
		return fmt.Errorf("id %q is not a safe file name (use letters, digits, '.', '_' or '-', starting with a letter or digit, at most 128 characters)", id)
	}
	return nil
}

// ProjectID is the stable id of a project folder: a readable slug of its
// name and a hash of its cleaned absolute path.
func ProjectID(absPath string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(absPath)))
	slug := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return '-'
	}, filepath.Base(absPath))
	slug = strings.Trim(slug, "-")
	if len(slug) > 32 {
		slug = slug[:32]
	}
	if slug == "" {
		slug = "project"
	}
	return slug + "-" + hex.EncodeToString(sum[:])[:10]
}

// WriteJSON writes v as indented JSON to path atomically: a temp file in the
// same folder, fsync, rename. The file is 0600.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFile(path, append(b, '\n'), fileMode)
}

// WriteFile writes b to path atomically (temp file, fsync, rename) with
// mode, creating its folder (0700) if needed. The temp file is made in the
// file's own folder: without that, renameio tries out the system's temp
// folder on every write (two more files made, renamed and removed), which
// was a quarter of a start's engine time.
func WriteFile(path string, b []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return err
	}
	return renameio.WriteFile(path, b, mode, renameio.WithTempDir(dir))
}

// LoadProjects reads projects.json; a missing file is an empty list.
func (s *Store) LoadProjects() ([]Project, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loadProjects()
}

func (s *Store) loadProjects() ([]Project, error) {
	b, err := os.ReadFile(filepath.Join(s.root, "projects.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ps []Project
	if err := json.Unmarshal(b, &ps); err != nil {
		return nil, fmt.Errorf("projects.json is not valid: %w", err)
	}
	return ps, nil
}

// SaveProjects writes projects.json atomically.
func (s *Store) SaveProjects(ps []Project) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ps == nil {
		ps = []Project{}
	}
	return WriteJSON(filepath.Join(s.root, "projects.json"), ps)
}

// SaveRecord writes an agent's record.json atomically. What is only ever
// computed (the activity) is not written.
func (s *Store) SaveRecord(r *Record) error {
	if r.Activity != nil || r.QueuePosition != 0 || r.Stats != nil || r.Attention != "" || r.TreeTotals != nil {
		c := *r
		c.Activity, c.QueuePosition, c.Stats, c.Attention, c.TreeTotals = nil, 0, nil, "", nil
		r = &c
	}
	path := filepath.Join(s.AgentDir(r.ProjectID, r.ID), recordFile)
	if err := s.faulty(path); err != nil {
		return err
	}
	return WriteJSON(path, r)
}

// Corrupt describes a record that could not be read and was moved aside.
type Corrupt struct {
	AgentID string
	MovedTo string
	Err     error
}

// LoadRecords reads every agent record of a project. A record that cannot be
// read or parsed, or that names another agent, is renamed to
// record.json.corrupt-<time> and reported; the others load normally.
func (s *Store) LoadRecords(projectID string, now time.Time) ([]*Record, []Corrupt, error) {
	dir := filepath.Join(s.ProjectDir(projectID), "agents")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read agents of project %s: %w", projectID, err)
	}
	var recs []*Record
	var bad []Corrupt
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name(), recordFile)
		r, err := readRecord(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // an agent folder with only a log or a quarantined record
		}
		if err == nil {
			switch {
			case r.ID != e.Name():
				err = fmt.Errorf("record names agent %q but lives in folder %q", r.ID, e.Name())
			case r.ProjectID != projectID:
				err = fmt.Errorf("record names project %q, not %q", r.ProjectID, projectID)
			}
		}
		if err != nil {
			moved := fmt.Sprintf("%s.corrupt-%s", path, now.UTC().Format("20060102T150405.000000000Z"))
			if rerr := os.Rename(path, moved); rerr != nil {
				moved = ""
				err = fmt.Errorf("%w (and could not move it aside: %v)", err, rerr)
			}
			bad = append(bad, Corrupt{AgentID: e.Name(), MovedTo: moved, Err: err})
			continue
		}
		recs = append(recs, r)
	}
	return recs, bad, nil
}

// ParseRecord decodes a record and checks the fields every record must have.
func ParseRecord(b []byte) (*Record, error) {
	var r Record
	switch err := jsonone.Decode(b, &r, false); {
	case errors.Is(err, jsonone.ErrTrailing):
		return nil, errors.New("not valid record JSON: data after the record")
	case err != nil:
		return nil, fmt.Errorf("not valid record JSON: %w", err)
	}
	if err := ValidID(r.ID); err != nil {
		return nil, err
	}
	if r.Command == "" {
		return nil, errors.New("record has no command")
	}
	if r.Status == "" {
		return nil, errors.New("record has no status")
	}
	if !lifecycle.Valid(r.Status) {
		return nil, fmt.Errorf("record has an unknown status %q", r.Status)
	}
	if !lifecycle.ValidReason(r.ExitReason) {
		return nil, fmt.Errorf("record has an unknown exit reason %q", r.ExitReason)
	}
	if r.PreviousStatus != "" && !lifecycle.Valid(r.PreviousStatus) {
		return nil, fmt.Errorf("record has an unknown previous status %q", r.PreviousStatus)
	}
	if r.QueuedFrom != "" && !lifecycle.Valid(r.QueuedFrom) {
		return nil, fmt.Errorf("record has an unknown queued-from status %q", r.QueuedFrom)
	}
	if r.Desired != "" && r.Desired != lifecycle.DesiredRunning && r.Desired != lifecycle.DesiredStopped {
		return nil, fmt.Errorf("record has an unknown desired state %q", r.Desired)
	}
	if r.PID < 0 || r.ShimPID < 0 {
		return nil, fmt.Errorf("record has a negative pid (%d, shim %d)", r.PID, r.ShimPID)
	}
	return &r, nil
}

func readRecord(path string) (*Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseRecord(b)
}

// ErrLeftovers: an agent was removed (its record is gone) but some of its
// files could not be.
var ErrLeftovers = errors.New("agent removed, but some of its files remain")

// RemoveAgent deletes an agent's folder; with keepLog the log stays (with
// its rotated files). The record goes first: once it is gone so is the
// agent, whatever else happens (a load finds no agent in a folder without
// one). The rest is retried a few times, as a writer may still be finishing
// in the folder (the shim writes exit.json just after telling the engine
// of the end); what still remains is ErrLeftovers.
func (s *Store) RemoveAgent(projectID, agentID string, keepLog bool) error {
	dir := s.AgentDir(projectID, agentID)
	if err := os.Remove(filepath.Join(dir, recordFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var err error
	for try := 0; try < 5; try++ {
		if err = removeAgentFiles(dir, keepLog); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%w: %v", ErrLeftovers, err)
}

func removeAgentFiles(dir string, keepLog bool) error {
	if !keepLog {
		return os.RemoveAll(dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range ents {
		if logrotate.IsPart(logFile, e.Name()) { // the log and its rotated files
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// events.jsonl is rotated like an agent's log (package logrotate): at
// EventsMaxBytes it becomes events.jsonl.1, and EventsKeep older files are
// kept, so a project's history takes at most (EventsKeep+1) ×
// EventsMaxBytes. Readers read across them.
var (
	EventsMaxBytes int64 = 8 << 20
	EventsKeep           = 3
)

// AppendEvent appends one line to the project's events.jsonl.
func (s *Store) AppendEvent(projectID string, ev Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.ProjectDir(projectID), dirMode); err != nil {
		return err
	}
	if err := s.faulty(s.EventsPath(projectID)); err != nil {
		return err
	}
	return logrotate.Append(s.EventsPath(projectID), b, EventsMaxBytes, EventsKeep)
}

// maxEventsRead bounds how much of events.jsonl a read of all its events
// (no limit) looks at: the end, where the recent events are.
const maxEventsRead = 1 << 20

// ReadEvents returns the last limit events of a project's events.jsonl
// that concern agentID ("" for all), oldest first, read back across its
// rotated files until it has them (limit <= 0: the events of its last
// MiB). Lines that do not parse (a torn last line, a hand edit) are
// skipped. A project without events has none.
func (s *Store) ReadEvents(projectID, agentID string, limit int) ([]Event, error) {
	out := []Event{}
	// One agent's lines are found without decoding the others'.
	var mark []byte
	if agentID != "" {
		mark, _ = json.Marshal(map[string]string{"agentId": agentID})
		mark = mark[1 : len(mark)-1]
	}
	err := logtail.EachLine(s.EventsPath(projectID), s.eventsSpan(limit <= 0), func(line []byte) bool {
		if mark != nil && !bytes.Contains(line, mark) {
			return true
		}
		var ev Event
		if json.Unmarshal(line, &ev) != nil || agentID != "" && ev.AgentID != agentID {
			return true
		}
		out = append(out, ev)
		return limit <= 0 || len(out) < limit
	})
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	// Appends are in time order; keep it so even if a clock stepped back.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

// eventsSpan is how much of a project's events a read looks at, from the
// end: the last MiB (recent), or every file kept.
func (s *Store) eventsSpan(recent bool) int64 {
	if recent {
		return maxEventsRead
	}
	return (EventsMaxBytes + 1) * int64(EventsKeep+1)
}

// EachEvent calls f with the project's events, the newest first, across
// events.jsonl's rotated files, until f returns false; recent bounds the
// read to the last MiB.
func (s *Store) EachEvent(projectID string, recent bool, f func(ev Event) bool) error {
	return logtail.EachLine(s.EventsPath(projectID), s.eventsSpan(recent), func(line []byte) bool {
		var ev Event
		if json.Unmarshal(line, &ev) != nil {
			return true
		}
		return f(ev)
	})
}
