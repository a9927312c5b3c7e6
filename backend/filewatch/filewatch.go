// Package filewatch tells when a file changes through the kernel's
// file-change notification (inotify on Linux, kqueue on macOS, through
// fsnotify) instead of polling, so that an idle engine wakes only when
// something happened: a log grew, a pause signal file appeared.
//
// A file is watched through its folder, so that its creation, removal or
// replacement is seen as well as its writes. Calls are spaced: a file
// written a thousand times a second costs at most one call per gap, and the
// last change is always followed by a call.
package filewatch

import (
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// ErrClosed is returned by Watch once the watcher is closed.
var ErrClosed = errors.New("file watcher closed")

// Watcher watches files for many callers, with one kernel watch per folder.
type Watcher struct {
	fw  *fsnotify.Watcher
	gap time.Duration

	mu     sync.Mutex
	dirs   map[string]map[string]map[*Watch]struct{} // folder → file name → watches
	closed bool
	done   chan struct{}
}

// Watch is one caller's watch of one file.
type Watch struct {
	w         *Watcher
	dir, name string
	f         func()

	mu      sync.Mutex
	stopped bool
	pending bool      // a call is due
	last    time.Time // of the last call
}

// New starts a watcher whose calls for one file are at least gap apart.
func New(gap time.Duration) (*Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &Watcher{fw: fw, gap: gap, dirs: map[string]map[string]map[*Watch]struct{}{}, done: make(chan struct{})}
	go w.loop()
	return w, nil
}

// Watch calls f each time the file at path is created, written, removed or
// renamed, from a goroutine of its own (at most once per gap; the last
// change always gets a call). Its folder must exist. Stop ends it.
func (w *Watcher) Watch(path string, f func()) (*Watch, error) {
	dir, name := filepath.Split(filepath.Clean(path))
	dir = filepath.Clean(dir)
	x := &Watch{w: w, dir: dir, name: name, f: f}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, ErrClosed
	}
	names := w.dirs[dir]
	if names == nil {
		if err := w.fw.Add(dir); err != nil {
			return nil, err
		}
		names = map[string]map[*Watch]struct{}{}
		w.dirs[dir] = names
	}
	if names[name] == nil {
		names[name] = map[*Watch]struct{}{}
	}
	names[name][x] = struct{}{}
	return x, nil
}

// Stop ends the watch; a call already under way may still finish. Safe to
// call more than once.
func (x *Watch) Stop() {
	x.mu.Lock()
	x.stopped = true
	x.mu.Unlock()
	w := x.w
	w.mu.Lock()
	defer w.mu.Unlock()
	names := w.dirs[x.dir]
	if names == nil || names[x.name] == nil {
		return
	}
	delete(names[x.name], x)
	if len(names[x.name]) == 0 {
		delete(names, x.name)
	}
	if len(names) == 0 {
		delete(w.dirs, x.dir)
		if !w.closed {
			_ = w.fw.Remove(x.dir) // the folder may be gone already
		}
	}
}

// Close ends every watch and the kernel's; a call under way may still
// finish, none starts after.
func (w *Watcher) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	for _, names := range w.dirs {
		for _, set := range names {
			for x := range set {
				x.mu.Lock()
				x.stopped = true // no call after Close starts
				x.mu.Unlock()
			}
		}
	}
	w.dirs = map[string]map[string]map[*Watch]struct{}{}
	w.mu.Unlock()
	err := w.fw.Close()
	<-w.done
	return err
}

func (w *Watcher) loop() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			dir, name := filepath.Split(ev.Name)
			w.fire(filepath.Clean(dir), name)
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.fireAll() // events were lost: every watcher looks again
			}
		}
	}
}

func (w *Watcher) fire(dir, name string) {
	w.mu.Lock()
	var xs []*Watch
	for x := range w.dirs[dir][name] {
		xs = append(xs, x)
	}
	w.mu.Unlock()
	for _, x := range xs {
		x.fire()
	}
}

func (w *Watcher) fireAll() {
	w.mu.Lock()
	var xs []*Watch
	for _, names := range w.dirs {
		for _, set := range names {
			for x := range set {
				xs = append(xs, x)
			}
		}
	}
	w.mu.Unlock()
	for _, x := range xs {
		x.fire()
	}
}

// fire schedules a call: at once, or gap after the last one.
func (x *Watch) fire() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.stopped || x.pending {
		return
	}
	x.pending = true
	time.AfterFunc(max(time.Until(x.last.Add(x.w.gap)), 0), x.call)
}

func (x *Watch) call() {
	x.mu.Lock()
	if x.stopped {
		x.mu.Unlock()
		return
	}
	x.pending, x.last = false, time.Now()
	x.mu.Unlock()
	x.f()
}
