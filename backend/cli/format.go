package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"shepherd/backend/store"
)

// How records read in what the CLI prints: statuses, activity, durations,
// exits, times, command lines.

// statusText is a status as people read it: "queued · 2nd".
func statusText(r *store.Record) string {
	if r.Status == "queued" && r.QueuePosition > 0 {
		return "queued · " + ordinal(r.QueuePosition)
	}
	if r.Status == "paused" && r.BudgetPause != "" {
		return "paused · budget reached"
	}
	return string(r.Status)
}

// runText says where a started agent is: "running, pid 4242", "queued,
// 2nd in line", or its status.
func runText(r *store.Record) string {
	switch {
	case r.Status == "queued" && r.QueuePosition > 0:
		return "queued, " + ordinal(r.QueuePosition) + " in line"
	case r.Status.Live() && r.PID > 0:
		return fmt.Sprintf("%s, pid %d", r.Status, r.PID)
	}
	return string(r.Status)
}

// endText says how a stopped agent ended: "stopped", "failed (exit code 1)".
func endText(r *store.Record) string {
	s := string(r.Status)
	switch {
	case r.ExitCode != nil && *r.ExitCode != 0:
		s += fmt.Sprintf(" (exit code %d)", *r.ExitCode)
	case r.Signal != "" && r.Status != "stopped":
		s += " (" + r.Signal + ")"
	}
	return s
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// activityText says what a running agent is doing, as the window does:
// "working", "busy · Bash 6 min", "silent 3 min", "stale 12 min".
func activityText(a *store.Activity, now time.Time) string {
	if a == nil {
		return ""
	}
	since := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return " " + durationText(now.Sub(*t))
	}
	switch a.State {
	case store.ActivityBusy:
		tool := a.Tool
		if tool == "cpu" {
			tool = "using CPU"
		}
		return "busy · " + tool + since(a.ToolSince)
	case store.ActivitySilent, store.ActivityStale:
		return a.State + since(a.Since)
	case store.ActivityWaiting:
		return "waiting: " + a.Waiting
	}
	return a.State
}

// durationText is a short human duration: "40 s", "6 min", "2 h 5 min".
func durationText(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	default:
		return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func pidText(pid int) string {
	if pid == 0 {
		return "-"
	}
	return strconv.Itoa(pid)
}

func exitText(code *int, signal string) string {
	switch {
	case signal != "":
		return signal
	case code != nil:
		return strconv.Itoa(*code)
	}
	return "-"
}

func timeText(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func optTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return timeText(t)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func commandText(cmd string, args []string) string {
	return strings.Join(quoteAll(append([]string{cmd}, args...)), " ")
}

// quoteAll quotes the words that a shell would split or expand.
func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			w = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		out[i] = w
	}
	return out
}
