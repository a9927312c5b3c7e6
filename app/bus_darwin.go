package app

// PrepareSessionBus: macOS has no D-Bus session bus to auto-launch.
func PrepareSessionBus() {}
