package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpform/mcpform/internal/jsonscan"
	"github.com/mcpform/mcpform/internal/mutation"
	"github.com/mcpform/mcpform/internal/strictjson"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
)

// The audit log is JSON lines. Each record carries "prev", the hash of the
// record before it ("" for the first line), and ends with "hash", the digest
// of the record itself without its hash member:
//
//	{"time":…,"session":…,"server":…,"pid":…,"event":…,…,"prev":"sha256:…","hash":"sha256:…"}
//
// hash = sha256 of the line with `,"hash":"…"` cut out, so a changed byte
// anywhere in a line breaks that line's hash (and a hash rewritten to match
// breaks the next line's prev), and a removed, inserted or reordered line
// breaks the next line's prev. One digest per record. Several run processes append
// to one file: each append happens under an exclusive flock on the file,
// with O_APPEND, after reading the current last line.

// DefaultPath returns $XDG_STATE_HOME/mcpform/audit.jsonl, or
// ~/.local/state/mcpform/audit.jsonl when XDG_STATE_HOME is unset.
func DefaultPath(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mcpform", "audit.jsonl"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no audit log location: set XDG_STATE_HOME or HOME, or pass -audit: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".local", "state", "mcpform", "audit.jsonl"), nil
}

// Log appends hash-chained records to one file.
type Log struct {
	mu      sync.Mutex
	batch   *recordBatch // records waiting for the writing goroutine
	writing bool
	idle    *sync.Cond // signalled when writing ends
	closed  bool
	timer   *time.Timer // appends queued records nothing committed
	// failed is the first failed append: records may have been lost with
	// it, so every later write and commit fails too (whoever appended).
	failed error

	f    *os.File
	path string
	// size and last describe the file as this process last left it: when
	// the size is unchanged at the next append, no other process wrote,
	// and the previous line's digest is known without reading.
	size int64
	last string
	buf  []byte
	pid  int
}

// Open opens (creating it and its directory, private to the user) the
// audit log at path for appending.
func Open(path string) (*Log, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	a := &Log{f: f, path: path, size: -1, pid: os.Getpid()}
	a.idle = sync.NewCond(&a.mu)
	return a, nil
}

// Path returns the file's path.
func (a *Log) Path() string { return a.path }

// errClosed is a record written after Close.
var errClosed = errors.New("audit log: already closed")

