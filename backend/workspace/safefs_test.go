package workspace

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An untracked symlink to a secret of the user's shows as git shows a
// symlink — mode 120000, its text as its one line — never the secret.
func TestDiffShowsSymlinkAsItsText(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := create(t, repo, "ln")
	secret := filepath.Join(t.TempDir(), "engine.json")
	write(t, secret, `{"token":"the-users-secret"}`)
	if err := os.Symlink(secret, filepath.Join(w.Path, "leak")); err != nil {
		t.Fatal(err)
	}
	d, err := DiffOf(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d)
	if strings.Contains(string(b), "the-users-secret") {
		t.Fatalf("the diff shows the file the link leads to: %s", b)
	}
	if len(d.Files) != 1 {
		t.Fatalf("files %+v", d.Files)
	}
	f := d.Files[0]
	if f.Path != "leak" || f.Mode != "120000" || f.Added != 1 || len(f.Hunks) != 1 || f.Hunks[0].Header != "@@ -0,0 +1 @@" ||
		f.Hunks[0].Lines[0] != (Line{"+", secret}) || f.Hunks[0].Lines[1].Op != "\\" {
		t.Fatalf("leak = %+v", f)
	}
}

// A named pipe is never opened for reading: a symlink to one (which git
// lists as untracked) shows as its text, and a pipe swapped in for a file
// git listed is listed with a note; neither blocks.
func TestDiffNeverOpensAPipe(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := create(t, repo, "fifo")
	fifo := filepath.Join(w.Path, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("fifo", filepath.Join(w.Path, "pipe")); err != nil {
		t.Fatal(err)
	}
	d, err := DiffOf(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 1 || d.Files[0].Path != "pipe" || d.Files[0].Mode != "120000" {
		t.Fatalf("files %+v", d.Files)
	}
	// Swapped in after git listed it: what is opened is looked at.
	budget := MaxUntrackedTotal
	if f := untrackedFile(w.Path, "fifo", &budget); f.Note != "a named pipe: not read" || len(f.Hunks) != 0 {
		t.Fatalf("fifo = %+v", f)
	}
	l, err := net.Listen("unix", filepath.Join(w.Path, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if f := untrackedFile(w.Path, "sock", &budget); f.Note != "a socket: not read" {
		t.Fatalf("sock = %+v", f)
	}
	if f := untrackedFile(w.Path, "/etc/passwd", &budget); !strings.Contains(f.Note, "not a relative path") {
		t.Fatalf("an absolute path = %+v", f)
	}
}

// A folder swapped for a symlink to elsewhere is not followed.
func TestAgentFileFollowsNoFolderLink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	write(t, filepath.Join(outside, "id_rsa"), "PRIVATE KEY")
	if err := os.Symlink(outside, filepath.Join(root, "dir")); err != nil {
		t.Fatal(err)
	}
	f, err := readAgentFile(root, "dir/id_rsa", 1<<20)
	if err == nil || len(f.data) != 0 {
		t.Fatalf("read through a folder link: %+v, %v", f, err)
	}
	for _, bad := range []string{"../x", "a/../../x", "/etc/passwd", "", "a//b"} {
		if _, err := readAgentFile(root, bad, 10); err == nil {
			t.Errorf("%q: read", bad)
		}
	}
}

// A large untracked file is listed with its size, not read whole; past the
// diff's budget, files are listed without their lines.
func TestDiffCapsUntrackedSize(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := create(t, repo, "big")
	write(t, filepath.Join(w.Path, "huge.log"), strings.Repeat("x\n", 3<<19)) // 3 MiB
	write(t, filepath.Join(w.Path, "small1.txt"), strings.Repeat("y\n", 300))
	write(t, filepath.Join(w.Path, "small2.txt"), strings.Repeat("z\n", 300))
	old := MaxUntrackedTotal
	MaxUntrackedTotal = 1 << 20
	t.Cleanup(func() { MaxUntrackedTotal = old })
	d, err := DiffOf(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]FileDiff{}
	for _, f := range d.Files {
		got[f.Path] = f
	}
	if f := got["huge.log"]; f.Note != "too large to show (3.0 MiB)" || len(f.Hunks) != 0 {
		t.Fatalf("huge.log = %+v", f.Note)
	}
	if f := got["small1.txt"]; f.Note != noteOverBudget || !d.Truncated {
		t.Fatalf("past the budget: %+v, truncated %v", f.Note, d.Truncated)
	}
}

// A named pipe where git reads a file (an agent's .gitignore) blocks git:
// the deadline ends it, and the diff answers with an error that says so.
func TestDiffOfAPipedGitignoreEnds(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := create(t, repo, "gi")
	if err := syscall.Mkfifo(filepath.Join(w.Path, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := ReadTimeout
	ReadTimeout = 500 * time.Millisecond
	t.Cleanup(func() { ReadTimeout = old })
	_, err := DiffOf(context.Background(), w)
	if err == nil || !strings.Contains(err.Error(), "did not finish in 500ms") {
		t.Fatalf("diff: %v", err)
	}
}

// What .worktreeinclude lists is copied without following a symlink on
// either side: a symlink is copied as a symlink, and a folder of the new
// worktree that is a symlink is never written through.
func TestCopyIncludedFollowsNoSymlink(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	write(t, secret, "SECRET")
	repo := newRepo(t, map[string]string{".gitignore": "*.local\n.env\n", ".worktreeinclude": ".env\nconf/*.local\n", "a.txt": "a\n"})
	if err := os.Symlink(secret, filepath.Join(repo, ".env")); err != nil {
		t.Fatal(err)
	}
	w := create(t, repo, "inc")
	if got, err := os.Readlink(filepath.Join(w.Path, ".env")); err != nil || got != secret {
		t.Fatalf(".env in the worktree: %q, %v (want the link itself)", got, err)
	}
	// The base has conf as a symlink to elsewhere; the main checkout has a
	// real conf folder with a file the include lists.
	if err := os.Symlink(outside, filepath.Join(repo, "conf")); err != nil {
		t.Fatal(err)
	}
	commitAll(t, repo, "conf is a link")
	base := run(t, repo, "rev-parse", "HEAD")
	os.Remove(filepath.Join(repo, "conf"))
	write(t, filepath.Join(repo, "conf", "db.local"), "db")
	_, err := Create(context.Background(), Options{Project: repo, Dir: filepath.Join(t.TempDir(), "w2"), AgentID: "inc2", Base: base})
	if err == nil || !strings.Contains(err.Error(), "symlink or not a folder") {
		t.Fatalf("create: %v", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("written through the link: %v", ents)
	}
	if branchExists(t, repo, "shepherd/inc2") {
		t.Fatal("a failed create left its branch")
	}
}
