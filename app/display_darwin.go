package app

// NoDisplay: macOS always has a window server for the logged-in user.
func NoDisplay() string { return "" }
