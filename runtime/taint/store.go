package taint

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mcpform/mcpform/internal/lockedfile"
)

// DefaultDir returns $XDG_STATE_HOME/mcpform/taint, or
// ~/.local/state/mcpform/taint when XDG_STATE_HOME is unset (the audit log's
// directory, so one place holds what a run remembers).
func DefaultDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mcpform", "taint"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no taint state location: set XDG_STATE_HOME or HOME: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".local", "state", "mcpform", "taint"), nil
}

// Event is one source result that reached the client.
type Event struct {
	Time   time.Time `json:"time"`
	Server string    `json:"server"`
	// Source is the policy label that matched: a tool name, "resources:*"
	// or "prompts:*".
	Source string `json:"source"`
	// Item is the resource URI or prompt name for a wildcard source, else
	// the tool name again.
	Item string `json:"item"`
	// Digest is "sha256:…" of the result as the server sent it: enough to
	// find it in a transcript, without keeping attacker text around.
	Digest string `json:"digest"`
	PID    int    `json:"pid"`
}

// maxEvents bounds a session's file: the first event (when it all began)
// and the latest ones are kept.
const maxEvents = 100

// State is what the store knows about one session.
type State struct {
	Session string    `json:"session"`
	Created time.Time `json:"created"`
	Events  []Event   `json:"events"`
	// Dropped counts events left out between the first and the kept tail.
	Dropped int `json:"dropped,omitempty"`
	// Key is the session's requestState HMAC key; Used holds redeemed
	// requestState nonces until they expire (unix seconds).
	Key  []byte           `json:"key,omitempty"`
	Used map[string]int64 `json:"used,omitempty"`
}

// Tainted reports whether a source result reached the session's client.
func (s *State) Tainted() bool { return s != nil && len(s.Events) > 0 }

// First returns the event that tainted the session.
func (s *State) First() (Event, bool) {
	if !s.Tainted() {
		return Event{}, false
	}
	return s.Events[0], true
}

// Store is the directory of session files.
type Store struct {
	dir string
	now func() time.Time
}

// Open opens (creating it, private to the user) the store in dir. A
// directory that another user owns or others may enter is refused: taint
// state that someone else can rewrite would let them switch approvals off.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("taint state: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("taint state: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("taint state: %s is not a directory", dir)
	}
	if uid, ok := owner(fi); !ok || uid != os.Getuid() {
		return nil, fmt.Errorf("taint state: %s is not owned by the current user", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, fmt.Errorf("taint state: making %s private: %w", dir, err)
		}
	}
	return &Store{dir: dir, now: time.Now}, nil
}

// validSession reports whether name can be a session's file name: the
// characters SessionID uses, no leading dot, bounded.
func validSession(name string) bool {
	if name == "" || len(name) > 128 || name[0] == '.' || name[0] == '-' {
		return false
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}

func (s *Store) path(session string) (string, error) {
	if !validSession(session) {
		return "", fmt.Errorf("invalid session name %q", session)
	}
	return filepath.Join(s.dir, session+".json"), nil
}

// Get returns a session's state, or nil when it has none.
func (s *Store) Get(session string) (*State, error) {
	p, err := s.path(session)
	if err != nil {
		return nil, err
	}
	return readState(p)
}

func readState(p string) (*State, error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("taint state: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("taint state: %s is not a regular file", p)
	}
	if uid, ok := owner(fi); !ok || uid != os.Getuid() {
		return nil, fmt.Errorf("taint state: %s is not owned by the current user", p)
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // reset between Lstat and read
	}
	if err != nil {
		return nil, fmt.Errorf("taint state: %w", err)
	}
	var st State
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		// Fail closed: a damaged file is not "untainted".
		return nil, fmt.Errorf("taint state: %s is damaged (remove it with mcpform taint reset): %w", p, err)
	}
	return &st, nil
}

// update runs fn on a session's state (a fresh one when it has none) under
// the store's lock and writes the result atomically.
func (s *Store) update(session string, fn func(*State) error) error {
	return s.withSession(session, func(p string) error {
		st, err := readState(p)
		if err != nil {
			return err
		}
		if st == nil {
			st = &State{Session: session, Created: s.now().UTC()}
		}
		if err := fn(st); err != nil {
			return err
		}
		return s.write(p, st)
	})
}

