package api

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// StreamEvent is one event read from GET /v1/events.
type StreamEvent struct {
	ID   uint64 // 0 for events that are not replayed (hello, agent:log, dropped)
	Name string
	Data []byte
}

// ReadSSE reads Server-Sent Events from r and calls fn for each until r
// ends, fn returns an error, or a line is longer than max bytes. Comment
// lines (heartbeats) are skipped; multi-line data is joined with "\n".
func ReadSSE(r io.Reader, max int, fn func(StreamEvent) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), max)
	var ev StreamEvent
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.Name != "" || len(data) > 0 {
				if ev.Name == "" {
					ev.Name = "message"
				}
				ev.Data = []byte(strings.Join(data, "\n"))
				if err := fn(ev); err != nil {
					return err
				}
			}
			ev, data = StreamEvent{}, nil
		case strings.HasPrefix(line, ":"):
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				if id, err := strconv.ParseUint(value, 10, 64); err == nil {
					ev.ID = id
				}
			case "event":
				ev.Name = value
			case "data":
				data = append(data, value)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.EOF
}

// Stream opens the event stream (StreamEvents) as in asks — one project's,
// an agent's log lines too, from after the event id in.LastEventID — and
// calls fn for each event until ctx ends, the engine goes away (an error
// wrapping ErrUnreachable or io.EOF) or fn returns an error.
func (c *Client) Stream(ctx context.Context, in StreamIn, fn func(StreamEvent) error, opts ...CallOption) error {
	req, err := c.request(ctx, StreamEvents.inf, reflect.ValueOf(in), opts)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return decodeError(resp, b)
	}
	var fnErr error
	err = ReadSSE(resp.Body, 16<<20, func(ev StreamEvent) error {
		fnErr = fn(ev)
		return fnErr
	})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case fnErr != nil:
		return fnErr
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w: the engine closed the event stream", ErrUnreachable)
	default:
		return fmt.Errorf("%w: the event stream broke: %v", ErrUnreachable, err)
	}
}
