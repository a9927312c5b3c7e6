package workspace

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const samplePatch = `diff --git a/a.txt b/a.txt
index 01e79c3..0bc3b5c 100644
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,4 @@ func main() {
 1
-2
+two
 3
+4
\ No newline at end of file
diff --git a/bin.png b/bin.png
new file mode 100644
index 0000000..e69de29
Binary files /dev/null and b/bin.png differ
diff --git a/old name.txt b/new name.txt
similarity index 90%
rename from old name.txt
rename to new name.txt
index 1..2 100644
--- a/old name.txt
+++ b/new name.txt
@@ -1 +1 @@
-x
+y
`

func TestParsePatch(t *testing.T) {
	files, err := ParsePatch([]byte(samplePatch))
	if err != nil {
		t.Fatal(err)
	}
	want := []FileDiff{
		{Path: "a.txt", Status: "modified", Added: 2, Deleted: 1, Hunks: []Hunk{{
			Header: "@@ -1,3 +1,4 @@ func main() {", OldStart: 1, OldLines: 3, NewStart: 1, NewLines: 4,
			Lines: []Line{{" ", "1"}, {"-", "2"}, {"+", "two"}, {" ", "3"}, {"+", "4"}, {"\\", " No newline at end of file"}}}}},
		{Path: "bin.png", Status: "added", Binary: true, Mode: "100644", Hunks: []Hunk{}},
		{Path: "new name.txt", OldPath: "old name.txt", Status: "renamed", Added: 1, Deleted: 1, Hunks: []Hunk{{
			Header: "@@ -1 +1 @@", OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 1, Lines: []Line{{"-", "x"}, {"+", "y"}}}}},
	}
	if d := cmp.Diff(want, files); d != "" {
		t.Fatalf("(-want +got)\n%s", d)
	}
}

func TestParsePatchErrors(t *testing.T) {
	for name, in := range map[string]string{
		"text before diff":  "hello\n",
		"hunk too long":     "diff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n",
		"hunk cut short":    "diff --git a/x b/x\n@@ -1,2 +1,2 @@\n-a\n",
		"bad header":        "diff --git a/x b/x\n@@ -a +1 @@\n",
		"no closing @@":     "diff --git a/x b/x\n@@ -1 +1\n",
		"junk in hunk":      "diff --git a/x b/x\n@@ -1,2 +1,2 @@\n-a\n*b\n",
		"junk after header": "diff --git a/x b/x\nwhat is this\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParsePatch([]byte(in)); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestParseNumstat(t *testing.T) {
	in := "3\t1\ta.txt\x00-\t-\tbin.png\x000\t0\t\x00old name.txt\x00new name.txt\x00"
	got, err := ParseNumstat([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []FileDiff{
		{Path: "a.txt", Status: "modified", Added: 3, Deleted: 1, Hunks: []Hunk{}},
		{Path: "bin.png", Status: "modified", Binary: true, Hunks: []Hunk{}},
		{Path: "new name.txt", OldPath: "old name.txt", Status: "renamed", Hunks: []Hunk{}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want +got)\n%s", d)
	}
	for _, bad := range []string{"x\t1\ta\x00", "1\t1\x00", "1\t1\t\x00old\x00", "1\t1\ta\x00\x00b"} {
		if _, err := ParseNumstat([]byte(bad)); err == nil {
			t.Fatalf("%q: no error", bad)
		}
	}
}

// FuzzParsePatch: any input gives files or an error, never a panic, and
// what is parsed agrees with itself (counts are the hunks' lines, a hunk
// has the lines its header says).
func FuzzParsePatch(f *testing.F) {
	f.Add([]byte(samplePatch))
	f.Add([]byte("diff --git a/x b/x\n@@ -0,0 +1,2 @@\n+a\n+b\n"))
	f.Add([]byte("diff --git a/x b/x\n@@ -1 +1 @@\n-\n+\n\\ No newline at end of file\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		files, err := ParsePatch(b)
		if err != nil {
			return
		}
		for _, fd := range files {
			add, del := 0, 0
			for _, h := range fd.Hunks {
				old, nw := 0, 0
				for _, l := range h.Lines {
					switch l.Op {
					case "+":
						add++
						nw++
					case "-":
						del++
						old++
					case " ":
						old++
						nw++
					}
				}
				if old != h.OldLines || nw != h.NewLines {
					t.Fatalf("hunk %q has %d old and %d new lines", h.Header, old, nw)
				}
			}
			if add != fd.Added || del != fd.Deleted {
				t.Fatalf("%s: counts +%d -%d, lines +%d -%d", fd.Path, fd.Added, fd.Deleted, add, del)
			}
		}
	})
}

func FuzzParseNumstat(f *testing.F) {
	f.Add([]byte("3\t1\ta.txt\x00-\t-\tbin\x000\t0\t\x00o\x00n\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		files, err := ParseNumstat(b)
		if err != nil {
			return
		}
		for _, fd := range files {
			if fd.Path == "" || fd.Added < 0 || fd.Deleted < 0 {
				t.Fatalf("bad file %+v", fd)
			}
		}
	})
}

// bigPatch is a patch of n files, each with one hunk of 10 lines changed.
func bigPatch(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "diff --git a/dir/file%04d.go b/dir/file%04d.go\nindex 1111111..2222222 100644\n--- a/dir/file%04d.go\n+++ b/dir/file%04d.go\n@@ -1,12 +1,12 @@ package dir\n", i, i, i, i)
		b.WriteString(" package dir\n")
		for j := range 10 {
			fmt.Fprintf(&b, "-var x%d = %d\n+var x%d = %d\n", j, j, j, j+1)
		}
		b.WriteString(" // end\n")
	}
	return []byte(b.String())
}

// BenchmarkParsePatch1000Files: the Go side of a diff of 1,000 changed
// files (20 lines each).
func BenchmarkParsePatch1000Files(b *testing.B) {
	p := bigPatch(1000)
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		files, err := ParsePatch(p)
		if err != nil || len(files) != 1000 {
			b.Fatal(err, len(files))
		}
	}
}

