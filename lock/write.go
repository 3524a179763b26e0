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
	"time"

	"github.com/mcpform/mcpform/internal/lockedfile"
	"github.com/mcpform/mcpform/policy"
)

// Marshal returns the lock's deterministic form: the format's key order,
// servers sorted by name, each list sorted by key, 2-space indentation and a
// trailing newline. lockfileVersion is 3 when an entry is remote, else 2
// exactly when an entry is modern. Every entry gets an "mcpform" key whose
// first member is its configDigest, computed from the entry's values as
// written (ComputeConfigDigest; Entry.ConfigDigest is not read).
// Every entry must be sealed.
func Marshal(f *File) ([]byte, error) {
	version := 1
	names := make([]string, 0, len(f.Servers))
	for name, e := range f.Servers {
		if !validServerName(name) {
			return nil, fmt.Errorf("server name %q is not valid", name)
		}
		if e.Modern() {
			version = max(version, 2)
		}
		if e.Remote != nil {
			version = 3
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
	if e.Remote != nil {
		w.member(d, "remote", mustJSON(e.Remote), false)
	} else {
		w.member(d, "command", mustJSON(e.Command), false)
		w.member(d, "envPassthrough", mustJSON(nonNil(e.EnvPassthrough)), false)
	}
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
	w.line(d, `"digests": {`)
	w.line(d+1, `"surface": %s,`, quote(e.Digests.Surface))
	w.member(d+1, "instructions", mustJSON(e.Digests.Instructions), false)
	for i, k := range Kinds {
		w.member(d+1, k.Field(), mustJSON(nonNilMap(e.Digests.digestMap(k))), i == len(Kinds)-1)
	}
	w.line(d, "},")
	if pol := e.writtenPolicy(); pol != nil {
		w.member(d, "policy", pol, false)
	}
	cd, err := e.ComputeConfigDigest()
	if err != nil {
		return err
	}
	w.member(d, "mcpform", e.writtenSettings(cd), true)
	if last {
		w.line(2, "}")
	} else {
		w.line(2, "},")
	}
	return nil
}

// writtenPolicy is the entry's "policy" member as the writer writes it,
// nil when the entry has none. The sandbox's limits are mcpform's alone:
// they go under the "mcpform" key, and the policy stays the shared
// format's.
func (e *Entry) writtenPolicy() []byte {
	if e.Policy.IsEmpty() {
		return nil
	}
	p := e.Policy.Normalized()
	if p.Sandbox != nil {
		p.Sandbox.Limits = nil
	}
	return mustJSON(p)
}

// writtenSettings is the entry's "mcpform" member as the writer writes
// it: configDigest first (left out when configDigest is ""), then the
// settings, then the sandbox's limits.
func (e *Entry) writtenSettings(configDigest string) []byte {
	var limits *policy.Limits
	if e.Policy != nil && e.Policy.Sandbox != nil {
		limits = e.Policy.Sandbox.Limits
	}
	doc := struct {
		ConfigDigest string `json:"configDigest,omitempty"`
		*Settings
		SandboxLimits *policy.Limits `json:"sandboxLimits,omitempty"`
	}{configDigest, e.Mcpform, limits}
	if doc.Settings == nil {
		doc.Settings = &Settings{}
	}
	return mustJSON(doc)
}

// ComputeConfigDigest returns the digest mcpform.configDigest holds for
// the entry's values as they are now: Digest (RFC 8785, SHA-256) of the
// object
//
//	{"command": …, "envPassthrough": …}  (a local server) or {"remote": …}
//	+ "policy": …                          (when the entry has one)
//	+ "mcpform": {…}                       (always)
//
// whose members are exactly the entry's members of those names as the
// writer writes them, "mcpform" without configDigest ({} when it holds
// nothing else). It covers everything of an entry the surface digests
// leave out: what runs, with which environment, under which policy and
// settings.
func (e *Entry) ComputeConfigDigest() (string, error) {
	var b bytes.Buffer
	member := func(key string, raw []byte) {
		if b.Len() == 0 {
			b.WriteByte('{')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(quote(key))
		b.WriteByte(':')
		b.Write(raw)
	}
	if e.Remote != nil {
		member("remote", mustJSON(e.Remote))
	} else {
		member("command", mustJSON(e.Command))
		member("envPassthrough", mustJSON(nonNil(e.EnvPassthrough)))
	}
	if pol := e.writtenPolicy(); pol != nil {
		member("policy", pol)
	}
	member("mcpform", e.writtenSettings(""))
	b.WriteByte('}')
	d, err := Digest(b.Bytes())
	if err != nil {
		return "", fmt.Errorf("computing the configDigest: %w", err)
	}
	return d, nil
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
	return update(path, func([]byte) (*File, error) { return f, nil }, -1, nil)
}

// ErrLocked is returned by UpdateWait when another writer held the lock's
// directory lock for longer than the wait.
var ErrLocked = errors.New("another mcpform is writing the lock")

// UpdateWait runs fn with the current bytes of the lock at path (nil when
// there is none) while holding the directory's advisory lock, and saves
// the file fn returns. When fn fails, nothing is written. apply uses it to
// refuse a plan made against a lock that has changed since.
//
// It waits at most wait for the directory's lock (0: one attempt, as
// terraform's -lock-timeout=0s; negative: for as long as it takes): if
// another writer holds it that long, nothing is written and the error
// wraps ErrLocked.
func UpdateWait(path string, wait time.Duration, fn func(current []byte) (*File, error)) error {
	return update(path, fn, wait, nil)
}

// update is UpdateWait with a test hook: beforeRename, when not nil, is
// called with the temporary file's name once it is written, synced and
// closed, just before the rename, so a test can kill the writer there.
//
// The directory's lock (lockedfile.OpenDir: the directory itself on Unix,
// so no lock file is left behind; on Windows a small file beside mcp.lock,
// whose name is not a temporary file's) is held from before the read until
// the new lock is in place. The kernel drops it when a writer dies, so a
// temporary file seen under it is stale and removed first.
func update(path string, fn func(current []byte) (*File, error), wait time.Duration, beforeRename func(tmp string)) error {
	dir := filepath.Dir(path)
	d, err := lockedfile.OpenDir(dir, ".mcp.lock.flock")
	if err != nil {
		return fmt.Errorf("opening the lock's directory: %w", err)
	}
	defer d.Close()
	if err := waitLock(d, wait); err != nil {
		return fmt.Errorf("locking %s: %w", dir, err)
	}
	defer lockedfile.Unlock(d)

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
	lockedfile.RemoveTemps(path)
	return lockedfile.WriteFile(path, data, 0o644, beforeRename)
}

// waitLock takes d's lock, waiting at most wait (negative: without a
// bound). The lock is held only while a writer reads, writes and renames,
// so polling every few milliseconds costs nothing and finds it free soon
// after it is.
func waitLock(d *os.File, wait time.Duration) error {
	if wait < 0 {
		return lockedfile.Lock(d)
	}
	deadline := time.Now().Add(wait)
	pause := 5 * time.Millisecond
	for {
		ok, err := lockedfile.TryLock(d)
		if err != nil || ok {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			if wait == 0 {
				return ErrLocked
			}
			return fmt.Errorf("%w (waited %s)", ErrLocked, wait)
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, 100*time.Millisecond)
	}
}
