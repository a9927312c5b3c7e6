package app

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// quitSignals quit Shepherd as the menu's Quit does: Ctrl-C, a plain kill,
// and SIGHUP (the terminal closed, the user logged out).
var quitSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// quitDeadline bounds a quit: if the window has not started to shut down by
// then (a hung main loop), the process ends anyway.
const quitDeadline = 2500 * time.Millisecond

// HandleSignals makes SIGINT, SIGTERM and SIGHUP quit the app; a second one
// ends the process at once. main calls it before the window starts.
func HandleSignals(a *App) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, quitSignals...)
	go a.onSignals(ch)
}

func (a *App) onSignals(ch <-chan os.Signal) {
	sig := <-ch
	l := a.logger()
	l.Info().Str("signal", sig.String()).Msg("quit on signal")
	a.quit()
	<-ch
	a.exitFn(1)
}

// armQuitDeadline ends the process if the quit under way has not reached
// OnShutdown within quitDeadline.
func (a *App) armQuitDeadline() {
	a.deadlineOnce.Do(func() {
		time.AfterFunc(quitDeadline, func() {
			if !a.shuttingDown.Load() {
				l := a.logger()
				l.Warn().Msg("quit: the window did not close in time; ending the process")
				a.exitFn(0)
			}
		})
	})
}
