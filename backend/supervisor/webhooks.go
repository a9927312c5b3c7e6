package supervisor

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	"shepherd/backend/notify"
	"shepherd/backend/notify/webhook"
)

// Notifications away from the desk (SPEC "Answers"): every notification
// the engine raises also goes to the webhook channels the user set
// (package webhook: generic JSON, ntfy, Slack-compatible; each channel
// coalesced, retried and its secrets masked), kept in the data folder's
// webhooks.json.

type webhookState struct {
	once   sync.Once
	store  *webhook.Store
	sender *webhook.Sender
	err    error // the channels could not be read at the start
}

func (e *Engine) webhooks() *webhookState {
	w := &e.hooksOut
	w.once.Do(func() {
		w.store = webhook.NewStore(filepath.Join(e.cfg.DataDir, webhook.FileName))
		w.sender = webhook.New(e.clock, webhook.Options{Logger: e.log})
		chs, err := w.store.List()
		if err != nil {
			w.err = err
			e.log.Error().Err(err).Msg("webhook channels")
			return
		}
		w.sender.SetChannels(chs)
	})
	return w
}

// sendWebhooks hands n to the webhook channels (they coalesce on their own).
func (e *Engine) sendWebhooks(n notify.Notification) {
	if e.ctx.Err() != nil {
		return
	}
	if w := e.webhooks(); w.sender != nil {
		w.sender.Notify(n)
	}
}

// closeWebhooks stops the channels (none is started after: the engine's
// context is done).
func (e *Engine) closeWebhooks() {
	w := &e.hooksOut
	w.once.Do(func() {}) // not started yet: never, now
	if w.sender != nil {
		w.sender.Close()
	}
}

func webhookErr(err error) error {
	switch {
	case errors.Is(err, webhook.ErrNotFound):
		return newErr(ErrNotFound, "%v", err)
	case errors.Is(err, webhook.ErrInvalid):
		return newErr(ErrValidation, "%v", err)
	}
	return err
}

// reload gives the sender the channels as saved.
func (w *webhookState) reload() error {
	chs, err := w.store.List()
	if err != nil {
		return err
	}
	w.sender.SetChannels(chs)
	return nil
}

// Webhooks are the channels, masked, with how sending to each goes.
func (e *Engine) Webhooks() ([]webhook.View, error) {
	w := e.webhooks()
	chs, err := w.store.List()
	if err != nil {
		return nil, err
	}
	out := make([]webhook.View, 0, len(chs))
	for _, c := range chs {
		st, _ := w.sender.Status(c.ID)
		out = append(out, c.View(st))
	}
	return out, nil
}

// AddWebhook saves a new channel and starts sending to it.
func (e *Engine) AddWebhook(c webhook.Channel) (webhook.View, error) {
	w := e.webhooks()
	saved, err := w.store.Add(c)
	if err != nil {
		return webhook.View{}, webhookErr(err)
	}
	if err := w.reload(); err != nil {
		return webhook.View{}, err
	}
	st, _ := w.sender.Status(saved.ID)
	return saved.View(st), nil
}

// RemoveWebhook forgets a channel.
func (e *Engine) RemoveWebhook(id string) error {
	w := e.webhooks()
	if err := w.store.Remove(id); err != nil {
		return webhookErr(err)
	}
	return w.reload()
}

// WebhookTest is how a test notification to one channel went.
type WebhookTest struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"` // secrets masked
}

// TestWebhooks sends a test notification to the channel id ("": every
// channel) and says how each went.
func (e *Engine) TestWebhooks(ctx context.Context, id string) ([]WebhookTest, error) {
	w := e.webhooks()
	chs, err := w.store.List()
	if err != nil {
		return nil, err
	}
	out := []WebhookTest{}
	for _, c := range chs {
		if id != "" && c.ID != id {
			continue
		}
		r := WebhookTest{ID: c.ID, Name: c.Name, OK: true}
		if err := w.sender.Test(ctx, c); err != nil {
			r.OK, r.Error = false, err.Error()
		}
		out = append(out, r)
	}
	if id != "" && len(out) == 0 {
		return nil, newErr(ErrNotFound, "no webhook channel %q", id)
	}
	return out, nil
}
