// Package logging sets up the app's own zerolog logger: human-readable lines
// on the console and JSON lines in a file under the XDG state folder.
package logging

import (
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"
)

// New returns a logger writing to console (if non-nil) and to file (appended,
// 0600). The returned closer closes the file.
func New(file string, console io.Writer, level zerolog.Level) (zerolog.Logger, io.Closer, error) {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return zerolog.Nop(), nil, err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return zerolog.Nop(), nil, err
	}
	var w io.Writer = f
	if console != nil {
		w = zerolog.MultiLevelWriter(f, zerolog.ConsoleWriter{Out: console, TimeFormat: time.TimeOnly})
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger(), f, nil
}
