//go:build !unix

package sandbox

import "errors"

// MakePlaceholders: no box here to keep them read-only in.
func MakePlaceholders(ms []Placeholder) error {
	if len(ms) == 0 {
		return nil
	}
	return errors.New("no sandbox on this system")
}
