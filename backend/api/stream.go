package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

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

// StreamIn is the input of the event stream.
type StreamIn struct {
	Project     string `query:"project" doc:"only this project's events (and the engine's own)"`
	Follow      string `query:"follow" doc:"<project>/<agent>: that agent's new log lines too (agent:log)"`
	Stats       string `query:"stats" doc:"<project>: sample that project's CPU and memory while connected (agent:stats)"`
	LastEventID string `header:"Last-Event-ID" doc:"replay the state events missed since this id"`
	LastIDQuery string `query:"lastEventId" doc:"the same as Last-Event-ID, for clients that cannot set it"`
}

// Stream is the event stream's answer, written as the events come.
type Stream struct {
	Body func(huma.Context)
}

// StreamEvents is GET /v1/events: the engine's pushed events as Server-Sent
// Events, with the same names and payloads the window receives (their
// types: the EventPayloads schema). ?project= keeps one project's;
// ?follow=<project>/<agent> adds that agent's new log lines (agent:log);
// Last-Event-ID (or ?lastEventId=) replays the state events missed since
// that id. An idle stream carries a comment line as a heartbeat. A client
// that falls behind is dropped with a final "dropped" event saying why.
// Clients read it with Client.Stream.
var StreamEvents = define(&Op[StreamIn, Stream]{
	ID: "streamEvents", Method: http.MethodGet, Path: "/v1/events", Access: UserOnly, Reveal: true,
	Summary: "The engine's pushed events as Server-Sent Events (names and payloads: the EventPayloads schema)",
	document: func(op *huma.Operation, reg huma.Registry) {
		op.Responses = map[string]*huma.Response{"200": {Description: "event: <name>, data: <its payload as JSON>",
			Content: map[string]*huma.MediaType{"text/event-stream": {Schema: reg.Schema(reflect.TypeFor[EventPayloads](), true, "")}}}}
	},
}, func(h *handler, ctx context.Context, in *StreamIn) (*Stream, error) {
	if h.opts.Bus == nil {
		return nil, problem(http.StatusNotImplemented, "NotImplemented", "this engine has no event stream")
	}
	var after uint64
	if s := firstNonEmpty(in.LastEventID, in.LastIDQuery); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, problem(http.StatusBadRequest, "ValidationError", fmt.Sprintf("Last-Event-ID %q must be an event id (an integer ≥ 0)", s))
		}
		after = v
	}
	if in.Project != "" {
		if _, err := h.eng.ListAgents(in.Project); err != nil {
			return nil, err
		}
	}
	var follow *store.Record
	if in.Follow != "" {
		p, a, ok := strings.Cut(in.Follow, "/")
		if !ok || p == "" || a == "" {
			return nil, problem(http.StatusBadRequest, "ValidationError", fmt.Sprintf("follow=%q must be <project>/<agent>", in.Follow))
		}
		rec, err := h.eng.GetAgent(p, a)
		if err != nil {
			return nil, err
		}
		follow = rec
	}
	// ?stats=<project>: this client looks at that project's CPU and memory
	// (agent:stats events) for as long as it is connected.
	if in.Stats != "" {
		if err := h.eng.Look(in.Stats, 0); err != nil {
			return nil, err
		}
	}
	show := revealed(ctx)
	return &Stream{Body: func(hc huma.Context) {
		r, w := unwrap(hc)
		h.stream(w, r, streamFrom{after: after, project: in.Project, follow: follow, stats: in.Stats, revealed: show})
	}}, nil
})

// streamFrom is what a stream was asked for.
type streamFrom struct {
	after    uint64
	project  string
	follow   *store.Record
	stats    string
	revealed bool
}

// stream writes the events until the client goes or is dropped.
func (h *handler) stream(w http.ResponseWriter, r *http.Request, in streamFrom) {
	var logs chan logfollow.Batch
	if rec := in.follow; rec != nil {
		logs = make(chan logfollow.Batch, 16)
		hub := logfollow.NewHub(func(b logfollow.Batch) {
			select {
			case logs <- b:
			case <-r.Context().Done():
			}
		}, 0)
		defer hub.Close()
		hub.Follow(rec.ProjectID, rec.ID, rec.LogPath, fileSize(rec.LogPath))
	}
	var filter func(eventbus.Event) bool
	if in.project != "" {
		filter = func(ev eventbus.Event) bool { return ev.ProjectID == in.project || ev.ProjectID == "" }
	}
	sub := h.opts.Bus.Subscribe(in.after, filter)
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
	hello, _ := json.Marshal(Hello{LastEventID: h.opts.Bus.Last()})
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
	if in.stats != "" {
		lt := time.NewTicker(10 * time.Second)
		defer lt.Stop()
		lease = lt.C
	}
	for {
		select {
		case <-lease:
			_ = h.eng.Look(in.stats, 0)
		case <-r.Context().Done():
			return
		case ev := <-sub.C():
			if !send(ev.ID, ev.Name, maskEvent(ev, in.revealed)) {
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
					if !send(ev.ID, ev.Name, maskEvent(ev, in.revealed)) {
						return
					}
					continue
				default:
				}
				break
			}
			data, _ := json.Marshal(Dropped{Reason: sub.Reason()})
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
