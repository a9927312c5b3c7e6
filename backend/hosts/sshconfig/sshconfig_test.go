package sshconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseDestination(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Destination
		err  string
	}{
		{in: "box", want: Destination{Host: "box"}},
		{in: "ann@box", want: Destination{User: "ann", Host: "box"}},
		{in: "ann@box:2222", want: Destination{User: "ann", Host: "box", Port: 2222}},
		{in: "ssh://ann@box.example:2200", want: Destination{User: "ann", Host: "box.example", Port: 2200}},
		{in: "ssh://box", want: Destination{Host: "box"}},
		{in: "ssh://box/", want: Destination{Host: "box"}},
		{in: "ssh://ann@[::1]:22", want: Destination{User: "ann", Host: "::1", Port: 22}},
		{in: "[fe80::1]:2222", want: Destination{Host: "fe80::1", Port: 2222}},
		{in: "[fe80::1]", want: Destination{Host: "fe80::1"}},
		{in: "", err: "empty"},
		{in: "ssh://ann:secret@box", err: "password"},
		{in: "ssh://box/path", err: "only ssh://"},
		{in: "ssh://box:0", err: "port"},
		{in: "box:70000", err: "port"},
		{in: "@box", err: "empty user"},
		{in: "-oProxyCommand=x", err: "begin with '-'"},
		{in: "ssh://", err: "no host"},
		{in: "a b", err: "character"},
		{in: "ann@", err: "no host"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDestination(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrBadDestination) {
					t.Fatalf("ParseDestination(%q) = %+v, %v; want an error with %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseDestination(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func writeConfig(t *testing.T, home, body string) Env {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return Env{Home: home, LocalUser: "me", SystemConfig: "-"}
}

// The user's config is honoured the way OpenSSH reads it: an alias with
// HostName, Port, User and IdentityFile; the destination's own user and port
// win; the first value wins; tokens and ~ are expanded.
func TestResolve(t *testing.T) {
	home := t.TempDir()
	sys := filepath.Join(home, "ssh_config")
	if err := os.WriteFile(sys, []byte("Host *\n  Port 2022\n  GlobalKnownHostsFile /etc/ssh/mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := writeConfig(t, home, `
Host gpu
  HostName 10.0.0.7
  Port 2200
  User builder
  IdentityFile ~/.ssh/gpu_key
  IdentityFile %d/.ssh/second_%r
  IdentitiesOnly yes
  UserKnownHostsFile ~/.ssh/kh_%n
  HashKnownHosts yes
  ConnectTimeout 7
  ProxyJump jump@bastion:2201,ssh://hop2

Host *.corp
  HostName %h.internal
  IdentityAgent none

Host gpu
  User ignored
`)
	env.SystemConfig = sys
	for _, tc := range []struct {
		dest string
		want Target
	}{
		{dest: "gpu", want: Target{
			Alias: "gpu", HostName: "10.0.0.7", Port: 2200, User: "builder",
			IdentityFiles:  []string{home + "/.ssh/gpu_key", home + "/.ssh/second_builder"},
			IdentitiesOnly: true, KnownHosts: []string{home + "/.ssh/kh_gpu"}, GlobalKnownHosts: []string{"/etc/ssh/mine"},
			HashKnownHosts: true, ConnectTimeout: 7 * time.Second,
			ProxyJump: []Destination{{User: "jump", Host: "bastion", Port: 2201}, {Host: "hop2"}},
		}},
		{dest: "ssh://root@gpu:22", want: Target{
			Alias: "gpu", HostName: "10.0.0.7", Port: 22, User: "root",
			IdentityFiles:  []string{home + "/.ssh/gpu_key", home + "/.ssh/second_root"},
			IdentitiesOnly: true, KnownHosts: []string{home + "/.ssh/kh_gpu"}, GlobalKnownHosts: []string{"/etc/ssh/mine"},
			HashKnownHosts: true, ConnectTimeout: 7 * time.Second,
			ProxyJump: []Destination{{User: "jump", Host: "bastion", Port: 2201}, {Host: "hop2"}},
		}},
		{dest: "db.corp", want: Target{
			Alias: "db.corp", HostName: "db.corp.internal", Port: 2022, User: "me", IdentityAgent: "none",
			KnownHosts: []string{home + "/.ssh/known_hosts", home + "/.ssh/known_hosts2"}, GlobalKnownHosts: []string{"/etc/ssh/mine"},
		}},
	} {
		t.Run(tc.dest, func(t *testing.T) {
			got, err := Resolve(tc.dest, env)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Resolve(%q) (-want +got):\n%s", tc.dest, diff)
			}
		})
	}
	hop, err := ResolveHop(Destination{Host: "gpu"}, env)
	if err != nil || hop.HostName != "10.0.0.7" || hop.ProxyJump != nil {
		t.Errorf("ResolveHop: %+v %v", hop, err)
	}
}

// Without a config, OpenSSH's defaults apply.
func TestResolveDefaults(t *testing.T) {
	home := t.TempDir()
	got, err := Resolve("box", Env{Home: home, LocalUser: "me", SystemConfig: "-"})
	if err != nil {
		t.Fatal(err)
	}
	want := Target{Alias: "box", HostName: "box", Port: 22, User: "me",
		KnownHosts:       []string{home + "/.ssh/known_hosts", home + "/.ssh/known_hosts2"},
		GlobalKnownHosts: []string{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := Resolve("box", Env{Home: home, SystemConfig: "-"}); err == nil || !strings.Contains(err.Error(), "give user@box") {
		t.Errorf("no user at all: %v", err)
	}
}

// A config Shepherd cannot read is an error naming the file, never a
// silent connection to something else.
func TestResolveBadConfig(t *testing.T) {
	for _, tc := range []struct{ body, err string }{
		{"Match host x\n  User y\n", "Match"},
		{"Host x\n  Port eighty\n", "Port"},
		{"Host x\n  HostName -oops\n", "HostName"},
		{"Host x\n  ProxyJump ssh://a:b@c\n", "ProxyJump"},
		{"Host x\n  ConnectTimeout soon\n", "ConnectTimeout"},
	} {
		env := writeConfig(t, t.TempDir(), tc.body)
		_, err := Resolve("x", env)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("config %q: %v, want an error with %q", tc.body, err, tc.err)
		}
	}
}

func TestExpand(t *testing.T) {
	tok := tokens{'h': "host", 'd': "/home/me", 'r': "root"}
	for in, want := range map[string]string{
		"~/.ssh/id":   "/home/me/.ssh/id",
		"~":           "/home/me",
		"%d/x_%h_%r":  "/home/me/x_host_root",
		"100%%":       "100%",
		"%z stays":    "%z stays",
		"trailing %":  "trailing %",
		"~user/x":     "~user/x",
		"a~/b":        "a~/b",
		"%h%h":        "hosthost",
		"%%h":         "%h",
		"":            "",
		"%":           "%",
		"plain text.": "plain text.",
	} {
		if got := expand(in, tok, true); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseDestination(f *testing.F) {
	for _, s := range []string{"box", "ann@box:22", "ssh://ann@[::1]:2222", "ssh://a:b@c", "[x]:", "@", "ssh://%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDestination(s)
		if err != nil {
			return
		}
		if d.Host == "" || strings.HasPrefix(d.Host, "-") || d.Port < 0 || d.Port > 65535 {
			t.Fatalf("ParseDestination(%q) = %+v", s, d)
		}
		if strings.ContainsAny(d.Host+d.User, " \t\n\r'\"`/") {
			t.Fatalf("ParseDestination(%q) let through %+v", s, d)
		}
	})
}

// Any config file: an error or a target, never a panic, never a host or a
// user with blanks or a leading dash.
func FuzzResolve(f *testing.F) {
	f.Add("Host x\n  HostName y\n  Port 22\n  User u\n  IdentityFile ~/k\n  ProxyJump a,b\n")
	f.Add("Match all\n")
	f.Add("Host *\nInclude /nonexistent/*\n")
	f.Add("Host x\n\tHostName %h.%%.%d\n")
	home := f.TempDir()
	f.Fuzz(func(t *testing.T, body string) {
		if strings.Contains(strings.ToLower(body), "include") {
			return // reads this machine's files (/dev/zero would never end)
		}
		cfg, err := decode([]byte(body))
		if err != nil {
			return
		}
		tg, err := resolve(Destination{Host: "x"}, Env{Home: home, LocalUser: "me"}, files{cfg})
		if err != nil {
			return
		}
		if tg.HostName == "" || strings.HasPrefix(tg.HostName, "-") || strings.ContainsAny(tg.HostName+tg.User, " \t\n") || tg.Port < 1 || tg.Port > 65535 {
			t.Fatalf("config %q resolved to %+v", body, tg)
		}
	})
}
