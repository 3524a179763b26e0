package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"time"

	"github.com/mcpform/mcpform/policy"
)

// Marshal returns the lock's deterministic form: the format's key order,
// servers sorted by name, each list sorted by key, 2-space indentation and a
// trailing newline. lockfileVersion is 2 exactly when an entry is modern.
// Every entry must be sealed.
func Marshal(f *File) ([]byte, error) {
	version := 1
	names := make([]string, 0, len(f.Servers))
	for name, e := range f.Servers {
		if !ValidServerName(name) {
			return nil, fmt.Errorf("server name %q is not valid", name)
		}
		if e.Modern() {
			version = 2
		}
		names = append(names, name)
	}
	sort.Strings(names)
	w := &writer{}
	w.line(0, "{")
	w.line(1, `"lockfileVersion": %d,`, version)
	w.line(1, `"generator": %s,`, quote(f.Generator))
	if len(names) == 0 {
		w.line(1, `"servers": {}`)
	} else {
		w.line(1, `"servers": {`)
		for i, name := range names {
			if err := w.entry(name, f.Servers[name], i == len(names)-1); err != nil {
				return nil, fmt.Errorf("server %q: %w", name, err)
			}
		}
		w.line(1, "}")
	}
	w.line(0, "}")
	return w.buf.Bytes(), nil
}

type writer struct{ buf bytes.Buffer }

const indentUnit = "  "

func (w *writer) line(depth int, format string, args ...any) {
	for range depth {
		w.buf.WriteString(indentUnit)
	}
	fmt.Fprintf(&w.buf, format, args...)
	w.buf.WriteByte('\n')
}

// member writes `"key": <raw JSON, indented at depth>` followed by a comma
// unless last.
func (w *writer) member(depth int, key string, raw []byte, last bool) {
	for range depth {
		w.buf.WriteString(indentUnit)
	}
	w.buf.WriteString(quote(key))
	w.buf.WriteString(": ")
	w.indented(depth, raw)
	if !last {
		w.buf.WriteByte(',')
	}
	w.buf.WriteByte('\n')
}

// indented writes raw re-indented for depth, keeping number literals, key
// order and string escapes exactly as they are.
func (w *writer) indented(depth int, raw []byte) {
	prefix := ""
	for range depth {
		prefix += indentUnit
	}
	if err := json.Indent(&w.buf, raw, prefix, indentUnit); err != nil {
		// Every raw value was validated when the entry was built.
		panic(fmt.Sprintf("lock: indenting a validated value: %v", err))
	}
}

func (w *writer) list(depth int, key string, items []Item, last bool) {
	if len(items) == 0 {
		w.member(depth, key, []byte("[]"), last)
		return
	}
	w.line(depth, "%s: [", quote(key))
	for i, it := range items {
		for range depth + 1 {
			w.buf.WriteString(indentUnit)
		}
		w.indented(depth+1, it.JSON)
		if i < len(items)-1 {
			w.buf.WriteByte(',')
		}
		w.buf.WriteByte('\n')
	}
	closing := "]"
	if !last {
		closing = "],"
	}
	w.line(depth, "%s", closing)
}

func (w *writer) entry(name string, e *Entry, last bool) error {
	if e.Digests.Surface == "" {
		return errors.New("entry is not sealed")
	}
	const d = 3
	w.line(2, "%s: {", quote(name))
	w.member(d, "command", mustJSON(e.Command), false)
	w.member(d, "envPassthrough", mustJSON(nonNil(e.EnvPassthrough)), false)
	w.member(d, "protocolVersion", mustJSON(e.ProtocolVersion), false)
	if e.Modern() {
		w.member(d, "supportedVersions", mustJSON(e.SupportedVersions), false)
	}
	w.member(d, "serverInfo", e.ServerInfo, false)
	w.member(d, "instructions", mustJSON(e.Instructions), false)
	w.member(d, "capabilities", e.Capabilities, false)
	for _, k := range Kinds {
		w.list(d, k.Field(), e.List(k), false)
	}
	var limits *policy.Limits
	if e.Policy != nil && e.Policy.Sandbox != nil {
		limits = e.Policy.Sandbox.Limits
	}
	hasPolicy, hasSettings := !e.Policy.IsEmpty(), e.Mcpform != nil && !e.Mcpform.isEmpty() || limits != nil
	w.line(d, `"digests": {`)
	w.line(d+1, `"surface": %s,`, quote(e.Digests.Surface))
	w.member(d+1, "instructions", mustJSON(e.Digests.Instructions), false)
	for i, k := range Kinds {
		w.member(d+1, k.Field(), mustJSON(nonNilMap(e.Digests.digestMap(k))), i == len(Kinds)-1)
	}
	if hasPolicy || hasSettings {
		w.line(d, "},")
	} else {
		w.line(d, "}")
	}
	if hasPolicy {
		// The sandbox's limits are mcpform's alone: they go under the
		// "mcpform" key, and the policy stays the shared format's.
		p := e.Policy.Normalized()
		if p.Sandbox != nil {
			p.Sandbox.Limits = nil
		}
		w.member(d, "policy", mustJSON(p), !hasSettings)
	}
	if hasSettings {
		doc := struct {
			*Settings
			SandboxLimits *policy.Limits `json:"sandboxLimits,omitempty"`
		}{e.Mcpform, limits}
		if doc.Settings == nil {
			doc.Settings = &Settings{}
		}
		w.member(d, "mcpform", mustJSON(doc), true)
	}
	if last {
		w.line(2, "}")
	} else {
		w.line(2, "},")
	}
	return nil
}