// withSession runs fn on the path of a session's file under the store's
// lock; a session name that is not valid is an error before the lock.
func (s *Store) withSession(session string, fn func(p string) error) error {
	p, err := s.path(session)
	if err != nil {
		return err
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return fn(p)
}

// lock takes the store's exclusive lock, waiting for other run processes
// of any session: a lock file in the directory, so every run locks the
// same file.
func (s *Store) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(s.dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("taint state: %w", err)
	}
	if err := lockedfile.Lock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("taint state: locking: %w", err)
	}
	return func() {
		lockedfile.Unlock(f)
		f.Close()
	}, nil
}

// write replaces p atomically, so a reader without the lock sees the old
// file or the new one, never half of one.
func (s *Store) write(p string, st *State) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("taint state: %w", err)
	}
	if err := lockedfile.WriteFile(p, append(data, '\n'), 0o600, nil); err != nil {
		return fmt.Errorf("taint state: %w", err)
	}
	return nil
}

// Taint records that ev's result reached the session's client.
func (s *Store) Taint(session string, ev Event) error {
	if ev.Time.IsZero() {
		ev.Time = s.now()
	}
	ev.Time = ev.Time.UTC()
	if ev.PID == 0 {
		ev.PID = os.Getpid()
	}
	return s.update(session, func(st *State) error {
		st.Events = append(st.Events, ev)
		if n := len(st.Events); n > maxEvents {
			cut := n - maxEvents
			st.Events = append(st.Events[:1], st.Events[1+cut:]...)
			st.Dropped += cut
		}
		return nil
	})
}

// Key returns the session's requestState key, creating it on first use.
func (s *Store) Key(session string) ([]byte, error) {
	var key []byte
	err := s.update(session, func(st *State) error {
		if len(st.Key) != 32 {
			st.Key = make([]byte, 32)
			if _, err := rand.Read(st.Key); err != nil {
				return fmt.Errorf("taint state: %w", err)
			}
		}
		key = st.Key
		return nil
	})
	return key, err
}

// errReplayed is a requestState nonce that was already redeemed.
var errReplayed = errors.New("this approval was already used once")

// Redeem marks nonce used until expires; a nonce used before is
// errReplayed. Expired nonces are forgotten: their requestState is refused
// for its expiry anyway.
func (s *Store) Redeem(session, nonce string, expires time.Time) error {
	return s.update(session, func(st *State) error {
		now := s.now().Unix()
		for n, exp := range st.Used {
			if exp < now {
				delete(st.Used, n)
			}
		}
		if _, ok := st.Used[nonce]; ok {
			return errReplayed
		}
		if st.Used == nil {
			st.Used = map[string]int64{}
		}
		st.Used[nonce] = expires.Unix()
		return nil
	})
}

// List returns every session's state, sorted by session name. A damaged
// file is returned as an error after the readable ones.
func (s *Store) List() ([]*State, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("taint state: %w", err)
	}
	var out []*State
	var errs []error
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !validSession(name) {
			continue
		}
		st, err := readState(filepath.Join(s.dir, e.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if st != nil {
			out = append(out, st)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Session < out[j].Session })
	return out, errors.Join(errs...)
}

// Reset forgets a session: its taint, its key (so requestStates issued
// before no longer verify) and its redeemed nonces. Resetting a session
// that has no state is an error, so a mistyped name is not silently taken
// for success.
func (s *Store) Reset(session string) error {
	return s.withSession(session, func(p string) error {
		if err := os.Remove(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("no taint state for session %q (see mcpform taint list)", session)
			}
			return fmt.Errorf("taint state: %w", err)
		}
		return nil
	})
}

// ResetAll forgets every session and returns how many there were.
func (s *Store) ResetAll() (int, error) {
	unlock, err := s.lock()
	if err != nil {
		return 0, err
	}
	defer unlock()
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return 0, fmt.Errorf("taint state: %w", err)
	}
	n := 0
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !validSession(name) {
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, fmt.Errorf("taint state: %w", err)
		}
		n++
	}
	return n, nil
}
