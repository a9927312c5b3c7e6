// Package webhook carries notifications away from the desk (SPEC
// "Answers": notifications away from the desk): channels, each a URL and a
// format — generic JSON, ntfy (https://docs.ntfy.sh/publish), or a
// Slack-compatible incoming webhook ({"text":…}) — chosen per kind of
// notification (by default only what enters Needs you), coalesced as the
// desktop's are (notify.Coalescer), retried with backoff when they fail,
// the last failure kept to be shown. A channel's secrets (a URL's user and
// password, its query, an ntfy topic, a Slack or Discord hook's path, header
// values) are masked whenever it is shown: View, String and every error.
package webhook

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"shepherd/backend/notify"
)

// Format is how a channel's requests are written.
type Format string

const (
	FormatJSON  Format = "json"  // POST application/json: the notification's fields
	FormatNtfy  Format = "ntfy"  // POST to the topic URL: the message as body, Title, Priority and Tags headers
	FormatSlack Format = "slack" // POST {"text":…}: Slack, Mattermost, Discord's /slack, …
)

// Formats are the formats, in the order settings list them.
var Formats = []Format{FormatJSON, FormatNtfy, FormatSlack}

// ErrInvalid is the kind of every validation error of a channel.
var ErrInvalid = errors.New("invalid webhook channel")

// Channel is one place notifications are sent to.
type Channel struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	URL    string `json:"url"`
	Format Format `json:"format"`
	// Kinds are the kinds of notification it carries (notify.Kind*); empty
	// means notify.NeedsYouKinds.
	Kinds []string `json:"kinds,omitempty"`
	// Headers are added to each request (e.g. Authorization); their values
	// are secrets.
	Headers map[string]string `json:"headers,omitempty"`
	// Disabled channels keep their settings and send nothing.
	Disabled bool `json:"disabled,omitempty"`
}

// Carries reports whether the channel sends notifications of kind.
func (c Channel) Carries(kind string) bool {
	if c.Disabled {
		return false
	}
	kinds := c.Kinds
	if len(kinds) == 0 {
		kinds = notify.NeedsYouKinds
	}
	return slices.Contains(kinds, kind)
}

// Validate checks the channel; every error wraps ErrInvalid and names what
// is wrong (the URL masked).
func (c Channel) Validate() error {
	if strings.TrimSpace(c.Name) == "" {
		return fmt.Errorf("%w: the name is empty", ErrInvalid)
	}
	if len(c.Name) > 100 {
		return fmt.Errorf("%w: the name is longer than 100 bytes", ErrInvalid)
	}
	if !slices.Contains(Formats, c.Format) {
		return fmt.Errorf("%w %q: unknown format %q (use json, ntfy or slack)", ErrInvalid, c.Name, c.Format)
	}
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		return fmt.Errorf("%w %q: the URL is empty", ErrInvalid, c.Name)
	case err != nil:
		return fmt.Errorf("%w %q: the URL cannot be read", ErrInvalid, c.Name)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%w %q: the URL must start with https:// or http:// (not %q)", ErrInvalid, c.Name, u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("%w %q: the URL names no host", ErrInvalid, c.Name)
	case u.Fragment != "":
		return fmt.Errorf("%w %q: the URL has a #fragment, which is never sent", ErrInvalid, c.Name)
	case c.Format == FormatNtfy && strings.Trim(u.Path, "/") == "":
		return fmt.Errorf("%w %q: an ntfy URL names its topic (https://ntfy.sh/<topic>)", ErrInvalid, c.Name)
	case strings.ContainsAny(c.URL, " \t\r\n"):
		return fmt.Errorf("%w %q: the URL has a space or a line break", ErrInvalid, c.Name)
	}
	for _, k := range c.Kinds {
		if !slices.Contains(notify.Kinds, k) {
			return fmt.Errorf("%w %q: unknown kind %q (use %s)", ErrInvalid, c.Name, k, strings.Join(notify.Kinds, ", "))
		}
	}
	for k, v := range c.Headers {
		if k == "" || strings.ContainsAny(k, " :\t\r\n") || strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("%w %q: the header %q is not a valid HTTP header", ErrInvalid, c.Name, k)
		}
		switch strings.ToLower(k) {
		case "host", "content-length", "content-type", "transfer-encoding", "connection":
			return fmt.Errorf("%w %q: the header %q is set by Shepherd", ErrInvalid, c.Name, k)
		}
	}
	return nil
}

const masked = "***"

// Mask is u with its secrets replaced by ***: the user and password, every
// query value, and the path segments that are secrets — an ntfy topic
// (the topic is the password), what follows /services/, /hooks/ or
// /webhooks/ (Slack, Discord, …), and any segment that looks like a token.
// A URL that cannot be read is masked whole but for its scheme.
func Mask(raw string, f Format) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		if i := strings.Index(raw, "://"); i > 0 && i < 10 {
			return raw[:i+3] + masked
		}
		return masked
	}
	if u.User != nil {
		u.User = url.User(masked)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{masked}
		}
		u.RawQuery = strings.ReplaceAll(q.Encode(), "%2A%2A%2A", masked)
	}
	u.Fragment, u.RawFragment = "", ""
	segs := strings.Split(u.EscapedPath(), "/")
	afterHook := false
	for i, s := range segs {
		switch {
		case s == "":
		case f == FormatNtfy:
			segs[i] = masked
		case afterHook || looksSecret(s):
			segs[i] = masked
		}
		if s == "services" || s == "hooks" || s == "webhooks" || s == "hook" || s == "webhook" || s == "triggers" {
			afterHook = true
		}
	}
	u.Path, u.RawPath = "", ""
	out := u.Scheme + "://"
	if u.User != nil {
		out += masked + "@"
	}
	out += u.Host + strings.Join(segs, "/")
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	return out
}

// looksSecret: a path segment that is a token rather than a word: long, or
// letters mixed with digits.
func looksSecret(s string) bool {
	if len(s) >= 24 {
		return true
	}
	if len(s) < 8 {
		return false
	}
	letters, digits := false, false
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters = true
		}
	}
	return letters && digits
}

// View is a channel as it is shown: its URL masked, its headers' values
// hidden.
type View struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	URL      string   `json:"url"` // masked
	Format   Format   `json:"format"`
	Kinds    []string `json:"kinds"` // the kinds it carries (the defaults spelled out)
	Headers  []string `json:"headers,omitempty"`
	Disabled bool     `json:"disabled,omitempty"`
	Status   Status   `json:"status"`
}

// View is c as it may be shown, with its sending status.
func (c Channel) View(st Status) View {
	kinds := c.Kinds
	if len(kinds) == 0 {
		kinds = notify.NeedsYouKinds
	}
	v := View{ID: c.ID, Name: c.Name, URL: Mask(c.URL, c.Format), Format: c.Format, Kinds: append([]string{}, kinds...),
		Disabled: c.Disabled, Status: st}
	for k := range c.Headers {
		v.Headers = append(v.Headers, k+": "+masked)
	}
	slices.Sort(v.Headers)
	return v
}

// String is the channel in words, masked.
func (c Channel) String() string {
	return fmt.Sprintf("%s (%s, %s)", c.Name, c.Format, Mask(c.URL, c.Format))
}
