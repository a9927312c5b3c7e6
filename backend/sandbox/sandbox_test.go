package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	dir := t.TempDir()
	g, err := Parse([]string{" @network ", "@write:" + dir + "/", "@write:" + dir, "@read:*", "@read:/etc"})
	if err != nil {
		t.Fatal(err)
	}
	if !g.Network || len(g.WriteDirs) != 1 || g.WriteDirs[0] != dir {
		t.Fatalf("%+v", g)
	}
	if strings.Join(g.Permissions, " ") != "@network @write:"+dir+" @read:* @read:/etc" {
		t.Fatalf("permissions %v", g.Permissions)
	}
	g, err = Parse(nil)
	if err != nil || g.Network || len(g.WriteDirs) != 0 || g.Permissions == nil {
		t.Fatalf("baseline %+v %v", g, err)
	}
	if got := g.Describe(); got != "no network, no writes but its log" {
		t.Fatalf("describe %q", got)
	}
}

func TestParseErrorsNameTheTag(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	for _, tag := range []string{"@net", "network", "@write:", "@write:rel", "@write:/no/such/dir", "@write:" + file, "@WRITE:/tmp"} {
		_, err := Parse([]string{"@network", tag})
		if !errors.Is(err, ErrInvalid) || (tag != "" && !strings.Contains(err.Error(), `"`+tag+`"`)) {
			t.Errorf("tag %q: %v", tag, err)
		}
	}
}

func TestHolderCheck(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	os.MkdirAll(sub, 0o755)
	sibling := root + "-sibling" // a prefix of the path is not "under" it
	os.MkdirAll(sibling, 0o755)
	t.Cleanup(func() { os.RemoveAll(sibling) })
	agent := AgentHolder("agent 'x'", nil, root)
	mustGrants := func(tags ...string) Grants {
		g, err := Parse(tags)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	if err := agent.Check(mustGrants("@network", "@write:"+sub, "@write:"+root)); err != nil {
		t.Fatal(err)
	}
	if err := agent.Check(mustGrants("@write:" + sibling)); !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), sibling) {
		t.Fatalf("sibling: %v", err)
	}
	boxed := AgentHolder("agent 'y'", &Grants{WriteDirs: []string{sub}}, root)
	if err := boxed.Check(mustGrants("@network")); !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "@network") {
		t.Fatalf("network: %v", err)
	}
	if err := boxed.Check(mustGrants("@write:" + root)); !errors.Is(err, ErrDenied) {
		t.Fatalf("parent of its folder: %v", err)
	}
	if err := boxed.Check(mustGrants("@write:"+sub, "@read:*")); err != nil {
		t.Fatal(err)
	}
	if err := User().Check(mustGrants("@network", "@write:/")); err != nil {
		t.Fatal(err)
	}
}

func TestFileRoundTripAndStrictness(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent", FileName)
	g := Grants{Network: true, WriteDirs: []string{"/srv/x"}, Permissions: []string{"@network", "@write:/srv/x"}}
	if err := Save(path, g); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	back, err := Load(path)
	if err != nil || !Equal(&g, &back) {
		t.Fatalf("%+v %v", back, err)
	}
	for _, bad := range []string{``, `{`, `[]`, `{"network":true,"extra":1}`, `{"writeDirs":["rel"]}`,
		`{"writeDirs":["/a/../b"]}`, `{"network":"yes"}`, `{} {}`, `{"network":false}}`, `{}]`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) accepted", bad)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing file loaded")
	}
}

func TestSupportCheckSaysWhatIsMissing(t *testing.T) {
	full := Support{OS: "linux", Landlock: true, LandlockABI: 7, NetNS: true}
	if err := full.Check(Grants{}); err != nil || !full.Full() {
		t.Fatal(err)
	}
	noNS := Support{OS: "linux", Landlock: true, LandlockABI: 7, NetNSError: "userns off"}
	// The box's namespaces are needed with @network too: always a user
	// namespace, a read-only file system, Shepherd's folders hidden.
	if err := noNS.Check(Grants{Network: true}); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "userns off") {
		t.Fatalf("@network without namespaces: %v", err)
	}
	// With the network, abstract sockets are scoped by Landlock ABI 6.
	old := Support{OS: "linux", Landlock: true, LandlockABI: 5, NetNS: true}
	if err := old.Check(Grants{Network: true}); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "ABI 6") {
		t.Fatalf("@network on ABI 5: %v", err)
	}
	if err := old.Check(Grants{}); err != nil {
		t.Fatalf("no network on ABI 5 (the network namespace holds abstract sockets): %v", err)
	}
	if err := noNS.Check(Grants{}); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "userns off") {
		t.Fatal(err)
	}
	noLL := Support{OS: "linux", NetNS: true, LandlockError: "old kernel"}
	if err := noLL.Check(Grants{Network: true}); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "Landlock") {
		t.Fatal(err)
	}
	mac := Support{OS: "darwin", SeatbeltError: "gone"}
	if err := mac.Check(Grants{}); !errors.Is(err, ErrUnavailable) || !strings.Contains(mac.Summary(), "no sandbox-exec") {
		t.Fatal(err)
	}
	if err := (Support{OS: "plan9"}).Check(Grants{}); !errors.Is(err, ErrUnavailable) {
		t.Fatal(err)
	}
}

func TestSeatbeltProfile(t *testing.T) {
	p := SeatbeltProfile(Grants{WriteDirs: []string{"/Users/me/proj", `/tmp/we"ird`}}, "/Users/me/log", nil, nil)
	for _, want := range []string{"(version 1)", "(allow default)", "(deny file-write*)", `(subpath "/Users/me/proj")`,
		`(subpath "/tmp/we\"ird")`, `(literal "/Users/me/log")`, `(literal "/dev/null")`, "(deny network*)"} {
		if !strings.Contains(p, want) {
			t.Errorf("profile lacks %s:\n%s", want, p)
		}
	}
	// The deny of writes comes before the allows that open holes in it
	// (SBPL: the last matching rule wins).
	if strings.Index(p, "(deny file-write*)") > strings.Index(p, "(allow file-write*") {
		t.Error("allow before deny")
	}
	if strings.Contains(SeatbeltProfile(Grants{Network: true}, "", nil, nil), "(deny network*)") {
		t.Error("@network still denies the network")
	}
	hid := SeatbeltProfile(Grants{}, "", []string{"/Users/me/Library/Application Support/shepherd"}, nil)
	for _, want := range []string{"(deny file-read* file-write*\n  (subpath \"/Users/me/Library/Application Support/shepherd\")", "(deny signal)", "(deny ipc-sysv*)"} {
		if !strings.Contains(hid, want) {
			t.Errorf("profile lacks %q:\n%s", want, hid)
		}
	}
	if strings.Count(p, "(") != strings.Count(p, ")") {
		t.Errorf("unbalanced profile:\n%s", p)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"network":true,"writeDirs":["/a"],"permissions":["@network","@write:/a"]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"writeDirs":["/a/../b"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Decode(b)
		if err != nil {
			return
		}
		for _, d := range g.WriteDirs {
			if !filepath.IsAbs(d) || filepath.Clean(d) != d {
				t.Fatalf("accepted folder %q", d)
			}
		}
	})
}
