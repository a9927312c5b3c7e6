// Package sshconfig resolves what the user typed for a host — an alias of
// their ~/.ssh/config, `user@host:port`, or `ssh://user@host:port` — into
// what to connect to, the way OpenSSH would: values given in the
// destination win, then the first value of the user's config, then the
// system's (github.com/kevinburke/ssh_config reads the files), then
// OpenSSH's defaults. It reads HostName, Port, User, IdentityFile,
// IdentitiesOnly, IdentityAgent, ProxyJump, UserKnownHostsFile,
// GlobalKnownHostsFile, HashKnownHosts and ConnectTimeout.
package sshconfig

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kevinburke/ssh_config"
)

// ErrBadDestination is returned for a destination that cannot be a host.
var ErrBadDestination = errors.New("bad SSH destination")

// ErrConfig is returned when an SSH config file cannot be read.
var ErrConfig = errors.New("cannot read the SSH config")

// Destination is a parsed destination: what the user typed.
type Destination struct {
	User string // "" unless given
	Host string // an alias or a host name
	Port int    // 0 unless given
}

// ParseDestination parses `ssh://[user@]host[:port]` or `[user@]host[:port]`
// (IPv6 addresses in brackets when a port follows).
func ParseDestination(s string) (Destination, error) {
	var d Destination
	if s == "" {
		return d, fmt.Errorf("%w: empty", ErrBadDestination)
	}
	if strings.HasPrefix(s, "ssh://") {
		u, err := url.Parse(s)
		if err != nil {
			return d, fmt.Errorf("%w %q: %v", ErrBadDestination, s, err)
		}
		if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
			return d, fmt.Errorf("%w %q: only ssh://[user@]host[:port] is understood", ErrBadDestination, s)
		}
		if _, ok := u.User.Password(); ok {
			return d, fmt.Errorf("%w %q: a password does not belong in the address (keys come from the SSH agent and ~/.ssh)", ErrBadDestination, s)
		}
		d.User = u.User.Username()
		d.Host = u.Hostname()
		if p := u.Port(); p != "" {
			n, err := parsePort(p)
			if err != nil {
				return d, fmt.Errorf("%w %q: %v", ErrBadDestination, s, err)
			}
			d.Port = n
		}
	} else {
		rest := s
		if i := strings.LastIndex(rest, "@"); i >= 0 {
			d.User, rest = rest[:i], rest[i+1:]
			if d.User == "" {
				return d, fmt.Errorf("%w %q: empty user", ErrBadDestination, s)
			}
		}
		d.Host = rest
		if h, p, err := net.SplitHostPort(rest); err == nil {
			n, err := parsePort(p)
			if err != nil {
				return d, fmt.Errorf("%w %q: %v", ErrBadDestination, s, err)
			}
			d.Host, d.Port = h, n
		} else if strings.HasPrefix(rest, "[") && strings.HasSuffix(rest, "]") {
			d.Host = rest[1 : len(rest)-1]
		}
	}
	if err := checkHost(d.Host); err != nil {
		return d, fmt.Errorf("%w %q: %v", ErrBadDestination, s, err)
	}
	if err := checkWord(d.User); err != nil {
		return d, fmt.Errorf("%w %q: user: %v", ErrBadDestination, s, err)
	}
	return d, nil
}

func parsePort(p string) (int, error) {
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", p)
	}
	return n, nil
}

// checkHost refuses what no host is called: empty, blanks or control
// characters, a leading dash (never an option to anything).
func checkHost(h string) error {
	if h == "" {
		return errors.New("no host")
	}
	if strings.HasPrefix(h, "-") {
		return errors.New("a host does not begin with '-'")
	}
	return checkWord(h)
}

func checkWord(s string) error {
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r == '/' || r == '\\' || r == '\'' || r == '"' || r == '`' {
			return fmt.Errorf("%q holds a character no host or user name has", s)
		}
	}
	return nil
}

