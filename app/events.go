package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"

	"shepherd/backend/store"
)

// maxEventsRead bounds how much of events.jsonl one read looks at: the end
// of the file, where the recent events are.
const maxEventsRead = 1 << 20

// readEvents returns the last limit events of an events.jsonl that concern
// agentID ("" for all), oldest first. Lines that do not parse are skipped.
func readEvents(path, agentID string, limit int) ([]store.Event, error) {
	out := []store.Event{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	start := max(size-maxEventsRead, 0)
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		return nil, err
	}
	if start > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(buf))
	sc.Buffer(make([]byte, 64<<10), maxEventsRead)
	for sc.Scan() {
		var ev store.Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if agentID != "" && ev.AgentID != agentID {
			continue
		}
		out = append(out, ev)
	}
	sortEvents(out)
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}
