package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GitIdentity gives git an identity for the test (a HOME of its own whose
// .gitconfig names the user, and the GIT_AUTHOR/COMMITTER variables) and no
// system configuration. Git not installed skips the test.
func GitIdentity(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	// The engine's git drops GIT_* variables: the user's identity is in
	// their global config, in a home of the test's own.
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = The User\n\temail = user@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "t@example.com"} {
		t.Setenv(k, v)
	}
}

// GitRepo makes a repository on branch main in a new folder named name,
// with files (path → text) committed, and an identity for git (GitIdentity).
func GitRepo(t testing.TB, name string, files map[string]string) string {
	t.Helper()
	GitIdentity(t)
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "init", "--quiet", "-b", "main")
	for p, text := range files {
		WriteFile(t, filepath.Join(dir, p), text)
	}
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "--quiet", "-m", "initial")
	return dir
}

// Git runs git in dir and returns its output, trimmed; a failure fails the
// test.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// WriteFile writes text to path, making its folder.
func WriteFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