// Target is a destination resolved through the config: what to dial.
type Target struct {
	Alias          string // the host as the user named it (config matching, %n)
	HostName       string
	Port           int
	User           string
	IdentityFiles  []string // absolute; empty: the default keys of ~/.ssh
	IdentitiesOnly bool     // only the identity files, not every key of the agent
	// IdentityAgent is the agent's socket: "" for $SSH_AUTH_SOCK, "none"
	// for no agent.
	IdentityAgent string
	// KnownHosts are the user's known_hosts files (accepted keys go to the
	// first); GlobalKnownHosts the system's (read only).
	KnownHosts       []string
	GlobalKnownHosts []string
	HashKnownHosts   bool
	// ProxyJump are the hops to go through, first to last (none: direct).
	ProxyJump      []Destination
	ConnectTimeout time.Duration // 0: none set
}

// Addr is host:port to dial.
func (t Target) Addr() string { return net.JoinHostPort(t.HostName, strconv.Itoa(t.Port)) }

// Env is where the config is read from and who the local user is.
type Env struct {
	Home       string // the local user's home (~ and %d)
	LocalUser  string // the local user's name (%u, and the default User)
	UserConfig string // "": Home/.ssh/config
	// SystemConfig is the system-wide config; "": /etc/ssh/ssh_config,
	// "-": none.
	SystemConfig string
}

// DefaultEnv is this process's user: $HOME, $USER (or the account's).
func DefaultEnv() (Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Env{}, fmt.Errorf("find your home folder: %w", err)
	}
	u := os.Getenv("USER")
	if u == "" {
		u = os.Getenv("LOGNAME")
	}
	return Env{Home: home, LocalUser: u}, nil
}

// Resolve resolves dest (a destination as ParseDestination reads it)
// through the user's and the system's SSH config.
func Resolve(dest string, env Env) (Target, error) {
	d, err := ParseDestination(dest)
	if err != nil {
		return Target{}, err
	}
	cfgs, err := env.load()
	if err != nil {
		return Target{}, err
	}
	return resolve(d, env, cfgs)
}

// files are the parsed configs, the user's first.
type files []*ssh_config.Config

func (env Env) load() (files, error) {
	user := env.UserConfig
	if user == "" {
		user = filepath.Join(env.Home, ".ssh", "config")
	}
	sys := env.SystemConfig
	if sys == "" {
		sys = "/etc/ssh/ssh_config"
	}
	var out files
	for _, f := range []string{user, sys} {
		if f == "-" {
			continue
		}
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w %s: %v", ErrConfig, f, err)
		}
		c, err := decode(b)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %v", ErrConfig, f, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// decode parses one config file; the library's panics (it has some for
// directives it does not support) become errors.
func decode(b []byte) (c *ssh_config.Config, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return ssh_config.DecodeBytes(b)
}

// get is the first value of key for alias in the user's config, then the
// system's.
func (fs files) get(alias, key string) (v string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrConfig, r)
		}
	}()
	for _, c := range fs {
		v, err := c.Get(alias, key)
		if err != nil {
			return "", fmt.Errorf("%w: %s: %v", ErrConfig, key, err)
		}
		if v != "" {
			return v, nil
		}
	}
	return "", nil
}

// all is every value of key for alias, the user's config's first.
func (fs files) all(alias, key string) (vs []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrConfig, r)
		}
	}()
	for _, c := range fs {
		v, err := c.GetAll(alias, key)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrConfig, key, err)
		}
		vs = append(vs, v...)
	}
	return vs, nil
}

