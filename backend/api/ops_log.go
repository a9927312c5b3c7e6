package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"shepherd/backend/logtail"
)

// An agent's log is plain text. A tail answer carries the log's size (the
// offset to follow from) in X-Log-Offset, and ?since=OFFSET returns what was
// appended after it.

// HeaderLogOffset names the header that carries where to follow a log from.
const HeaderLogOffset = "X-Log-Offset"

const maxLogChunk = 1 << 20

// LogIn is the input of getLog.
type LogIn struct {
	Project string     `path:"project" doc:"the project's id"`
	Agent   string     `path:"agent" doc:"the agent's id"`
	Tail    int        `query:"tail" minimum:"0" doc:"the last N complete lines (0: the whole log)"`
	Since   Opt[int64] `query:"since" minimum:"0" doc:"what was written after this byte offset (at most 1 MiB; follow with the X-Log-Offset answered)"`
}

// LogText is a piece of an agent's log and where the next one starts.
type LogText struct {
	Offset      int64  `header:"X-Log-Offset" doc:"the offset to ask for next with ?since= (the log's size for a tail)"`
	ContentType string `header:"Content-Type"`
	Body        []byte
}

var GetLog = define(&Op[LogIn, LogText]{
	ID: "getLog", Method: http.MethodGet, Path: agentPath + "/log", Access: OwnedOrSelf,
	Summary: "An agent's log as text: its tail, or what was appended since an offset",
	document: func(op *huma.Operation, _ huma.Registry) {
		op.Responses = map[string]*huma.Response{"200": {Description: "the log's text",
			Content: map[string]*huma.MediaType{"text/plain": {Schema: &huma.Schema{Type: huma.TypeString}}}}}
	},
}, func(h *handler, ctx context.Context, in *LogIn) (*LogText, error) {
	rec, err := h.eng.GetAgent(in.Project, in.Agent)
	if err != nil {
		return nil, err
	}
	text := &LogText{ContentType: "text/plain; charset=utf-8"}
	if in.Since.Set {
		// Offsets count across the log's rotations; bytes rotated away are
		// passed over (the answer starts at the oldest kept). A log that
		// became shorter than the offset (deleted and started again) is
		// read from its start.
		c, err := logtail.Since(rec.LogPath, in.Since.Value, maxLogChunk, false)
		if errors.Is(err, logtail.ErrMoving) {
			c, err = logtail.Chunk{Start: in.Since.Value, Next: in.Since.Value}, nil // nothing new this time: ask again
		}
		if err != nil {
			return nil, problem(http.StatusInternalServerError, "InternalError", fmt.Sprintf("read log of '%s': %v", in.Agent, err))
		}
		text.Offset, text.Body = c.Next, c.Data
		return text, nil
	}
	// The size before the tail is read: a follower starting there may see a
	// line twice if it was written in between, but never misses one.
	text.Offset = fileSize(rec.LogPath)
	if text.Body, err = h.eng.LogTail(in.Project, in.Agent, in.Tail); err != nil {
		return nil, err
	}
	return text, nil
})

// fileSize is the offset just past the end of the log at path (0: none).
func fileSize(path string) int64 {
	if path == "" {
		return 0
	}
	return logtail.Size(path)
}