func (s *Settings) isEmpty() bool {
	return s.Version == "" && len(s.Tools) == 0 && s.ClientCapabilities == nil && s.Protocol == "" && s.Timeout == ""
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// mustJSON marshals values whose types cannot fail to marshal. Map keys are
// sorted by encoding/json; HTML escaping is off so that text reads as written.
func mustJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("lock: marshaling %T: %v", v, err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func quote(s string) string { return string(mustJSON(s)) }

// Save writes f to path atomically (a temporary file in the same directory,
// fsync, rename, fsync of the directory) under an advisory lock on the
// directory, so a crash never leaves a half-written lock and two writers
// never interleave. Under the same lock it first removes the temporary files
// that writers killed mid-write left behind.
func Save(path string, f *File) error {
	return Update(path, func([]byte) (*File, error) { return f, nil })
}

// Update runs fn with the current bytes of the lock at path (nil when there
// is none) while holding the directory's advisory lock, and saves the file
// fn returns. When fn fails, nothing is written. apply uses it to refuse a
// plan made against a lock that has changed since.
func Update(path string, fn func(current []byte) (*File, error)) error {
	return update(path, fn, -1, nil)
}

// ErrLocked is returned by UpdateWait when another writer held the lock's
// directory lock for longer than the wait.
var ErrLocked = errors.New("another mcpform is writing the lock")

// UpdateWait is Update waiting at most wait for the directory's lock (0:
// one attempt, as terraform's -lock-timeout=0s): if another writer holds it
// that long, nothing is written and the error wraps ErrLocked. A negative
// wait waits for as long as it takes, as Update.
func UpdateWait(path string, wait time.Duration, fn func(current []byte) (*File, error)) error {
	return update(path, fn, wait, nil)
}

// update is UpdateWait with a test hook: beforeRename, when not nil, is
// called with the temporary file's name once it is written, synced and
// closed, just before the rename, so a test can kill the writer there.
func update(path string, fn func(current []byte) (*File, error), wait time.Duration, beforeRename func(tmp string)) error {
	dir := filepath.Dir(path)
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("opening the lock's directory: %w", err)
	}
	defer d.Close()
	unlock, err := waitLockDir(d, wait)
	if err != nil {
		return fmt.Errorf("locking %s: %w", dir, err)
	}
	defer unlock()

	current, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading the current lock: %w", err)
	}
	f, err := fn(current)
	if err != nil {
		return err
	}
	data, err := Marshal(f)
	if err != nil {
		return err
	}
	return writeAtomic(d, path, data, beforeRename)
}

// waitLockDir takes d's lock, waiting at most wait (negative: without a
// bound). The lock is held only while a writer reads, writes and renames,
// so polling every few milliseconds costs nothing and finds it free soon
// after it is.
func waitLockDir(d *os.File, wait time.Duration) (unlock func(), err error) {
	if wait < 0 {
		return lockDir(d)
	}
	deadline := time.Now().Add(wait)
	pause := 5 * time.Millisecond
	for {
		unlock, held, err := tryLockDir(d)
		if err != nil || !held {
			return unlock, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			if wait == 0 {
				return nil, ErrLocked
			}
			return nil, fmt.Errorf("%w (waited %s)", ErrLocked, wait)
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, 100*time.Millisecond)
	}
}

func writeAtomic(dir *os.File, path string, data []byte, beforeRename func(tmp string)) (err error) {
	removeStaleTemps(path)
	tmp, err := os.CreateTemp(filepath.Dir(path), tempPrefix(path)+"*")
	if err != nil {
		return fmt.Errorf("creating a temporary lock file: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp.Name(), err)
	}
	if beforeRename != nil {
		beforeRename(tmp.Name())
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	if err = syncDir(dir); err != nil {
		return fmt.Errorf("syncing the lock's directory: %w", err)
	}
	return nil
}

// tempPrefix is how the names of path's temporary files begin; os.CreateTemp
// ends each with a random decimal number.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// isTempName reports whether name is one of path's temporary files: the
// prefix and then only decimal digits, as os.CreateTemp makes them.
func isTempName(path, name string) bool {
	suffix, ok := strings.CutPrefix(name, tempPrefix(path))
	if !ok || suffix == "" {
		return false
	}
	for i := 0; i < len(suffix); i++ {
		if suffix[i] < '0' || suffix[i] > '9' {
			return false
		}
	}
	return true
}

// removeStaleTemps removes the temporary files of path that a writer killed
// mid-write left in path's directory. It must be called holding the
// directory's lock: every writer holds that lock from before it creates its
// temporary file until the file is renamed or removed, so any such file
// found under the lock belongs to no live writer. Only regular files whose
// names match isTempName are touched. Removal is best effort: a stale file
// that cannot be removed is never read as the lock, and the write that
// follows goes ahead (and fails on its own if the directory is not writable).
func removeStaleTemps(path string) {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Type().IsRegular() && isTempName(path, e.Name()) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