func resolve(d Destination, env Env, fs files) (Target, error) {
	t := Target{Alias: d.Host, User: d.User, Port: d.Port}
	var errs []error
	val := func(key string) string {
		v, err := fs.get(d.Host, key)
		if err != nil {
			errs = append(errs, err)
		}
		return strings.TrimSpace(v)
	}
	t.HostName = d.Host
	if h := val("HostName"); h != "" {
		h = expand(h, tokens{'h': d.Host, 'n': d.Host, 'd': env.Home, 'u': env.LocalUser}, false)
		if err := checkHost(h); err != nil {
			errs = append(errs, fmt.Errorf("%w: HostName %q: %v", ErrConfig, h, err))
		}
		t.HostName = h
	}
	if t.Port == 0 {
		if p := val("Port"); p != "" {
			n, err := parsePort(p)
			if err != nil {
				errs = append(errs, fmt.Errorf("%w: Port: %v", ErrConfig, err))
			}
			t.Port = n
		} else {
			t.Port = 22
		}
	}
	if t.User == "" {
		t.User = val("User")
		if t.User == "" {
			t.User = env.LocalUser
		}
	}
	if t.User == "" {
		errs = append(errs, fmt.Errorf("%w: no user for %s: give user@%s", ErrBadDestination, d.Host, d.Host))
	} else if err := checkWord(t.User); err != nil {
		errs = append(errs, fmt.Errorf("%w: User: %v", ErrConfig, err))
	}
	tok := tokens{'h': t.HostName, 'n': d.Host, 'p': strconv.Itoa(t.Port), 'r': t.User, 'd': env.Home, 'u': env.LocalUser}
	ids, err := fs.all(d.Host, "IdentityFile")
	if err != nil {
		errs = append(errs, err)
	}
	for _, f := range ids {
		for _, w := range strings.Fields(f) {
			if strings.EqualFold(w, "none") {
				continue
			}
			t.IdentityFiles = appendNew(t.IdentityFiles, expand(w, tok, true))
		}
	}
	t.IdentitiesOnly = yes(val("IdentitiesOnly"))
	if a := val("IdentityAgent"); a != "" {
		switch {
		case strings.EqualFold(a, "none"):
			t.IdentityAgent = "none"
		case a == "SSH_AUTH_SOCK" || a == "$SSH_AUTH_SOCK":
		case strings.HasPrefix(a, "$"):
			t.IdentityAgent = os.Getenv(strings.TrimPrefix(a, "$"))
		default:
			t.IdentityAgent = expand(a, tok, true)
		}
	}
	t.KnownHosts = files2(val("UserKnownHostsFile"), tok, []string{"~/.ssh/known_hosts", "~/.ssh/known_hosts2"}, env.Home)
	t.GlobalKnownHosts = files2(val("GlobalKnownHostsFile"), tok, []string{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"}, env.Home)
	t.HashKnownHosts = yes(val("HashKnownHosts"))
	if s := val("ConnectTimeout"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("%w: ConnectTimeout %q is not a number of seconds", ErrConfig, s))
		}
		t.ConnectTimeout = time.Duration(n) * time.Second
	}
	if j := val("ProxyJump"); j != "" && !strings.EqualFold(j, "none") {
		for _, hop := range strings.Split(j, ",") {
			hd, err := ParseDestination(strings.TrimSpace(hop))
			if err != nil {
				errs = append(errs, fmt.Errorf("%w: ProxyJump: %v", ErrConfig, err))
				continue
			}
			t.ProxyJump = append(t.ProxyJump, hd)
		}
	}
	return t, errors.Join(errs...)
}

// ResolveHop resolves one ProxyJump hop through the same config (a hop is
// a destination of its own: its alias, user, port and keys).
func ResolveHop(hop Destination, env Env) (Target, error) {
	fs, err := env.load()
	if err != nil {
		return Target{}, err
	}
	t, err := resolve(hop, env, fs)
	// A hop's own ProxyJump is not followed: the chain is the target's.
	t.ProxyJump = nil
	return t, err
}

func yes(v string) bool { return strings.EqualFold(v, "yes") || strings.EqualFold(v, "true") }

func appendNew(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// files2 expands a list of files (space separated, "none" for none).
func files2(v string, tok tokens, def []string, home string) []string {
	words := strings.Fields(v)
	if len(words) == 0 {
		words = def
	}
	var out []string
	for _, w := range words {
		if strings.EqualFold(w, "none") {
			return nil
		}
		out = appendNew(out, expand(w, tok, true))
	}
	return out
}

type tokens map[byte]string

// expand replaces ssh_config's %-tokens (those of tok, and %%) and, when
// path is set, a leading ~ with the home folder (%d). An unknown token is
// left as it is.
func expand(s string, tok tokens, path bool) string {
	if path && (s == "~" || strings.HasPrefix(s, "~/")) {
		s = tok['d'] + s[1:]
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		c := s[i+1]
		if c == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		if v, ok := tok[c]; ok {
			b.WriteString(v)
			i++
			continue
		}
		b.WriteByte('%')
	}
	return b.String()
}
