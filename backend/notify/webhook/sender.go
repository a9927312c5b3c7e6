package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"shepherd/backend/notify"
)

// Options tune a Sender; zero fields take the defaults.
type Options struct {
	// Window is the coalescing window: at most one notification per agent
	// per window and channel, the rest summed up at its end, as the
	// desktop's (default 1 min).
	Window time.Duration
	// Attempts is how many times a notification is tried (default 5).
	Attempts int
	// Backoff is the wait before the second attempt, doubled before each
	// next one (default 2 s), at most MaxBackoff (default 2 min; also the
	// most of a Retry-After that is honoured).
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Timeout bounds one request (default 10 s).
	Timeout time.Duration
	// Queue is how many notifications a channel holds while it retries
	// (default 64); beyond it the oldest are dropped, and counted.
	Queue int
	// Client sends the requests (default: one with Timeout that follows no
	// redirect).
	Client *http.Client
	Logger zerolog.Logger
}

func (o Options) withDefaults() Options {
	if o.Window == 0 {
		o.Window = time.Minute
	}
	if o.Attempts <= 0 {
		o.Attempts = 5
	}
	if o.Backoff <= 0 {
		o.Backoff = 2 * time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 2 * time.Minute
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Queue <= 0 {
		o.Queue = 64
	}
	if o.Client == nil {
		o.Client = &http.Client{
			Timeout: o.Timeout,
			// A redirect is not followed: the body would go where the
			// user never said.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return o
}

// Status is how sending to a channel goes, to be shown with it.
type Status struct {
	Sent        int        `json:"sent"`
	LastSentAt  *time.Time `json:"lastSentAt,omitempty"`
	Failing     bool       `json:"failing"`             // the latest notification could not be sent, after its retries
	Retrying    bool       `json:"retrying,omitempty"`  // a notification waits for its next attempt
	LastError   string     `json:"lastError,omitempty"` // the latest failure, in words, secrets masked
	LastErrorAt *time.Time `json:"lastErrorAt,omitempty"`
	Dropped     int        `json:"dropped,omitempty"` // given up after the last attempt, or pushed out of a full queue
}

// Sender sends notifications to the channels, each in its own goroutine.
// It is a notify.Notifier.
type Sender struct {
	clock clockwork.Clock
	opts  Options

	mu       sync.Mutex
	channels map[string]*channelState
	closed   bool
}

type channelState struct {
	ch     Channel
	co     *notify.Coalescer
	queue  chan notify.Notification
	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	status Status
}

// New returns a Sender with no channels.
func New(clock clockwork.Clock, opts Options) *Sender {
	return &Sender{clock: clock, opts: opts.withDefaults(), channels: map[string]*channelState{}}
}

// SetChannels makes chs the channels: new ones start, removed ones stop
// (what they held is dropped), changed ones restart; an unchanged one goes
// on untouched, and one whose URL and format are unchanged keeps its
// status.
func (s *Sender) SetChannels(chs []Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	keep := map[string]bool{}
	for _, c := range chs {
		keep[c.ID] = true
		old := s.channels[c.ID]
		if old != nil && reflect.DeepEqual(old.ch, c) {
			continue
		}
		var st Status
		if old != nil {
			old.halt()
			if old.ch.URL == c.URL && old.ch.Format == c.Format {
				st = old.snapshot()
				st.Retrying = false
			}
		}
		s.channels[c.ID] = s.start(c, st)
	}
	for id, cs := range s.channels {
		if !keep[id] {
			cs.halt()
			delete(s.channels, id)
		}
	}
}

func (s *Sender) start(c Channel, st Status) *channelState {
	cs := &channelState{ch: c, queue: make(chan notify.Notification, s.opts.Queue),
		stop: make(chan struct{}), done: make(chan struct{}), status: st}
	cs.co = notify.NewCoalescer(s.clock, s.opts.Window, func(n notify.Notification) { s.enqueue(cs, n) })
	go s.run(cs)
	return cs
}

// halt stops the channel's coalescer and worker and waits for the worker.
func (cs *channelState) halt() {
	cs.co.Stop()
	close(cs.stop)
	<-cs.done
}

func (cs *channelState) snapshot() Status {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.status
}

// Notify sends n to every channel that carries its kind, coalesced.
func (s *Sender) Notify(n notify.Notification) {
	s.mu.Lock()
	var to []*channelState
	for _, cs := range s.channels {
		if cs.ch.Carries(n.Kind) {
			to = append(to, cs)
		}
	}
	s.mu.Unlock()
	for _, cs := range to {
		cs.co.Notify(n)
	}
}

// enqueue hands n to the channel's worker; a full queue drops its oldest.
func (s *Sender) enqueue(cs *channelState, n notify.Notification) {
	for {
		select {
		case <-cs.stop:
			return
		case cs.queue <- n:
			return
		default:
		}
		select {
		case <-cs.queue:
			cs.mu.Lock()
			cs.status.Dropped++
			cs.mu.Unlock()
		default:
		}
	}
}

func (s *Sender) run(cs *channelState) {
	defer close(cs.done)
	for {
		select {
		case <-cs.stop:
			return
		case n := <-cs.queue:
			s.deliver(cs, n)
		}
	}
}

// deliver sends n, retrying with backoff while the failure may pass.
func (s *Sender) deliver(cs *channelState, n notify.Notification) {
	delay := s.opts.Backoff
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-cs.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		wait, err := s.send(ctx, cs.ch, n, false)
		cancel()
		now := s.clock.Now()
		cs.mu.Lock()
		if err == nil {
			cs.status.Sent++
			cs.status.LastSentAt = &now
			cs.status.Failing, cs.status.Retrying = false, false
			cs.mu.Unlock()
			return
		}
		cs.status.LastError, cs.status.LastErrorAt = err.Error(), &now
		final := wait < 0 || attempt >= s.opts.Attempts
		cs.status.Retrying = !final
		if final {
			cs.status.Failing = true
			cs.status.Dropped++
		}
		cs.mu.Unlock()
		s.opts.Logger.Warn().Str("channel", cs.ch.ID).Str("url", Mask(cs.ch.URL, cs.ch.Format)).Int("attempt", attempt).
			Bool("final", final).Str("error", err.Error()).Msg("webhook failed")
		if final {
			return
		}
		if wait == 0 {
			wait = delay
		}
		delay = min(delay*2, s.opts.MaxBackoff)
		select {
		case <-cs.stop:
			return
		case <-s.clock.After(wait):
		}
	}
}

// send makes one attempt. wait says what may follow a failure: -1 never
// again (the request itself is wrong), 0 the backoff, more a Retry-After.
func (s *Sender) send(ctx context.Context, c Channel, n notify.Notification, test bool) (wait time.Duration, err error) {
	req, err := request(ctx, c, n, s.clock.Now(), test)
	if err != nil {
		return -1, fmt.Errorf("POST %s: %s", Mask(c.URL, c.Format), scrub(err.Error(), c))
	}
	resp, err := s.opts.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, fmt.Errorf("POST %s: %s", Mask(c.URL, c.Format), scrub(err.Error(), c))
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return 0, nil
	}
	msg := fmt.Sprintf("POST %s: %s", Mask(c.URL, c.Format), resp.Status)
	if t := oneLine(snippet); t != "" {
		msg += ": " + scrub(t, c)
	}
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return -1, errors.New(msg + " (a redirect is not followed)")
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500:
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			return min(time.Duration(secs)*time.Second, s.opts.MaxBackoff), errors.New(msg)
		}
		return 0, errors.New(msg)
	}
	return -1, errors.New(msg)
}

