package app

import (
	"os"
	"testing"
)

// PrepareWebView sets what the user has not set, leaves what they have, and
// names only what it set (the engine is started without those).
func TestPrepareWebView(t *testing.T) {
	t.Cleanup(func() { webViewEnvSet = nil })
	name, want := webViewEnv[0][0], webViewEnv[0][1]

	t.Setenv(name, "false")
	webViewEnvSet = nil
	PrepareWebView()
	if got := os.Getenv(name); got != "false" {
		t.Errorf("the user's %s=false became %q", name, got)
	}
	for _, n := range webViewEnvSet {
		if n == name {
			t.Errorf("%s named as set by the window: %v", name, webViewEnvSet)
		}
	}

	os.Unsetenv(name)
	webViewEnvSet = nil
	PrepareWebView()
	if got := os.Getenv(name); got != want {
		t.Errorf("%s = %q, want %q", name, got, want)
	}
	if len(webViewEnvSet) != len(webViewEnv) {
		t.Errorf("named as set: %v, want all of %v", webViewEnvSet, webViewEnv)
	}
}
