//go:build !bindings

package main

import (
	"fmt"
	"os"

	"shepherd/app"
)

// checkDisplay ends with a message saying how to run headless when there is
// no display to open the window on (GTK would end with a panic).
func checkDisplay() {
	if msg := app.NoDisplay(); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(1)
	}
}
