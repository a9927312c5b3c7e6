package app

import (
	"strings"
	"testing"
)

// Without a display, shepherd says how to run headless instead of ending in
// a GTK panic.
func TestNoDisplay(t *testing.T) {
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	if msg := NoDisplay(); !strings.Contains(msg, "shepherd serve") || !strings.Contains(msg, "no display") {
		t.Fatalf("message: %q", msg)
	}
	t.Setenv("DISPLAY", ":99")
	if msg := NoDisplay(); msg != "" {
		t.Fatalf("with a display: %q", msg)
	}
}
