package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"shepherd/backend/eventbus"
	"shepherd/backend/logfollow"
	"shepherd/backend/secrets"
	"shepherd/backend/store"
)

// DefaultHeartbeat is how often an idle event stream sends a comment line,
// so that clients and proxies know it is alive.
const DefaultHeartbeat = 15 * time.Second

// streamWriteTimeout bounds one write to a stream client: one that does not
// read is dropped, not waited for.
const streamWriteTimeout = 10 * time.Second

// stream is GET /v1/events: the engine's pushed events as Server-Sent
// Events, with the same names and payloads the window receives. ?project=
// keeps one project's; ?follow=<project>/<agent> adds that agent's new log
// lines (agent:log); Last-Event-ID (or ?lastEventId=) replays the state
// events missed since that id. A client that falls behind is dropped with a
// final "dropped" event saying why.
func (h *handler) stream(w http.ResponseWriter, r *http.Request) {
	if h.opts.Bus == nil {
		writeError(w, http.StatusNotImplemented, "NotImplemented", "this engine has no event stream")
		return
	}
	q := r.URL.Query()
	var after uint64
	if s := firstNonEmpty(r.Header.Get("Last-Event-ID"), q.Get("lastEventId")); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "ValidationError", fmt.Sprintf("Last-Event-ID %q must be an event id (an integer ≥ 0)", s))
			return
		}
		after = v
	}
	project := q.Get("project")
	if project != "" {
		if _, err := h.eng.ListAgents(project); err != nil {
			writeEngineError(w, err)
			return
		}
	}
	var logs chan logfollow.Batch
	if f := q.Get("follow"); f != "" {
		p, a, ok := strings.Cut(f, "/")
		if !ok || p == "" || a == "" {
			writeError(w, http.StatusBadRequest, "ValidationError", fmt.Sprintf("follow=%q must be <project>/<agent>", f))
			return
		}
		rec, err := h.eng.GetAgent(p, a)
		if err != nil {
			writeEngineError(w, err)
			return
		}
		logs = make(chan logfollow.Batch, 16)
		hub := logfollow.NewHub(func(b logfollow.Batch) {
			select {
			case logs <- b:
			case <-r.Context().Done():
			}
		}, 0)
		defer hub.Close()
		hub.Follow(p, a, rec.LogPath, fileSize(rec.LogPath))
	}
	var filter func(eventbus.Event) bool
	if project != "" {
		filter = func(ev eventbus.Event) bool { return ev.ProjectID == project || ev.ProjectID == "" }
	}
	revealed, _ := strconv.ParseBool(q.Get("reveal"))
	// ?stats=<project>: this client looks at that project's CPU and memory
	// (agent:stats events) for as long as it is connected.
	statsProject := q.Get("stats")
	if statsProject != "" {
		if err := h.eng.Look(statsProject, 0); err != nil {
			writeEngineError(w, err)
			return
		}
	}
	sub := h.opts.Bus.Subscribe(after, filter)
	defer sub.Close()

	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(id uint64, name string, data []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		var b strings.Builder
		if id > 0 {
			fmt.Fprintf(&b, "id: %d\n", id)
		}
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data)
		if _, err := w.Write([]byte(b.String())); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	hello, _ := json.Marshal(map[string]any{"lastEventId": h.opts.Bus.Last()})
	if !send(0, "hello", hello) {
		return
	}
	beat := h.opts.Heartbeat
	if beat <= 0 {
		beat = DefaultHeartbeat
	}
	tick := time.NewTicker(beat)
	defer tick.Stop()
	var lease <-chan time.Time
	if statsProject != "" {
		lt := time.NewTicker(10 * time.Second)
		defer lt.Stop()
		lease = lt.C
	}
	for {
		select {
		case <-lease:
			_ = h.eng.Look(statsProject, 0)
		case <-r.Context().Done():
			return
		case ev := <-sub.C():
			if !send(ev.ID, ev.Name, maskEvent(ev, revealed)) {
				return
			}
		case b := <-logs:
			data, _ := json.Marshal(b)
			if !send(0, "agent:log", data) {
				return
			}
		case <-sub.Done():
			// Whatever is still queued was delivered in order; then why.
			for {
				select {
				case ev := <-sub.C():
					if !send(ev.ID, ev.Name, maskEvent(ev, revealed)) {
						return
					}
					continue
				default:
				}
				break
			}
			data, _ := json.Marshal(map[string]string{"reason": sub.Reason()})
			send(0, "dropped", data)
			return
		case <-tick.C:
			_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
			if _, err := w.Write([]byte(": ping\n\n")); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

// maskEvent masks the secret environment values of an agent:state payload
// (unless revealed).
func maskEvent(ev eventbus.Event, revealed bool) []byte {
	if revealed || ev.Name != "agent:state" || !bytes.Contains(ev.Data, []byte(`"env"`)) {
		return ev.Data
	}
	var rec store.Record
	if json.Unmarshal(ev.Data, &rec) != nil {
		return ev.Data
	}
	b, err := json.Marshal(secrets.MaskRecord(&rec))
	if err != nil {
		return ev.Data
	}
	return b
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