// Close writes what is held back, waits for a write under way, and closes
// the file; later writes fail.
func (a *Log) Close() error {
	err := a.Flush()
	a.mu.Lock()
	for a.writing {
		a.idle.Wait()
	}
	if a.closed {
		a.mu.Unlock()
		return err
	}
	a.closed = true
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
	a.mu.Unlock()
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Record is one audit event. Strings are written as JSON strings (control
// characters escaped); argument values never appear, only their digests.
type Record struct {
	Session string
	Server  string
	Event   string // start, drift, quarantine, request, result, deny, exit
	Method  string
	ID      string      // the client's request id, as on the wire
	Item    string      // the tool or prompt name, or the resource URI
	Args    []ArgDigest // sorted by name
	Outcome string
	Detail  string
}

// ArgDigest is one argument of a call as the audit log holds it: its name
// and the digest of its value.
type ArgDigest struct {
	Name, Digest string
}

// ArgDigests returns the digest of each argument value of the JSON object
// args ("sha256:…" of its RFC 8785 form), sorted by name, for Record.Args.
func ArgDigests(args json.RawMessage) []ArgDigest {
	sc, ok := jsonscan.ScanObject(args)
	if !ok {
		return nil
	}
	var out []ArgDigest
	for m, ok := sc.Next(); ok; m, ok = sc.Next() {
		name, _ := jsonscan.String(m.Key)
		d, err := lock.DigestStrict(m.Value) // the request passed the strict check
		if err != nil {
			d = "invalid"
		}
		out = append(out, ArgDigest{name, d})
	}
	slices.SortFunc(out, func(a, b ArgDigest) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Write appends rec, with every record queued before it. It returns only
// once the lines are in the file (not necessarily on disk). The proxy's
// per-request records go through Queue instead, and are appended by the
// writers' Commit before anything they caused leaves.
//
// Writers combine: one that finds no write under way writes at once; records
// that arrive meanwhile are chained and written together by it next, in one
// lock, one check of the file's end and one write, and their writers wait
// for that. Alone a record costs nothing extra; 64 at once cost one append.
func (a *Log) Write(rec *Record) error {
	a.mu.Lock()
	return a.writeLocked(rec)
}

// writeLocked is Write with a.mu held; it unlocks a.mu.
func (a *Log) writeLocked(rec *Record) error {
	if a.failed != nil {
		err := a.failed
		a.mu.Unlock()
		return err
	}
	if a.closed {
		lost := rec != nil || a.batch != nil // queued after Close's flush
		a.mu.Unlock()
		if lost {
			return errClosed
		}
		return nil
	}
	if rec == nil && a.batch == nil && !a.writing {
		a.mu.Unlock()
		return nil // nothing to flush
	}
	if a.batch == nil {
		a.batch = &recordBatch{done: make(chan struct{})}
	}
	mine := a.batch
	if rec != nil {
		mine.recs = append(mine.recs, rec)
	}
	// An armed flush timer stays armed (it finds nothing to write, or
	// what Queue added since): stopping and re-arming a timer on every
	// call woke the network poller twice per request.
	if a.writing {
		a.mu.Unlock()
		<-mine.done
		return mine.err
	}
	a.writing = true
	for a.batch != nil {
		b := a.batch
		a.batch = nil
		a.mu.Unlock()
		b.err = a.writeBatch(b.recs)
		close(b.done)
		a.mu.Lock()
		if b.err != nil && a.failed == nil {
			a.failed = b.err
		}
	}
	a.writing = false
	a.idle.Broadcast()
	a.mu.Unlock()
	return mine.err
}

// Queue queues rec, which must be in the log before its effect: Commit (or
// any Write) appends it. The proxy commits before any line leaves it (the
// before hook of its writers), so a burst of requests costs one append, not
// one each, and each still precedes its effect: a request what it sends to
// the server, an outcome the answer the client gets. A record nothing
// commits is appended within laterDelay.
func (a *Log) Queue(rec *Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failed != nil {
		return a.failed
	}
	if a.closed {
		return errClosed
	}
	if a.batch == nil {
		a.batch = &recordBatch{done: make(chan struct{})}
	}
	a.batch.recs = append(a.batch.recs, rec)
	if a.timer == nil {
		a.timer = time.AfterFunc(laterDelay, func() {
			a.mu.Lock()
			a.timer = nil
			a.mu.Unlock()
			_ = a.Write(nil)
		})
	}
	return nil
}

// Commit appends the records Queue queued (with the others waiting) and
// waits for a write under way; with nothing waiting it does nothing. (Only
// Queue leaves a batch behind when no write is under way: Write writes its
// own.)
func (a *Log) Commit() error {
	a.mu.Lock()
	if a.failed == nil && !a.writing && a.batch == nil {
		a.mu.Unlock()
		return nil
	}
	return a.writeLocked(nil)
}

// laterDelay bounds how long a queued record waits for a commit.
const laterDelay = 20 * time.Millisecond

// FlushBacklog writes the queued records when at least n wait.
func (a *Log) FlushBacklog(n int) error {
	a.mu.Lock()
	if a.batch == nil || len(a.batch.recs) < n {
		a.mu.Unlock()
		return nil
	}
	return a.writeLocked(nil)
}

// Flush writes every queued record.
func (a *Log) Flush() error { return a.Write(nil) }

type recordBatch struct {
	recs []*Record
	done chan struct{}
	err  error
}

// writeBatch appends recs, chained, under the file lock. Only the writing
// goroutine calls it.
func (a *Log) writeBatch(recs []*Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := lockFile(a.f); err != nil {
		return fmt.Errorf("audit log: locking %s: %w", a.path, err)
	}
	defer unlockFile(a.f)
	size, err := fileSize(a.f)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	prev, newline := a.last, false
	if size != a.size {
		prev, newline, err = a.tail(size)
		if err != nil {
			return fmt.Errorf("audit log: reading its last line: %w", err)
		}
	}
	b := a.buf[:0]
	if newline {
		// A torn last line (a crash mid-write) is closed off, so it stays
		// one broken record for verify to name instead of spoiling ours.
		b = append(b, '\n')
	}
	for _, rec := range recs {
		start := len(b)
		if mutation.Off("auditchain") {
			prev = ""
		}
		b = appendRecord(b, rec, a.pid, prev)
		sum := sha256.Sum256(append(b[start:], '}'))
		b = append(b, `,"hash":`...)
		hashAt := len(b)
		b = append(b, `"sha256:`...)
		b = hex.AppendEncode(b, sum[:])
		b = append(b, '"')
		prev = string(b[hashAt+1 : len(b)-1])
		b = append(b, "}\n"...)
	}
	if cap(b) <= 1<<20 {
		a.buf = b
	}
	if err := appendAll(a.f, b); err != nil {
		a.size = -1
		return fmt.Errorf("audit log: writing %s: %w", a.path, err)
	}
	a.size = size + int64(len(b))
	a.last = prev
	return nil
}

func appendRecord(b []byte, r *Record, pid int, prev string) []byte {
	str := func(key, v string) {
		if v == "" {
			return
		}
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		b = mcp.AppendQuoted(b, v)
	}
	b = append(b, `{"time":"`...)
	b = time.Now().UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	str("session", r.Session)
	str("server", r.Server)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	str("event", r.Event)
	str("method", r.Method)
	str("id", r.ID)
	str("item", r.Item)
	if len(r.Args) > 0 {
		b = append(b, `,"args":{`...)
		for i, a := range r.Args {
			if i > 0 {
				b = append(b, ',')
			}
			b = mcp.AppendQuoted(b, a.Name)
			b = append(b, ':')
			b = mcp.AppendQuoted(b, a.Digest)
		}
		b = append(b, '}')
	}
	str("outcome", r.Outcome)
	str("detail", r.Detail)
	b = append(b, `,"prev":`...)
	return mcp.AppendQuoted(b, prev)
}

func lineDigest(line []byte) string {
	sum := sha256.Sum256(line)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// tail reads the file's last line and returns its hash (the digest of the
// whole line when it has none: it is broken, and verify says so), and
// whether the file ends without a newline.
func (a *Log) tail(size int64) (string, bool, error) {
	if size == 0 {
		return "", false, nil
	}
	end := size
	var last [1]byte
	if _, err := a.f.ReadAt(last[:], size-1); err != nil {
		return "", false, err
	}
	torn := last[0] != '\n'
	if !torn {
		end--
	}
	// Read backwards in growing chunks until the line's start is found.
	var line []byte
	for chunk := int64(4096); ; chunk *= 4 {
		start := max(end-chunk, 0)
		buf := make([]byte, end-start)
		if _, err := a.f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
			return "", false, err
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			line = buf[i+1:]
			break
		}
		if start == 0 {
			line = buf
			break
		}
	}
	if h, ok := recordHash(line); ok {
		return h, torn, nil
	}
	return lineDigest(line), torn, nil
}

// hashSuffixLen is the length of a record's end: `,"hash":"sha256:<64 hex>"}`.
const hashSuffixLen = len(`,"hash":"sha256:`) + 64 + len(`"}`)

// recordHash returns the "hash" member a record ends with.
func recordHash(line []byte) (string, bool) {
	if len(line) < hashSuffixLen || !bytes.HasPrefix(line[len(line)-hashSuffixLen:], []byte(`,"hash":"sha256:`)) || !bytes.HasSuffix(line, []byte(`"}`)) {
		return "", false
	}
	return string(line[len(line)-hashSuffixLen+len(`,"hash":"`) : len(line)-2]), true
}

// ChainError names the first record of an audit log that breaks the chain.
type ChainError struct {
	Line int
	Msg  string
}

func (e *ChainError) Error() string {
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// Verify reads an audit log and checks every record: strict JSON, its
// own hash, and prev equal to the hash of the record before. It returns the
// number of records, and a *ChainError for the first broken one.
func Verify(r io.Reader) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	// prev is the hash of the record before; prevLine the digest of its
	// whole line, which is what logs written before mcpform chained on
	// hashes hold (so such a log, and one continued by a newer mcpform,
	// still verify).
	prev, prevLine := "", ""
	n := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return n, err
		}
		n++
		if line[len(line)-1] != '\n' {
			return n, &ChainError{n, "the last line is incomplete (no newline): a write was cut short"}
		}
		line = line[:len(line)-1]
		if msg := checkRecord(line, prev, prevLine); msg != "" {
			return n, &ChainError{n, msg}
		}
		prev, _ = recordHash(line)
		prevLine = lineDigest(line)
	}
}

func checkRecord(line []byte, prev, prevLine string) string {
	if err := strictjson.Check(line); err != nil {
		return "not a JSON record: " + err.Error()
	}
	hash, ok := recordHash(line)
	if !ok {
		return `the record does not end with its "hash"`
	}
	body := append(bytes.Clone(line[:len(line)-hashSuffixLen]), '}')
	sum := sha256.Sum256(body)
	if "sha256:"+hex.EncodeToString(sum[:]) != hash {
		return "the record's hash does not match its content: the record was changed"
	}
	var rec struct {
		Prev *string `json:"prev"`
	}
	if err := json.Unmarshal(line, &rec); err != nil || rec.Prev == nil {
		return `the record has no "prev"`
	}
	if *rec.Prev != prev && (prev == "" || *rec.Prev != prevLine) {
		if prev == "" {
			return `the first record's "prev" is not empty: records before it are missing`
		}
		return `"prev" is not the hash of the record before: a record was removed, inserted, reordered or rewritten`
	}
	return ""
}

// ReplaceFileForTesting makes the log append to f from now on, once a write
// under way has ended, and returns the file it appended to. It is for the
// tests of the packages that use the log, to make its appends fail in the
// middle of a run (f = /dev/full).
func (a *Log) ReplaceFileForTesting(f *os.File) *os.File {
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.writing {
		a.idle.Wait()
	}
	old := a.f
	a.f = f
	return old
}
