package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"shepherd/backend/notify"
)

type recorded struct {
	path   string
	query  string
	header http.Header
	body   []byte
	user   string
	pass   string
}

// server records each request and answers with the next status of
// statuses (then 200).
type server struct {
	*httptest.Server
	mu       sync.Mutex
	statuses []int
	retry    string // Retry-After of the failures
	echo     bool   // answer with the request's URL in the body
	got      chan recorded
}

func newServer(t *testing.T, statuses ...int) *server {
	s := &server{statuses: statuses, got: make(chan recorded, 64)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u, p, _ := r.BasicAuth()
		s.got <- recorded{path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone(), body: b, user: u, pass: p}
		s.mu.Lock()
		code := http.StatusOK
		if len(s.statuses) > 0 {
			code, s.statuses = s.statuses[0], s.statuses[1:]
		}
		s.mu.Unlock()
		if code >= 300 && code < 400 {
			w.Header().Set("Location", "http://elsewhere.example/")
		}
		if code == http.StatusTooManyRequests && s.retry != "" {
			w.Header().Set("Retry-After", s.retry)
		}
		w.WriteHeader(code)
		if s.echo {
			io.WriteString(w, "bad request to "+r.URL.String())
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) next(t *testing.T) recorded {
	t.Helper()
	select {
	case r := <-s.got:
		return r
	case <-t.Context().Done():
		t.Fatal("no request came")
	}
	return recorded{}
}

func (s *server) none(t *testing.T) {
	t.Helper()
	select {
	case r := <-s.got:
		t.Fatalf("an unexpected request: %s %s", r.path, r.body)
	default:
	}
}

var failed = notify.Notification{Level: notify.Error, Kind: notify.KindFailed, Title: "Agent failed",
	ProjectID: "p1", ProjectName: "shop", AgentID: "api-fix", Message: "exit code 1 — tests failed"}

func newSender(t *testing.T, clk clockwork.Clock, chs ...Channel) *Sender {
	s := New(clk, Options{})
	s.SetChannels(chs)
	t.Cleanup(s.Close)
	return s
}

func TestFormatJSON(t *testing.T) {
	srv := newServer(t)
	clk := clockwork.NewFakeClockAt(time.Date(2025, 11, 28, 8, 41, 0, 0, time.UTC))
	s := newSender(t, clk, Channel{ID: "a", Name: "a", URL: srv.URL + "/hook", Format: FormatJSON})
	s.Notify(failed)
	r := srv.next(t)
	if r.path != "/hook" || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("%+v", r)
	}
	var p Payload
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatal(err)
	}
	want := Payload{Source: "shepherd", Kind: "failed", Level: "error", Title: "Agent failed", Message: failed.Message,
		ProjectID: "p1", ProjectName: "shop", AgentID: "api-fix", Time: clk.Now()}
	if p != want {
		t.Fatalf("got %+v\nwant %+v", p, want)
	}
}

func TestFormatNtfy(t *testing.T) {
	srv := newServer(t)
	s := newSender(t, clockwork.NewFakeClock(), Channel{ID: "n", Name: "phone", URL: srv.URL + "/shepherd-x7k2?auth=tk_abc", Format: FormatNtfy})
	s.Notify(failed)
	r := srv.next(t)
	if r.path != "/shepherd-x7k2" || r.query != "auth=tk_abc" || string(r.body) != failed.Message {
		t.Fatalf("%+v", r)
	}
	if got := r.header.Get("Title"); got != "api-fix (shop): Agent failed" {
		t.Fatalf("Title %q", got)
	}
	if r.header.Get("Priority") != "high" || r.header.Get("Tags") != "rotating_light,failed" {
		t.Fatalf("Priority %q Tags %q", r.header.Get("Priority"), r.header.Get("Tags"))
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Fatal(r.header.Get("Content-Type"))
	}
	// A title that is not ASCII is encoded (RFC 2047), not mangled.
	waiting := notify.Notification{Level: notify.Warning, Kind: notify.KindWaiting, Title: "Wartet auf dich: Bash — rm -rf build",
		AgentID: "büro", Message: "permission for Bash"}
	s.Notify(waiting)
	r = srv.next(t)
	dec, err := new(mime.WordDecoder).DecodeHeader(r.header.Get("Title"))
	if err != nil || dec != "büro: Wartet auf dich: Bash — rm -rf build" {
		t.Fatalf("Title %q → %q %v", r.header.Get("Title"), dec, err)
	}
	if r.header.Get("Priority") != "high" || r.header.Get("Tags") != "warning,waiting" {
		t.Fatalf("Priority %q Tags %q", r.header.Get("Priority"), r.header.Get("Tags"))
	}
}

