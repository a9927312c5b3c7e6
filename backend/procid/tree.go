package procid

import "time"

// Usage is what a process tree uses: CPU time so far and memory now.
type Usage struct {
	Processes int           // the process and its live descendants
	CPU       time.Duration // user + system time, summed over the tree
	RSS       int64         // resident memory in bytes, summed over the tree
}

// Descendants lists the live descendants of pid (children, theirs, …),
// zombies left out.
func Descendants(pid int) []int { return descendants(pid) }

// TreeUsage sums what pid and its live descendants use. A pid that is gone
// is an error.
func TreeUsage(pid int) (Usage, error) { return treeUsage(pid) }