// BenchmarkDiff1000Files: DiffOf (git's two diffs and both parses) of a
// worktree with 1,000 changed files.
func BenchmarkDiff1000Files(b *testing.B) {
	files := map[string]string{}
	for i := range 1000 {
		files[fmt.Sprintf("dir/file%04d.go", i)] = "package dir\n\nvar x = 1\n"
	}
	repo := newRepo(b, files)
	w, err := Create(context.Background(), Options{Project: repo, Dir: filepath.Join(b.TempDir(), "w"), AgentID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		write(b, filepath.Join(w.Path, fmt.Sprintf("dir/file%04d.go", i)), "package dir\n\nvar x = 2\n")
	}
	for b.Loop() {
		d, err := DiffOf(context.Background(), w)
		if err != nil || len(d.Files) != 1000 {
			b.Fatal(err)
		}
	}
}

// repo10k is a repository of 10,000 small files in 100 folders.
func repo10k(b *testing.B) string {
	gitEnv(b)
	repo := filepath.Join(b.TempDir(), "big")
	os.MkdirAll(repo, 0o755)
	run(b, repo, "init", "--quiet", "-b", "main")
	for i := range 10000 {
		write(b, filepath.Join(repo, fmt.Sprintf("d%02d/f%05d.txt", i%100, i)), fmt.Sprintf("file %d\n", i))
	}
	commitAll(b, repo, "10k files")
	return repo
}

// BenchmarkCreate10kFiles: Create (git worktree add and the checks around
// it) for a repository of 10,000 files (target: at most 1 s), and plain
// `git worktree add` of the same repository for comparison: what Create
// adds is its few git calls. The disk is synced before each, so that one
// does not pay for the other's writes.
func BenchmarkCreate10kFiles(b *testing.B) {
	repo := repo10k(b)
	dirs := b.TempDir()
	i := 0
	sync := func() {
		b.StopTimer()
		exec.Command("sync").Run()
		b.StartTimer()
	}
	b.Run("GitWorktreeAdd", func(b *testing.B) {
		for b.Loop() {
			sync()
			i++
			id := fmt.Sprintf("a%d", i)
			run(b, repo, "worktree", "add", "--quiet", "-b", "plain/"+id, filepath.Join(dirs, id), "main")
		}
	})
	b.Run("Create", func(b *testing.B) {
		for b.Loop() {
			sync()
			i++
			id := fmt.Sprintf("a%d", i)
			if _, err := Create(context.Background(), Options{Project: repo, Dir: filepath.Join(dirs, id), AgentID: id}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
