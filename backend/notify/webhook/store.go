package webhook

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/google/renameio/v2"
)

// FileName is the channels' file in the engine's data folder.
const FileName = "webhooks.json"

// ErrNotFound is the kind of an operation on a channel that does not exist.
var ErrNotFound = errors.New("no such webhook channel")

// MaxChannels is the most channels a file holds.
const MaxChannels = 32

// Store keeps the channels in a JSON file, written atomically and readable
// by its owner only (it holds secrets). Safe for concurrent use.
type Store struct {
	path string
	mu   sync.Mutex
}

// NewStore returns the store of the file at path (it need not exist).
func NewStore(path string) *Store { return &Store{path: path} }

type fileJSON struct {
	Channels []Channel `json:"channels"`
}

// List reads the channels. A missing file is no channels; a file that is
// not what Save writes is an error (never silently emptied).
func (s *Store) List() ([]Channel, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.load()
}

func (s *Store) load() ([]Channel, error) {
	b, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return []Channel{}, nil
	}
	if err != nil {
		return nil, err
	}
	var f fileJSON
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	if f.Channels == nil {
		f.Channels = []Channel{}
	}
	return f.Channels, nil
}

func (s *Store) save(chs []Channel) error {
	b, err := json.MarshalIndent(fileJSON{Channels: chs}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	return renameio.WriteFile(s.path, append(b, '\n'), 0o600, renameio.WithStaticPermissions(0o600))
}

// Add validates c, gives it a new id, and saves it. It returns the channel
// as saved.
func (s *Store) Add(c Channel) (Channel, error) {
	if err := c.Validate(); err != nil {
		return Channel{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	chs, err := s.load()
	if err != nil {
		return Channel{}, err
	}
	if len(chs) >= MaxChannels {
		return Channel{}, fmt.Errorf("%w: there are %d channels already, the most there may be", ErrInvalid, MaxChannels)
	}
	for _, o := range chs {
		if o.Name == c.Name {
			return Channel{}, fmt.Errorf("%w: a channel named %q exists already", ErrInvalid, c.Name)
		}
	}
	c.ID = newID()
	if err := s.save(append(chs, c)); err != nil {
		return Channel{}, err
	}
	return c, nil
}

// Update replaces the channel with c's id by c, validated.
func (s *Store) Update(c Channel) error {
	if err := c.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	chs, err := s.load()
	if err != nil {
		return err
	}
	at := -1
	for i, o := range chs {
		if o.ID == c.ID {
			at = i
		} else if o.Name == c.Name {
			return fmt.Errorf("%w: a channel named %q exists already", ErrInvalid, c.Name)
		}
	}
	if at < 0 {
		return fmt.Errorf("%w: %q", ErrNotFound, c.ID)
	}
	chs[at] = c
	return s.save(chs)
}

// Remove deletes the channel id.
func (s *Store) Remove(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	chs, err := s.load()
	if err != nil {
		return err
	}
	for i, o := range chs {
		if o.ID == id {
			return s.save(append(chs[:i], chs[i+1:]...))
		}
	}
	return fmt.Errorf("%w: %q", ErrNotFound, id)
}

// Get is the channel id.
func (s *Store) Get(id string) (Channel, error) {
	chs, err := s.List()
	if err != nil {
		return Channel{}, err
	}
	for _, c := range chs {
		if c.ID == id {
			return c, nil
		}
	}
	return Channel{}, fmt.Errorf("%w: %q", ErrNotFound, id)
}

func newID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "wh-" + hex.EncodeToString(b[:])
}
