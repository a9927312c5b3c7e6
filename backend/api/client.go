package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// ErrUnreachable wraps every failure to reach the engine at all (connection
// refused, nothing listening, a dead engine's stale address).
var ErrUnreachable = errors.New("engine unreachable")

// Error is an error answer of the API.
type Error struct {
	Status  int
	Name    string // "ProcessNotFound", "ValidationError", …
	Message string
}

func (e *Error) Error() string { return e.Message }

// Client talks to a running engine's API.
type Client struct {
	BaseURL string
	Token   string
	HTTP    *http.Client
}

// NewClient returns a client for the engine that info describes. Requests
// have no overall time limit (a stop waits for the agent's grace); use ctx.
func NewClient(info EngineInfo) *Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 4,
	}
	return &Client{BaseURL: strings.TrimRight(info.URL, "/"), Token: info.Token, HTTP: &http.Client{Transport: tr}}
}

// Response is a successful answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a request with body (nil: none; []byte: as is; else JSON) and
// returns the answer, or an *Error for a non-2xx answer.
func (c *Client) Do(ctx context.Context, method, path string, body any) (*Response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Accept", "application/json")
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: reading the answer: %v", ErrUnreachable, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, decodeError(resp, data)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// JSON sends a request and decodes the answer into out (if non-nil); it
// returns the raw answer too, for callers that print it as is.
func (c *Client) JSON(ctx context.Context, method, path string, body, out any) ([]byte, error) {
	resp, err := c.Do(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	if out != nil {
		if err := json.Unmarshal(resp.Body, out); err != nil {
			return resp.Body, fmt.Errorf("decode answer of %s %s: %w", method, path, err)
		}
	}
	return resp.Body, nil
}

// decodeError turns a non-2xx answer into an *Error.
func decodeError(resp *http.Response, data []byte) *Error {
	e := &Error{Status: resp.StatusCode}
	var eb ErrorBody
	if json.Unmarshal(data, &eb) == nil && eb.Error != "" {
		e.Name, e.Message = eb.Error, eb.Message
	} else {
		e.Name = http.StatusText(resp.StatusCode)
		e.Message = fmt.Sprintf("engine answered %s: %s", resp.Status, strings.TrimSpace(string(data)))
	}
	return e
}
