// Package logfollow reads the tail of an agent's log and follows its growth,
// handing new complete lines over in batches on a short ticker, so that a
// chatty agent costs one message per tick rather than one per line. It knows
// nothing of Wails: the app passes a function that emits a batch.
package logfollow

import (
	"bytes"
	"sync"
	"time"

	"shepherd/backend/logtail"
)

// Batch is the new lines of one followed log.
type Batch struct {
	ProjectID string   `json:"projectId"`
	AgentID   string   `json:"agentId"`
	Lines     []string `json:"lines"`
	// Offset is the byte offset just past the last line of this batch.
	Offset int64 `json:"offset"`
	// Reset is true when the log shrank (deleted or truncated): the lines
	// start again from its beginning.
	Reset bool `json:"reset,omitempty"`
}

// Chunk is the tail of a log: its last lines and the offset to follow from.
type Chunk struct {
	Lines  []string `json:"lines"`
	Offset int64    `json:"offset"`
}

const (
	// DefaultInterval is the batching tick.
	DefaultInterval = 100 * time.Millisecond
	// maxRead bounds one read, so a burst is spread over a few ticks
	// instead of one huge message.
	maxRead = 1 << 20
	// maxLine forces out a line that never ends (no newline for this long).
	maxLine = 64 << 10
	// maxTailBytes bounds what Tail reads, whatever n asks.
	maxTailBytes = 8 << 20
)

// Tail returns the last n complete lines of the log at path and the offset
// just past them. A partial last line (still being written) is left out, so
// that following from Offset hands it over once it is complete. A missing
// log is empty.
func Tail(path string, n int) (Chunk, error) {
	lines, off, err := logtail.Complete(path, n, maxTailBytes)
	if err != nil {
		return Chunk{}, err
	}
	return Chunk{Lines: lines, Offset: off}, nil
}

// Hub follows logs and emits their new lines.
type Hub struct {
	emit     func(Batch)
	interval time.Duration

	mu      sync.Mutex
	follows map[key]*follow
	wg      sync.WaitGroup
}

type key struct{ project, agent string }

type follow struct {
	stop chan struct{}
}

// NewHub returns a Hub that emits each batch with emit, checking followed
// logs every interval (0: DefaultInterval).
func NewHub(emit func(Batch), interval time.Duration) *Hub {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &Hub{emit: emit, interval: interval, follows: map[key]*follow{}}
}

// Follow starts handing over lines of the log at path written past offset.
// Following an agent again restarts it from the new offset.
func (h *Hub) Follow(projectID, agentID, path string, offset int64) {
	k := key{projectID, agentID}
	f := &follow{stop: make(chan struct{})}
	h.mu.Lock()
	if old, ok := h.follows[k]; ok {
		close(old.stop)
	}
	h.follows[k] = f
	h.wg.Add(1)
	h.mu.Unlock()
	go h.run(k, f, path, offset)
}

// Unfollow stops following an agent's log; unknown agents are ignored.
func (h *Hub) Unfollow(projectID, agentID string) {
	k := key{projectID, agentID}
	h.mu.Lock()
	defer h.mu.Unlock()
	if f, ok := h.follows[k]; ok {
		close(f.stop)
		delete(h.follows, k)
	}
}

// Following reports how many logs are followed.
func (h *Hub) Following() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.follows)
}

// Close stops every follow and waits for them.
func (h *Hub) Close() {
	h.mu.Lock()
	for k, f := range h.follows {
		close(f.stop)
		delete(h.follows, k)
	}
	h.mu.Unlock()
	h.wg.Wait()
}

func (h *Hub) run(k key, f *follow, path string, offset int64) {
	defer h.wg.Done()
	t := time.NewTicker(h.interval)
	defer t.Stop()
	r := reader{path: path, offset: offset}
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		lines, reset := r.read()
		if len(lines) == 0 && !reset {
			continue
		}
		select {
		case <-f.stop:
			return
		default:
		}
		h.emit(Batch{ProjectID: k.project, AgentID: k.agent, Lines: lines, Offset: r.offset, Reset: reset})
	}
}

// reader reads the complete lines appended to a file since offset.
type reader struct {
	path   string
	offset int64
}

func (r *reader) read() (lines []string, reset bool) {
	c, err := logtail.Since(r.path, r.offset, maxRead, false)
	if err != nil {
		return nil, false
	}
	if c.Reset {
		r.offset = 0
	}
	buf := c.Data
	if c.Skipped && c.Start > 0 {
		// What was at the offset was rotated away: go on at a line.
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			c.Start += int64(i + 1)
			buf = buf[i+1:]
		}
	}
	end := bytes.LastIndexByte(buf, '\n') + 1
	if end == 0 {
		if len(buf) < maxLine {
			return nil, c.Reset // wait for the end of the line
		}
		// A line that never ends is handed over in pieces.
		r.offset = c.Next
		return []string{string(buf)}, c.Reset
	}
	r.offset = c.Start + int64(end)
	return logtail.SplitLines(buf[:end]), c.Reset
}
