package main

import (
	"io"

	"shepherd/backend/sandbox/jail"
	"shepherd/backend/sandbox/restrict"
)

// sandboxEntry runs the shim as a sandbox box's init (jail.InitFlag): the
// report pipe is descriptor 3, the configuration pipe descriptor 4.
func sandboxEntry(args []string) (int, bool) {
	if len(args) == 0 || args[0] != jail.InitFlag {
		return 0, false
	}
	report := inherited(jail.ReportFD, "report")
	cfg := inherited(jail.ConfigFD, "config")
	if report == nil || cfg == nil {
		return 2, true
	}
	var w io.Writer = report
	code := jail.Init(cfg, w, func(c jail.Config) error { return restrict.Restrict(c.Grants) })
	return code, true
}
