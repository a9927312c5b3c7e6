// Package registry is the list of hosts the user added (SPEC "Hosts"): a
// JSON file in the engine's data folder, rewritten atomically on every
// change. It holds names and addresses only — never a token or a key.
package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/google/renameio/v2"

	"shepherd/backend/hosts/sshconfig"
)

var (
	// ErrNotFound: no host of that name.
	ErrNotFound = errors.New("host not found")
	// ErrExists: a host of that name is there already.
	ErrExists = errors.New("host already exists")
	// ErrBadName: a host's name must be a short word.
	ErrBadName = errors.New("bad host name")
)

// FileName is the registry's file in the data folder.
const FileName = "hosts.json"

// Host is one host the user added.
type Host struct {
	Name string `json:"name"`
	// URL is where it is reached: ssh://user@host[:port], user@host or an
	// alias of ~/.ssh/config, as the user gave it.
	URL     string    `json:"url"`
	AddedAt time.Time `json:"addedAt"`
}

// CheckName refuses a name that would not do as one path segment and a
// word on a command line: 1 to 32 of a-z, 0-9, '-' and '_', starting with
// a letter or digit.
func CheckName(name string) error {
	if name == "" || len(name) > 32 {
		return fmt.Errorf("%w %q: 1 to 32 characters", ErrBadName, name)
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || (i > 0 && (r == '-' || r == '_'))
		if !ok {
			return fmt.Errorf("%w %q: lowercase letters, digits, '-' and '_' (not first)", ErrBadName, name)
		}
	}
	return nil
}

// CheckURL refuses an address the SSH provider could not read.
func CheckURL(url string) error {
	_, err := sshconfig.ParseDestination(url)
	return err
}

// File is the registry on disk.
type File struct {
	Path string
	mu   sync.Mutex
}

type doc struct {
	Hosts []Host `json:"hosts"`
}

// List reads the hosts, by name. A missing file is no hosts.
func (f *File) List() ([]Host, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.read()
}

func (f *File) read() ([]Host, error) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var d doc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	var out []Host
	for _, h := range d.Hosts {
		if CheckName(h.Name) == nil && CheckURL(h.URL) == nil {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *File) write(hs []Host) error {
	if hs == nil {
		hs = []Host{}
	}
	b, err := json.MarshalIndent(doc{hs}, "", "  ")
	if err != nil {
		return err
	}
	return renameio.WriteFile(f.Path, append(b, '\n'), 0o600, renameio.WithStaticPermissions(0o600))
}

// Add adds h (its name and URL checked).
func (f *File) Add(h Host) error {
	if err := CheckName(h.Name); err != nil {
		return err
	}
	if err := CheckURL(h.URL); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	hs, err := f.read()
	if err != nil {
		return err
	}
	for _, o := range hs {
		if o.Name == h.Name {
			return fmt.Errorf("%w: %q (%s)", ErrExists, h.Name, o.URL)
		}
	}
	return f.write(append(hs, h))
}

// Remove removes the host named name.
func (f *File) Remove(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	hs, err := f.read()
	if err != nil {
		return err
	}
	for i, o := range hs {
		if o.Name == name {
			return f.write(append(hs[:i:i], hs[i+1:]...))
		}
	}
	return fmt.Errorf("%w: %q", ErrNotFound, name)
}
