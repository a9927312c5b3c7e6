package app

// PrepareWebView: WKWebView's footprint is the system's to tune.
func PrepareWebView() {}

var webViewEnvSet []string
