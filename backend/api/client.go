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
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"shepherd/backend/supervisor"
)

// ErrUnreachable wraps every failure to reach the engine at all (connection
// refused, nothing listening, a dead engine's stale address).
var ErrUnreachable = errors.New("engine unreachable")

// Error is an error answer of the API. errors.Is matches it with the
// engine's error kind of the same name (supervisor.ErrNotFound, …).
type Error struct {
	Status  int
	Name    string // "ProcessNotFound", "ValidationError", …
	Message string
}

func (e *Error) Error() string { return e.Message }

// Is reports whether target is the engine's error kind e names.
func (e *Error) Is(target error) bool {
	for _, k := range supervisor.Kinds {
		if k == target {
			return k.Error() == e.Name
		}
	}
	return false
}

// Client talks to a running engine's API.
type Client struct {
	BaseURL string
	Token   string
	HTTP    *http.Client
	// Host, when set, addresses every call to that host's engine through
	// this one (/v1/hosts/{host}/…).
	Host string
}

// OnHost is a copy of c whose calls go to the engine of host (through
// c's engine).
func (c *Client) OnHost(host string) *Client {
	d := *c
	d.Host = host
	return &d
}

// hostPath is path as sent: under /v1/hosts/{host}/ for a client on a host.
func (c *Client) hostPath(path string) string {
	if c.Host == "" {
		return path
	}
	if rest, ok := strings.CutPrefix(path, "/v1/"); ok {
		return "/v1/hosts/" + url.PathEscape(c.Host) + "/" + rest
	}
	return path
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

// NewInProcess returns a client that calls the API handler h directly, in
// this process (an engine embedded in the window; tests): the same
// requests and answers, without a socket. The event stream needs a real
// connection.
func NewInProcess(h http.Handler, token string) *Client {
	return &Client{BaseURL: "http://in-process", Token: token, HTTP: &http.Client{Transport: handlerTransport{h}}}
}

// Response is a successful answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// CallOption changes one call.
type CallOption func(*callConfig)

type callConfig struct{ reveal bool }

// Reveal asks for secret environment values as they are (operations whose
// answers hold records; the user's own trusted clients only).
func Reveal(on bool) CallOption { return func(c *callConfig) { c.reveal = on } }

// Call sends one operation's request, built from in, and decodes its
// answer into out's Body (and its headers and status, where out has them).
// An error answer is an *Error.
func Call[I, O any](ctx context.Context, c *Client, op *Op[I, O], in I, opts ...CallOption) (*O, error) {
	out, _, err := CallRaw(ctx, c, op, in, opts...)
	return out, err
}

// CallRaw is Call that also returns the answer's body as it came (for
// printing it as is).
func CallRaw[I, O any](ctx context.Context, c *Client, op *Op[I, O], in I, opts ...CallOption) (*O, []byte, error) {
	req, err := c.request(ctx, op.inf, reflect.ValueOf(in), opts)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.send(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	var out O
	if err := decodeAnswer(reflect.ValueOf(&out).Elem(), resp); err != nil {
		return nil, resp.Body, fmt.Errorf("decode answer of %s: %w", op.ID, err)
	}
	return &out, resp.Body, nil
}

// CallByID sends the operation named id with its parameters by name (path,
// query and header ones alike) and a JSON body as it is: the window's one
// generic call. Parameters it does not have are refused.
func (c *Client) CallByID(ctx context.Context, id string, params map[string]string, body []byte, opts ...CallOption) (*Response, error) {
	info, ok := Lookup(id)
	if !ok {
		return nil, fmt.Errorf("no operation %q", id)
	}
	conf := configure(opts)
	path, q, hdr := info.Path, url.Values{}, http.Header{}
	known := map[string]bool{}
	for _, p := range info.Params {
		known[p.Name] = true
		v, given := params[p.Name]
		switch {
		case p.In == "path" && !given:
			return nil, fmt.Errorf("%s: parameter %q is missing", id, p.Name)
		case p.In == "path":
			path = strings.Replace(path, "{"+p.Name+"}", url.PathEscape(v), 1)
		case !given:
		case p.In == "query":
			q.Set(p.Name, v)
		case p.In == "header":
			hdr.Set(p.Name, v)
		}
	}
	for name := range params {
		if !known[name] {
			return nil, fmt.Errorf("%s has no parameter %q", id, name)
		}
	}
	if info.Reveal && conf.reveal {
		q.Set("reveal", "true")
	}
	if !info.Body {
		body = nil
	}
	req, err := c.newRequest(ctx, info.Method, path, q, body)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	return c.send(ctx, req)
}

func configure(opts []CallOption) callConfig {
	var conf callConfig
	for _, o := range opts {
		o(&conf)
	}
	return conf
}

// request builds an operation's request from its input struct.
func (c *Client) request(ctx context.Context, info *Info, in reflect.Value, opts []CallOption) (*http.Request, error) {
	conf := configure(opts)
	// An addressable copy: an Opt's methods take a pointer.
	v := reflect.New(in.Type()).Elem()
	v.Set(in)
	in = v
	path, q, hdr := info.Path, url.Values{}, http.Header{}
	for _, p := range info.Params {
		f := in.FieldByIndex(p.idx)
		var v any = f.Interface()
		set := !f.IsZero()
		if p.opt {
			v, set = f.Addr().Interface().(optional).value()
		}
		s := fmt.Sprint(v)
		switch {
		case p.In == "path":
			path = strings.Replace(path, "{"+p.Name+"}", url.PathEscape(s), 1)
		case !set:
		case p.In == "query":
			q.Set(p.Name, s)
		case p.In == "header":
			hdr.Set(p.Name, s)
		}
	}
	if info.Reveal && conf.reveal {
		q.Set("reveal", "true")
	}
	var body []byte
	if info.Body {
		if f := in.FieldByName("Body"); f.Kind() != reflect.Pointer || !f.IsNil() {
			b, err := json.Marshal(f.Interface())
			if err != nil {
				return nil, err
			}
			body = b
		}
	}
	req, err := c.newRequest(ctx, info.Method, path, q, body)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	return req, nil
}

func (c *Client) newRequest(ctx context.Context, method, path string, q url.Values, body []byte) (*http.Request, error) {
	u := c.BaseURL + c.hostPath(path)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// decodeAnswer fills an output struct from an answer: Status, the
// header-tagged fields and Body (bytes as they are, else JSON).
func decodeAnswer(v reflect.Value, resp *Response) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f, fv := t.Field(i), v.Field(i)
		switch {
		case f.Name == "Status" && fv.CanInt():
			fv.SetInt(int64(resp.Status))
		case f.Tag.Get("header") != "":
			s := resp.Header.Get(f.Tag.Get("header"))
			switch {
			case fv.Kind() == reflect.String:
				fv.SetString(s)
			case fv.CanInt() && s != "":
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return fmt.Errorf("header %s: %w", f.Tag.Get("header"), err)
				}
				fv.SetInt(n)
			}
		case f.Name == "Body":
			switch {
			case fv.Kind() == reflect.Func:
			case fv.Type() == reflect.TypeFor[[]byte]():
				fv.SetBytes(resp.Body)
			case len(bytes.TrimSpace(resp.Body)) > 0:
				if err := json.Unmarshal(resp.Body, fv.Addr().Interface()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Do sends a request with body (nil: none; []byte: as is; else JSON) and
// returns the answer, or an *Error for a non-2xx answer. It is for tests
// and tools that speak HTTP themselves; clients call operations (Call).
func (c *Client) Do(ctx context.Context, method, path string, body any) (*Response, error) {
	var b []byte
	switch x := body.(type) {
	case nil:
	case []byte:
		b = x
	default:
		j, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		b = j
	}
	p, query, _ := strings.Cut(path, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, err
	}
	req, err := c.newRequest(ctx, method, p, q, b)
	if err != nil {
		return nil, err
	}
	if query != "" {
		req.URL.RawQuery = query // as given
	}
	return c.send(ctx, req)
}

// JSON sends a request and decodes the answer into out (if non-nil); it
// returns the raw answer too.
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

func (c *Client) send(ctx context.Context, req *http.Request) (*Response, error) {
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

// handlerTransport answers requests with a handler in this process.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	if r.Body == nil {
		r.Body = http.NoBody
	}
	r.RequestURI = r.URL.RequestURI()
	w := &recorder{header: http.Header{}}
	t.h.ServeHTTP(w, r)
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return &http.Response{Status: fmt.Sprintf("%d %s", w.code, http.StatusText(w.code)), StatusCode: w.code,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: w.header, Request: req,
		Body: io.NopCloser(bytes.NewReader(w.body.Bytes())), ContentLength: int64(w.body.Len())}, nil
}

// recorder keeps a handler's answer.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }
func (w *recorder) Flush()              {}
func (w *recorder) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
