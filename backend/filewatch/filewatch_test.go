package filewatch

import (
	"errors"
	"os"
	"path/filepath"
	"shepherd/internal/testutil"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func newWatcher(t *testing.T, gap time.Duration) *Watcher {
	t.Helper()
	w, err := New(gap)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// A file's creation, writes, replacement and removal each call the watch;
// the file need not exist when the watch starts.
func TestWatchSeesEveryChange(t *testing.T) {
	w := newWatcher(t, 0)
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.log")
	var calls atomic.Int32
	if _, err := w.Watch(path, func() { calls.Add(1) }); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func() error
	}{
		{"created", func() error { return os.WriteFile(path, nil, 0o644) }},
		{"appended to", func() error {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteString("a line\n")
			return err
		}},
		{"replaced", func() error {
			tmp := filepath.Join(dir, "agent.log.tmp")
			if err := os.WriteFile(tmp, []byte("new\n"), 0o644); err != nil {
				return err
			}
			return os.Rename(tmp, path)
		}},
		{"removed", func() error { return os.Remove(path) }},
	}
	for _, s := range steps {
		before := calls.Load()
		if err := s.do(); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, "a call when the file was "+s.name, func() bool { return calls.Load() > before })
	}
}

// A file written many times in a burst gets far fewer calls than writes,
// and the last call comes after the last write (it sees the final size).
func TestCallsAreSpacedAndTheLastChangeIsSeen(t *testing.T) {
	w := newWatcher(t, 20*time.Millisecond)
	path := filepath.Join(t.TempDir(), "agent.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mu sync.Mutex
	calls, seen := 0, int64(0)
	if _, err := w.Watch(path, func() {
		fi, err := os.Stat(path)
		if err != nil {
			return
		}
		mu.Lock()
		calls++
		seen = fi.Size()
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	const writes = 2000
	start := time.Now()
	for i := 0; i < writes; i++ {
		if _, err := f.WriteString("x\n"); err != nil {
			t.Fatal(err)
		}
	}
	burst := time.Since(start)
	testutil.Eventually(t, "a call that sees the last write", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen == 2*writes
	})
	mu.Lock()
	defer mu.Unlock()
	// At most one call per gap over the burst, plus the first and the last.
	if limit := int(burst/(20*time.Millisecond)) + 2; calls > limit {
		t.Fatalf("%d calls for %d writes in %v; want at most %d", calls, writes, burst, limit)
	}
}

// Watches share the kernel's watch of their folder; the last one stopped
// removes it. Each watch is called for its own file.
func TestFoldersAreWatchedOnce(t *testing.T) {
	w := newWatcher(t, 0)
	dir := t.TempDir()
	var a, b atomic.Int32
	xa, err := w.Watch(filepath.Join(dir, "a"), func() { a.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	xb, err := w.Watch(filepath.Join(dir, "b"), func() { b.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	if n := len(w.fw.WatchList()); n != 1 {
		t.Fatalf("%d kernel watches for one folder", n)
	}
	os.WriteFile(filepath.Join(dir, "b"), []byte("x"), 0o644)
	testutil.Eventually(t, "b's call", func() bool { return b.Load() > 0 })
	if a.Load() != 0 {
		t.Fatal("a's watch was called for b")
	}
	xa.Stop()
	if n := len(w.fw.WatchList()); n != 1 {
		t.Fatalf("%d kernel watches while b is still watched", n)
	}
	xb.Stop()
	xb.Stop()
	if n := len(w.fw.WatchList()); n != 0 {
		t.Fatalf("%d kernel watches after every watch stopped", n)
	}
}

// A folder that does not exist cannot be watched; a closed watcher says so.
func TestWatchErrors(t *testing.T) {
	w := newWatcher(t, 0)
	if _, err := w.Watch(filepath.Join(t.TempDir(), "missing", "agent.log"), func() {}); err == nil {
		t.Fatal("watching a file in a missing folder: no error")
	}
	w.Close()
	if _, err := w.Watch(filepath.Join(t.TempDir(), "agent.log"), func() {}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// BenchmarkWriteSeen is the time from an append to the watch's call: how
// soon the engine sees a log grow (target: well under 100 ms).
func BenchmarkWriteSeen(b *testing.B) {
	w, err := New(0)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	path := filepath.Join(b.TempDir(), "agent.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	seen := make(chan struct{}, 1)
	if _, err := w.Watch(path, func() {
		select {
		case seen <- struct{}{}:
		default:
		}
	}); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if _, err := f.WriteString("a line\n"); err != nil {
			b.Fatal(err)
		}
		select {
		case <-seen:
		case <-time.After(5 * time.Second):
			b.Fatal("the write was not seen in 5 s")
		}
	}
}
