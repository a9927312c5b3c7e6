package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strings"
	"time"

	"shepherd/backend/notify"
)

// Payload is the body of a generic JSON channel's request.
type Payload struct {
	Source      string    `json:"source"` // "shepherd"
	Kind        string    `json:"kind"`
	Level       string    `json:"level"`
	Title       string    `json:"title"`
	Message     string    `json:"message"`
	ProjectID   string    `json:"projectId,omitempty"`
	ProjectName string    `json:"projectName,omitempty"`
	AgentID     string    `json:"agentId,omitempty"`
	Time        time.Time `json:"time"`
	Test        bool      `json:"test,omitempty"` // sent by Test
}

// request builds the channel's request for n.
func request(ctx context.Context, c Channel, n notify.Notification, at time.Time, test bool) (*http.Request, error) {
	var (
		body  []byte
		ctype string
		extra = map[string]string{}
	)
	switch c.Format {
	case FormatNtfy:
		body, ctype = []byte(n.Message), "text/plain; charset=utf-8"
		if n.Message == "" {
			body = []byte(n.Title)
		}
		extra["Title"] = headerText(subject(n))
		extra["Priority"] = ntfyPriority(n)
		extra["Tags"] = strings.Join(ntfyTags(n), ",")
	case FormatSlack:
		text := "*" + slackEscape(subject(n)) + "*"
		if n.Message != "" {
			text += "\n" + slackEscape(n.Message)
		}
		body, _ = json.Marshal(map[string]string{"text": text})
		ctype = "application/json"
	default:
		p := Payload{Source: "shepherd", Kind: n.Kind, Level: n.Level, Title: n.Title, Message: n.Message,
			ProjectID: n.ProjectID, ProjectName: n.ProjectName, AgentID: n.AgentID, Time: at.UTC(), Test: test}
		body, _ = json.Marshal(p)
		ctype = "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("User-Agent", "Shepherd")
	for k, v := range extra {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	return req, nil
}

// subject is a notification's title with where it comes from:
// "api-fix (shop): Agent failed".
func subject(n notify.Notification) string {
	who := n.AgentID
	if n.ProjectName != "" && who != "" {
		who += " (" + n.ProjectName + ")"
	} else if who == "" {
		who = n.ProjectName
	}
	if who == "" || strings.Contains(n.Title, n.AgentID) && n.AgentID != "" {
		return n.Title
	}
	return who + ": " + n.Title
}

// headerText is s as an HTTP header value: one line, and non-ASCII text
// encoded (RFC 2047, which ntfy reads).
func headerText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return mime.BEncoding.Encode("utf-8", s)
}

func ntfyPriority(n notify.Notification) string {
	switch {
	case n.Kind == notify.KindWaiting || n.Level == notify.Error:
		return "high"
	case n.Level == notify.Warning:
		return "default"
	}
	return "low"
}

func ntfyTags(n notify.Notification) []string {
	var tags []string
	switch n.Level {
	case notify.Error:
		tags = append(tags, "rotating_light")
	case notify.Warning:
		tags = append(tags, "warning")
	case notify.Success:
		tags = append(tags, "white_check_mark")
	default:
		tags = append(tags, "information_source")
	}
	if n.Kind != "" {
		tags = append(tags, n.Kind)
	}
	return tags
}

// slackEscape escapes what Slack reads as markup: &, < and >.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