func TestFormatSlack(t *testing.T) {
	srv := newServer(t)
	s := newSender(t, clockwork.NewFakeClock(), Channel{ID: "s", Name: "team", URL: srv.URL + "/services/T0/B0/XXXX", Format: FormatSlack,
		Headers: map[string]string{"X-Extra": "v"}})
	n := failed
	n.Message = "exit 1: <script> & more"
	s.Notify(n)
	r := srv.next(t)
	var body map[string]string
	if err := json.Unmarshal(r.body, &body); err != nil || len(body) != 1 {
		t.Fatalf("%s %v", r.body, err)
	}
	if body["text"] != "*api-fix (shop): Agent failed*\nexit 1: &lt;script&gt; &amp; more" {
		t.Fatalf("text %q", body["text"])
	}
	if r.header.Get("Content-Type") != "application/json" || r.header.Get("X-Extra") != "v" {
		t.Fatal(r.header)
	}
}

// By default a channel carries what enters Needs you only; a channel may
// choose its kinds; a disabled one sends nothing.
func TestKinds(t *testing.T) {
	srv := newServer(t)
	s := newSender(t, clockwork.NewFakeClock(),
		Channel{ID: "d", Name: "default", URL: srv.URL + "/default", Format: FormatJSON},
		Channel{ID: "c", Name: "completions", URL: srv.URL + "/completions", Format: FormatJSON, Kinds: []string{notify.KindCompleted}},
		Channel{ID: "x", Name: "off", URL: srv.URL + "/off", Format: FormatJSON, Disabled: true})
	done := notify.Notification{Level: notify.Success, Kind: notify.KindCompleted, Title: "Agent completed", AgentID: "b"}
	s.Notify(done)
	if r := srv.next(t); r.path != "/completions" {
		t.Fatalf("completed went to %s", r.path)
	}
	s.Notify(failed)
	if r := srv.next(t); r.path != "/default" {
		t.Fatalf("failed went to %s", r.path)
	}
	for _, k := range notify.NeedsYouKinds {
		if !(Channel{}).Carries(k) {
			t.Fatalf("default does not carry %s", k)
		}
	}
	for _, k := range []string{notify.KindCompleted, notify.KindResumed, notify.KindRecovered} {
		if (Channel{}).Carries(k) {
			t.Fatalf("default carries %s", k)
		}
	}
	srv.none(t)
}

