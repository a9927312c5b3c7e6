package shim

// macOS has no child subreaper: orphans of the agent go to launchd, which
// reaps them at once. The shim stops the agent's process group only.
func becomeSubreaper() {}

func children() []int { return nil }

// absorbFatalSignals: a macOS shim is not PID 1 of a box.
func absorbFatalSignals() {}

// closeInheritedOnExec keeps descriptors the shim inherited (from whatever
// started the engine) from leaking into the agent, which gets only stdin,
// stdout and stderr.
func closeInheritedOnExec() { closeListedOnExec() }
