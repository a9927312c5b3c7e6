package app

import (
	"os"
	"sync"

	"github.com/gen2brain/beeep"
	"github.com/rs/zerolog"

	"shepherd/backend/notify"
)

// nativeNotifier shows notifications on the desktop through beeep. On Linux
// beeep's D-Bus client starts a dbus-daemon of its own on every call when
// there is no session bus, so without DBUS_SESSION_BUS_ADDRESS it is never
// called (see haveBus): one warning is logged and notifications stay in the
// window.
type nativeNotifier struct {
	send   func(title, message string) error // beeep.Notify in the app
	getenv func(string) string
	log    func() zerolog.Logger

	once sync.Once // the one warning
}

func newNativeNotifier(log func() zerolog.Logger) *nativeNotifier {
	beeep.AppName = "Shepherd"
	return &nativeNotifier{
		send:   func(title, message string) error { return beeep.Notify(title, message, "") },
		getenv: os.Getenv,
		log:    log,
	}
}

var _ notify.Notifier = (*nativeNotifier)(nil)

// Notify shows n on the desktop, or logs once why it cannot.
func (n *nativeNotifier) Notify(msg notify.Notification) {
	if !haveBus(n.getenv) {
		n.once.Do(func() {
			l := n.log()
			l.Warn().Msg("no D-Bus session bus: native notifications are off, toasts in the window only")
		})
		return
	}
	title := msg.Title
	if title == "" {
		title = "Shepherd"
	}
	if msg.ProjectName != "" {
		title += " · " + msg.ProjectName // which project, by its name
	}
	if err := n.send(title, msg.Message); err != nil {
		n.once.Do(func() {
			l := n.log()
			l.Warn().Err(err).Msg("no desktop notification service: native notifications are off, toasts in the window only")
		})
	}
}
