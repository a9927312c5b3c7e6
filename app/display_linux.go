package app

import "os"

// NoDisplay explains how to run Shepherd when there is no display to open
// a window on (GTK would end with a panic); "" when there is one.
func NoDisplay() string {
	if os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != "" {
		return ""
	}
	return `shepherd: no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set).
  On a machine without a screen, run the engine alone:   shepherd serve
  and use the command line (shepherd help), or run the window under a
  virtual display as the README's run command does (xvfb-run).`
}
