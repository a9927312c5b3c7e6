package logfollow

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, path, s string, flag int) {
	t.Helper()
	f, err := os.OpenFile(path, flag|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.log")
	for _, tc := range []struct {
		name    string
		content string
		n       int
		want    []string
		offset  int64
	}{
		{"missing", "", 10, []string{}, 0},
		{"fewer than n", "a\nb\n", 10, []string{"a", "b"}, 4},
		{"last n", "a\nb\nc\nd\n", 2, []string{"c", "d"}, 8},
		{"partial last line left for the follower", "a\nb\npart", 10, []string{"a", "b"}, 4},
		{"crlf", "a\r\nb\r\n", 10, []string{"a", "b"}, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(path)
			if tc.content != "" {
				write(t, path, tc.content, os.O_TRUNC)
			}
			got, err := Tail(path, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Lines); diff != "" || got.Offset != tc.offset {
				t.Fatalf("lines (-want +got):\n%s offset %d, want %d", diff, got.Offset, tc.offset)
			}
		})
	}
}

// A big log: the tail reads only the end and returns the exact last lines.
func TestTailBigLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.log")
	var b strings.Builder
	for i := range 200_000 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	write(t, path, b.String(), os.O_TRUNC)
	got, err := Tail(path, 3)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"line 199997", "line 199998", "line 199999"}, got.Lines); diff != "" {
		t.Fatal(diff)
	}
}

type recorder struct {
	mu      sync.Mutex
	batches []Batch
}

func (r *recorder) emit(b Batch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, b)
}

func (r *recorder) lines() ([]string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, b := range r.batches {
		out = append(out, b.Lines...)
	}
	return out, len(r.batches)
}

func waitLines(t *testing.T, r *recorder, want []string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, n := r.lines()
		if cmp.Equal(want, got) {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("lines (-want +got):\n%s", cmp.Diff(want, got))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Lines written in a burst arrive batched, partial lines wait for their end,
// and a truncated log starts again with Reset.
func TestFollowBatchesLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.log")
	write(t, path, "old\n", os.O_TRUNC)
	start, _ := Tail(path, 10)
	rec := &recorder{}
	h := NewHub(rec.emit, 20*time.Millisecond)
	defer h.Close()
	h.Follow("p", "a", path, start.Offset)

	var burst []string
	var b strings.Builder
	for i := range 500 {
		burst = append(burst, fmt.Sprintf("l%d", i))
		fmt.Fprintf(&b, "l%d\n", i)
	}
	write(t, path, b.String()+"half", os.O_APPEND)
	if n := waitLines(t, rec, burst); n > 3 {
		t.Fatalf("500 lines written at once came in %d batches", n)
	}
	write(t, path, "-done\n", os.O_APPEND)
	waitLines(t, rec, append(burst, "half-done"))

	write(t, path, "fresh\n", os.O_TRUNC)
	waitLines(t, rec, append(burst, "half-done", "fresh"))
	rec.mu.Lock()
	last := rec.batches[len(rec.batches)-1]
	rec.mu.Unlock()
	if !last.Reset || last.Offset != 6 || last.ProjectID != "p" || last.AgentID != "a" {
		t.Fatalf("after truncation: %+v", last)
	}

	h.Unfollow("p", "a")
	if h.Following() != 0 {
		t.Fatal("still following after Unfollow")
	}
	got, _ := rec.lines()
	write(t, path, "ignored\n", os.O_APPEND)
	time.Sleep(80 * time.Millisecond)
	if after, _ := rec.lines(); len(after) != len(got) {
		t.Fatalf("lines after Unfollow: %v", after[len(got):])
	}
}
