package app

import "os"

// webViewEnv is what the window sets for WebKit's web process (which
// inherits the window's environment) where the user has not: JavaScriptCore
// in its small-footprint mode, as WebKit runs it on memory-constrained
// devices (a collector that lets the heap grow less between collections;
// the JITs stay on). The window shows one page of lists and a log.
var webViewEnv = [][2]string{
	{"JSC_forceMiniVMMode", "true"},
}

// webViewEnvSet names the variables PrepareWebView set, so that the engine
// the window starts, and the agents it runs, get the user's environment
// without them.
var webViewEnvSet []string

// PrepareWebView runs before GTK and WebKit start.
func PrepareWebView() {
	for _, kv := range webViewEnv {
		if _, ok := os.LookupEnv(kv[0]); ok {
			continue
		}
		os.Setenv(kv[0], kv[1])
		webViewEnvSet = append(webViewEnvSet, kv[0])
	}
}
