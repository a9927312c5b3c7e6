package app

// haveBus: beeep talks to the notification service over the D-Bus session
// bus, and auto-launches a dbus-daemon per call when there is none.
func haveBus(getenv func(string) string) bool { return sessionBusAddress(getenv) != "" }