// Test sends a test notification to c now, once, and says how it went;
// the error's words mask the channel's secrets. A channel the Sender knows
// has its status updated.
func (s *Sender) Test(ctx context.Context, c Channel) error {
	if err := c.Validate(); err != nil {
		return err
	}
	n := notify.Notification{Level: notify.Info, Kind: "test", Title: "Shepherd test notification",
		Message: "This channel works: Shepherd's notifications will arrive here."}
	_, err := s.send(ctx, c, n, true)
	now := s.clock.Now()
	s.mu.Lock()
	cs := s.channels[c.ID]
	s.mu.Unlock()
	if cs != nil && cs.ch.URL == c.URL && cs.ch.Format == c.Format {
		cs.mu.Lock()
		if err != nil {
			cs.status.LastError, cs.status.LastErrorAt = err.Error(), &now
		} else {
			cs.status.Sent++
			cs.status.LastSentAt = &now
			cs.status.Failing = false
		}
		cs.mu.Unlock()
	}
	return err
}

// Status is how sending to channel id goes.
func (s *Sender) Status(id string) (Status, bool) {
	s.mu.Lock()
	cs := s.channels[id]
	s.mu.Unlock()
	if cs == nil {
		return Status{}, false
	}
	return cs.snapshot(), true
}

// Close stops every channel; what they held is dropped.
func (s *Sender) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for id, cs := range s.channels {
		cs.halt()
		delete(s.channels, id)
	}
}

// scrub removes a channel's secrets from a text (an error's words).
func scrub(text string, c Channel) string {
	var secrets []string
	if u, err := url.Parse(c.URL); err == nil {
		if u.User != nil {
			secrets = append(secrets, u.User.Username())
			if p, ok := u.User.Password(); ok {
				secrets = append(secrets, p)
			}
		}
		for _, vs := range u.Query() {
			secrets = append(secrets, vs...)
		}
		for _, seg := range strings.Split(u.Path, "/") {
			if len(seg) >= 4 && (c.Format == FormatNtfy || looksSecret(seg)) {
				secrets = append(secrets, seg)
			}
		}
		if u.RawQuery != "" {
			secrets = append(secrets, u.RawQuery)
		}
		secrets = append(secrets, u.Path)
	}
	for _, v := range c.Headers {
		secrets = append(secrets, v)
	}
	secrets = append(secrets, c.URL)
	// The longest first, so a part never unmasks a whole.
	for i := range secrets {
		for j := i + 1; j < len(secrets); j++ {
			if len(secrets[j]) > len(secrets[i]) {
				secrets[i], secrets[j] = secrets[j], secrets[i]
			}
		}
	}
	for _, sec := range secrets {
		if len(sec) >= 4 && sec != "/" {
			text = strings.ReplaceAll(text, sec, masked)
		}
	}
	return text
}

func oneLine(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
