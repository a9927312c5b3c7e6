// Package notify carries what the engine wants a person to know: in-app
// toasts (pushed to the UI as a "notify" event) and native desktop
// notifications. The engine only talks to the Notifier interface; tests pass a
// recorder.
package notify

// Levels of a notification.
const (
	Info    = "info"
	Success = "success"
	Warning = "warning"
	Error   = "error"
)

// Kinds say what a notification is about, so the UI can translate it and the
// settings can silence some (completion notices are opt-in).
const (
	KindFailed      = "failed"       // an agent failed (exit, log analysis)
	KindResumeLimit = "resume_limit" // auto-resume gave up
	KindStale       = "stale"        // silent past the threshold, not resumable
	KindInterrupted = "interrupted"  // found dead, not resumable
	KindResumed     = "resumed"      // auto-resumed
	KindCompleted   = "completed"    // finished (opt-in)
	KindPaused      = "paused"       // a project paused (its signal file could not be read)
	KindRecovered   = "recovered"    // found dead or stale and dealt with (killed, marked)
	KindWaiting     = "waiting"      // waits for the user: a permission, input
	KindBudget      = "budget"       // a budget was reached: agents paused, the user is asked
	KindDisk        = "disk"         // the data folder's file system is nearly full
)

// Kinds are every kind, in the order settings list them.
var Kinds = []string{KindFailed, KindResumeLimit, KindStale, KindInterrupted, KindWaiting, KindBudget,
	KindResumed, KindCompleted, KindPaused, KindRecovered, KindDisk}

// NeedsYouKinds are the kinds of what enters Needs you (what a channel
// away from the desk carries unless told otherwise).
var NeedsYouKinds = []string{KindFailed, KindResumeLimit, KindStale, KindInterrupted, KindWaiting, KindBudget}

// Notification is one message. Message is English; MessageJA is the text of
// the seeds, for a Japanese UI.
type Notification struct {
	Level     string `json:"level"`
	Kind      string `json:"kind"`
	Title     string `json:"title"`
	ProjectID string `json:"projectId,omitempty"`
	// ProjectName is the project's name, for the words (never its id).
	ProjectName string `json:"projectName,omitempty"`
	AgentID     string `json:"agentId,omitempty"`
	Message     string `json:"message"`
	MessageJA   string `json:"messageJa,omitempty"`
	// Native says whether the project's settings want an OS notification
	// for it (toasts are shown either way).
	Native bool `json:"native"`
}

// Notifier delivers notifications.
type Notifier interface {
	Notify(n Notification)
}

// Func adapts a function to Notifier.
type Func func(Notification)

func (f Func) Notify(n Notification) { f(n) }

// Multi sends to every non-nil notifier.
type Multi []Notifier

func (m Multi) Notify(n Notification) {
	for _, x := range m {
		if x != nil {
			x.Notify(n)
		}
	}
}
