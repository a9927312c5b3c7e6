//go:build bindings

package main

// checkDisplay: Wails generates the frontend's bindings by running the app
// built with the bindings tag, which opens no window and needs no display.
func checkDisplay() {}
