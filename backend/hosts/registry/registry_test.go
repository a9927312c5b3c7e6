package registry

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestAddListRemove(t *testing.T) {
	f := &File{Path: filepath.Join(t.TempDir(), FileName)}
	if hs, err := f.List(); err != nil || len(hs) != 0 {
		t.Fatalf("empty: %v %v", hs, err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, h := range []Host{{"box", "ssh://me@10.0.0.2:2222", now}, {"a1", "me@gpu", now}} {
		if err := f.Add(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Add(Host{Name: "box", URL: "me@other"}); !errors.Is(err, ErrExists) {
		t.Fatalf("twice: %v", err)
	}
	for _, bad := range []string{"", "Box", "-x", "a/b", "a b", "..", "0123456789012345678901234567890123"} {
		if err := f.Add(Host{Name: bad, URL: "me@x"}); !errors.Is(err, ErrBadName) {
			t.Errorf("name %q: %v", bad, err)
		}
	}
	if err := f.Add(Host{Name: "ok", URL: "ssh://me@host:notaport"}); err == nil {
		t.Error("a bad URL was taken")
	}
	hs, err := f.List()
	if err != nil || len(hs) != 2 || hs[0].Name != "a1" || hs[1].Name != "box" || hs[1].URL != "ssh://me@10.0.0.2:2222" || !hs[1].AddedAt.Equal(now) {
		t.Fatalf("list: %+v %v", hs, err)
	}
	fi, _ := os.Stat(f.Path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if err := f.Remove("box"); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove("box"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("removed twice: %v", err)
	}
	if hs, _ := (&File{Path: f.Path}).List(); len(hs) != 1 || hs[0].Name != "a1" {
		t.Fatalf("after remove, read again: %+v", hs)
	}
	if err := os.WriteFile(f.Path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.List(); err == nil {
		t.Fatal("a broken file read as no hosts")
	}
}

func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"box", "a-b", "", "A", "x/y", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckName(s) != nil {
			return
		}
		if filepath.Base(s) != s || s == "." || s == ".." || len(s) > 32 {
			t.Fatalf("%q taken", s)
		}
	})
}