// A storm of one agent is one request, then one summary at the end of the
// window, as the desktop's.
func TestCoalescing(t *testing.T) {
	srv := newServer(t)
	clk := clockwork.NewFakeClock()
	s := newSender(t, clk, Channel{ID: "a", Name: "a", URL: srv.URL, Format: FormatJSON})
	s.Notify(failed)
	srv.next(t)
	for i := 0; i < 4; i++ {
		clk.Advance(10 * time.Second)
		s.Notify(failed)
	}
	other := failed
	other.AgentID = "other"
	s.Notify(other)
	if r := srv.next(t); !strings.Contains(string(r.body), `"agentId":"other"`) {
		t.Fatalf("%s", r.body)
	}
	srv.none(t)
	if err := clk.BlockUntilContext(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(20 * time.Second)
	var p Payload
	if err := json.Unmarshal(srv.next(t).body, &p); err != nil {
		t.Fatal(err)
	}
	if p.AgentID != "api-fix" || p.Title != "api-fix failed 4 more times in 1 min" {
		t.Fatalf("summary %+v", p)
	}
}

// A failure that may pass is retried with a doubling backoff on the
// injected clock; the last failure is kept to be shown after a success.
func TestRetries(t *testing.T) {
	srv := newServer(t, 500, 503)
	clk := clockwork.NewFakeClock()
	s := newSender(t, clk, Channel{ID: "a", Name: "a", URL: srv.URL, Format: FormatJSON})
	s.Notify(failed)
	srv.next(t)
	if err := clk.BlockUntilContext(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	st, _ := s.Status("a")
	if !st.Retrying || st.Failing || !strings.Contains(st.LastError, "500 Internal Server Error") {
		t.Fatalf("%+v", st)
	}
	clk.Advance(2*time.Second - time.Millisecond)
	srv.none(t)
	clk.Advance(time.Millisecond)
	srv.next(t)
	if err := clk.BlockUntilContext(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(4 * time.Second) // doubled
	srv.next(t)
	waitFor(t, func() bool { st, _ := s.Status("a"); return st.Sent == 1 })
	st, _ = s.Status("a")
	if st.Retrying || st.Failing || !strings.Contains(st.LastError, "503") || st.LastSentAt == nil {
		t.Fatalf("%+v", st)
	}
}

// A 429's Retry-After is honoured; a 4xx is not retried; a notification
// that fails every attempt is given up, counted, and shown failing.
func TestRetryAfterPermanentAndGiveUp(t *testing.T) {
	srv := newServer(t, 429)
	srv.retry = "30"
	clk := clockwork.NewFakeClock()
	s := newSender(t, clk, Channel{ID: "a", Name: "a", URL: srv.URL, Format: FormatJSON})
	s.Notify(failed)
	srv.next(t)
	clk.BlockUntilContext(t.Context(), 1)
	clk.Advance(29 * time.Second)
	srv.none(t)
	clk.Advance(time.Second)
	srv.next(t)

	bad := newServer(t, 404)
	s.SetChannels([]Channel{{ID: "b", Name: "b", URL: bad.URL, Format: FormatJSON}})
	s.Notify(failed)
	bad.next(t)
	waitFor(t, func() bool { st, _ := s.Status("b"); return st.Failing })
	st, _ := s.Status("b")
	if st.Retrying || st.Dropped != 1 || !strings.Contains(st.LastError, "404 Not Found") {
		t.Fatalf("%+v", st)
	}
	clk.Advance(time.Hour)
	bad.none(t)

	down := newServer(t, 500, 500, 500, 500, 500, 500)
	s2 := New(clk, Options{Attempts: 3, Backoff: time.Second})
	defer s2.Close()
	s2.SetChannels([]Channel{{ID: "c", Name: "c", URL: down.URL, Format: FormatJSON}})
	s2.Notify(failed)
	for i := 0; i < 3; i++ {
		down.next(t)
		if i < 2 {
			clk.BlockUntilContext(t.Context(), 1)
			clk.Advance(time.Duration(1<<i) * time.Second)
		}
	}
	waitFor(t, func() bool { st, _ := s2.Status("c"); return st.Failing })
	clk.Advance(time.Hour)
	down.none(t)
}

// A redirect is not followed: the body never goes where the user did not
// say.
func TestRedirectNotFollowed(t *testing.T) {
	srv := newServer(t, 302)
	s := newSender(t, clockwork.NewFakeClock(), Channel{ID: "a", Name: "a", URL: srv.URL, Format: FormatJSON})
	if err := s.Test(t.Context(), Channel{ID: "a", Name: "a", URL: srv.URL, Format: FormatJSON}); err == nil || !strings.Contains(err.Error(), "redirect is not followed") {
		t.Fatalf("%v", err)
	}
}

func TestMask(t *testing.T) {
	for _, tc := range []struct {
		url    string
		f      Format
		want   string
		secret []string
	}{
		{"https://hooks.slack.com/services/T0123/B0456/abcdefXYZ", FormatSlack, "https://hooks.slack.com/services/***/***/***", []string{"T0123", "B0456", "abcdefXYZ"}},
		{"https://ntfy.sh/shepherd-topic", FormatNtfy, "https://ntfy.sh/***", []string{"shepherd-topic"}},
		{"https://ntfy.example/alerts?auth=tk_secret", FormatNtfy, "https://ntfy.example/***?auth=***", []string{"alerts", "tk_secret"}},
		{"https://me:hunter22@ntfy.example/t", FormatNtfy, "https://***@ntfy.example/***", []string{"me:", "hunter22"}},
		{"https://discord.com/api/webhooks/1234567/tok-en_value", FormatSlack, "https://discord.com/api/webhooks/***/***", []string{"1234567", "tok-en_value"}},
		{"https://example.com/notify/shepherd?token=abc123&x=1", FormatJSON, "https://example.com/notify/shepherd?token=***&x=***", []string{"abc123"}},
		{"https://example.com/in/a8f3k29dk3l2", FormatJSON, "https://example.com/in/***", []string{"a8f3k29dk3l2"}},
		{"http://127.0.0.1:8080/hook", FormatJSON, "http://127.0.0.1:8080/hook", nil},
		{"://bad", FormatJSON, "***", nil},
		{"https://user:pw@[::1", FormatJSON, "https://***", []string{"pw"}},
	} {
		got := Mask(tc.url, tc.f)
		if got != tc.want {
			t.Fatalf("Mask(%q) = %q, want %q", tc.url, got, tc.want)
		}
		for _, sec := range tc.secret {
			if strings.Contains(got, sec) {
				t.Fatalf("Mask(%q) = %q shows %q", tc.url, got, sec)
			}
		}
	}
}

// Whenever a channel is shown — its view, its words, its errors, its
// status — its secrets are masked, even when the server echoes them.
func TestSecretsNeverShown(t *testing.T) {
	srv := newServer(t, 400, 400)
	srv.echo = true
	u := strings.Replace(srv.URL, "http://", "http://me:hunter22@", 1) + "/services/T0123/B0456/sekr3tTOKEN99?auth=tk_live_77"
	c := Channel{ID: "a", Name: "a", URL: u, Format: FormatSlack, Headers: map[string]string{"X-Token": "Bearer sk-headerSecret"}}
	secrets := []string{"hunter22", "T0123", "B0456", "sekr3tTOKEN99", "tk_live_77", "sk-headerSecret"}
	check := func(what, s string) {
		t.Helper()
		for _, sec := range secrets {
			if strings.Contains(s, sec) {
				t.Fatalf("%s shows %q: %s", what, sec, s)
			}
		}
	}
	s := newSender(t, clockwork.NewFakeClock(), c)
	err := s.Test(t.Context(), c)
	if err == nil {
		t.Fatal("a 400 passed")
	}
	r := srv.next(t)
	if r.user != "me" || r.pass != "hunter22" || r.header.Get("X-Token") != "Bearer sk-headerSecret" {
		t.Fatalf("the credentials were not sent: %+v", r)
	}
	check("Test's error", err.Error())
	st, _ := s.Status("a")
	check("the status", st.LastError)
	if !strings.Contains(st.LastError, "400 Bad Request") {
		t.Fatal(st.LastError)
	}
	b, _ := json.Marshal(c.View(st))
	check("the view", string(b))
	if !strings.Contains(string(b), `"X-Token: ***"`) {
		t.Fatal(string(b))
	}
	check("String", c.String())
	check("a validation error", Channel{Name: "a", URL: u, Format: "xml"}.Validate().Error())
	// A connection refused names no secret either.
	srv.Close()
	err = s.Test(t.Context(), c)
	if err == nil {
		t.Fatal("a closed server answered")
	}
	check("a network error", err.Error())
}

func TestTest(t *testing.T) {
	srv := newServer(t)
	s := newSender(t, clockwork.NewFakeClock())
	c := Channel{Name: "new", URL: srv.URL + "/t", Format: FormatJSON}
	if err := s.Test(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	var p Payload
	json.Unmarshal(srv.next(t).body, &p)
	if !p.Test || p.Kind != "test" {
		t.Fatalf("%+v", p)
	}
	if err := s.Test(t.Context(), Channel{Name: "x", URL: "ftp://x", Format: FormatJSON}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("%v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Test(ctx, c); err == nil {
		t.Fatal("a cancelled test passed")
	}
}

func TestValidate(t *testing.T) {
	ok := Channel{Name: "a", URL: "https://ntfy.sh/topic", Format: FormatNtfy}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c    Channel
		says string
	}{
		{Channel{URL: "https://x.y/", Format: FormatJSON}, "the name is empty"},
		{Channel{Name: "a", URL: "https://x.y/", Format: "xml"}, `unknown format "xml"`},
		{Channel{Name: "a", Format: FormatJSON}, "the URL is empty"},
		{Channel{Name: "a", URL: "ftp://x.y/", Format: FormatJSON}, "must start with https://"},
		{Channel{Name: "a", URL: "https:///path", Format: FormatJSON}, "names no host"},
		{Channel{Name: "a", URL: "https://ntfy.sh/", Format: FormatNtfy}, "names its topic"},
		{Channel{Name: "a", URL: "https://x.y/#frag", Format: FormatJSON}, "#fragment"},
		{Channel{Name: "a", URL: "https://x.y/", Format: FormatJSON, Kinds: []string{"everything"}}, `unknown kind "everything"`},
		{Channel{Name: "a", URL: "https://x.y/", Format: FormatJSON, Headers: map[string]string{"Content-Type": "x"}}, "set by Shepherd"},
		{Channel{Name: "a", URL: "https://x.y/", Format: FormatJSON, Headers: map[string]string{"X": "a\r\nEvil: 1"}}, "not a valid HTTP header"},
	} {
		err := tc.c.Validate()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.says) {
			t.Fatalf("%+v: %v, want %q", tc.c, err, tc.says)
		}
	}
}

func TestStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", FileName)
	st := NewStore(path)
	chs, err := st.List()
	if err != nil || len(chs) != 0 {
		t.Fatal(chs, err)
	}
	a, err := st.Add(Channel{Name: "phone", URL: "https://ntfy.sh/secret-topic", Format: FormatNtfy})
	if err != nil || !strings.HasPrefix(a.ID, "wh-") {
		t.Fatal(a, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", fi.Mode(), err)
	}
	if _, err := st.Add(Channel{Name: "phone", URL: "https://ntfy.sh/t2", Format: FormatNtfy}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a second phone: %v", err)
	}
	if _, err := st.Add(Channel{Name: "bad", URL: "nope", Format: FormatNtfy}); !errors.Is(err, ErrInvalid) {
		t.Fatal(err)
	}
	a.Kinds = []string{notify.KindCompleted}
	if err := st.Update(a); err != nil {
		t.Fatal(err)
	}
	got, err := NewStore(path).Get(a.ID)
	if err != nil || len(got.Kinds) != 1 || got.URL != "https://ntfy.sh/secret-topic" {
		t.Fatal(got, err)
	}
	if err := st.Update(Channel{ID: "wh-none", Name: "x", URL: "https://x.y/", Format: FormatJSON}); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if err := st.Remove(a.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.Remove(a.ID); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	// A damaged file is an error, never silently emptied.
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := st.List(); err == nil {
		t.Fatal("a damaged file reads as empty")
	}
	if _, err := st.Add(Channel{Name: "x", URL: "https://x.y/", Format: FormatJSON}); err == nil {
		t.Fatal("a damaged file was overwritten")
	}
}

// SetChannels: an unchanged channel keeps going, a removed one stops, a
// changed URL starts afresh.
func TestSetChannels(t *testing.T) {
	srv := newServer(t, 404)
	clk := clockwork.NewFakeClock()
	c := Channel{ID: "a", Name: "a", URL: srv.URL + "/one", Format: FormatJSON}
	s := newSender(t, clk, c)
	s.Notify(failed)
	srv.next(t)
	waitFor(t, func() bool { st, _ := s.Status("a"); return st.Failing })
	s.SetChannels([]Channel{c})
	if st, _ := s.Status("a"); !st.Failing {
		t.Fatal("an unchanged channel lost its status")
	}
	c.URL = srv.URL + "/two"
	s.SetChannels([]Channel{c})
	if st, _ := s.Status("a"); st.Failing {
		t.Fatal("a new URL kept the old one's failure")
	}
	s.SetChannels(nil)
	if _, ok := s.Status("a"); ok {
		t.Fatal("a removed channel is still there")
	}
	s.Notify(failed)
	srv.none(t)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-t.Context().Done():
			t.Fatal("the condition never came")
		case <-time.After(time.Millisecond):
		}
	}
}
