package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpform/mcpform/internal/lockedfile"
	"github.com/mcpform/mcpform/internal/strictjson"
	"github.com/mcpform/mcpform/policy"
)

// Error is why a lock was refused. The whole file is refused, never a part.
type Error struct {
	File   string // the lock's path, or "" for bytes
	Server string // the entry, when the problem is inside one
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File + ": ")
	}
	if e.Server != "" {
		fmt.Fprintf(&b, "server %q: ", e.Server)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// errNotExist is wrapped by Load's error when the lock file is missing.
var errNotExist = fs.ErrNotExist

// errNoLock is a missing lock: it says what to do, and is errNotExist.
type errNoLock struct{}

func (errNoLock) Error() string {
	return "no lock file here: run mcpform plan and mcpform apply to create it"
}

func (errNoLock) Is(target error) bool { return target == fs.ErrNotExist }

// MaxFileSize bounds the lock file Load reads (a lock of 10 servers ×
// 1,000 tools is 10 MB).
const MaxFileSize = 256 << 20

// Load reads and fully verifies the lock at path. Any problem refuses the
// whole file.
func Load(path string) (*File, error) {
	f, _, err := LoadBytes(path)
	return f, err
}

// LoadBytes is Load that also returns the bytes it verified, for a caller
// that checks something else over exactly them (the lock's signatures).
func LoadBytes(path string) (*File, []byte, error) {
	// Only a regular file: a FIFO or a link to /dev/zero committed as
	// mcp.lock must not hang or exhaust the reader.
	data, err := lockedfile.ReadRegular(path, MaxFileSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, &Error{File: path, Err: errNoLock{}}
		}
		return nil, nil, &Error{File: path, Err: err}
	}
	f, err := Parse(data)
	if err != nil {
		var le *Error
		if errors.As(err, &le) {
			le.File = path
			return nil, nil, le
		}
		return nil, nil, &Error{File: path, Err: err}
	}
	return f, data, nil
}

// topKeys and entryKeys are the keys the format defines, in writing order.
var (
	topKeys   = []string{"lockfileVersion", "generator", "servers"}
	entryKeys = []string{"remote", "command", "envPassthrough", "protocolVersion", "supportedVersions", "serverInfo",
		"instructions", "capabilities", "tools", "prompts", "resources", "resourceTemplates", "digests", "policy", "mcpform"}
	digestKeys = []string{"surface", "instructions", "tools", "prompts", "resources", "resourceTemplates"}
)

// serverName is what a server may be called: it appears in client configs,
// file names and log lines.
var serverName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// envName is a portable environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validServerName reports whether name may name a server in the lock.
func validServerName(name string) bool { return serverName.MatchString(name) }

// Parse is Load for bytes: it parses and fully verifies a lock.
func Parse(data []byte) (*File, error) {
	if err := strictjson.Check(data); err != nil {
		return nil, &Error{Err: fmt.Errorf("not a valid lock: %w", err)}
	}
	top, err := object(data, topKeys, "the lock")
	if err != nil {
		return nil, &Error{Err: err}
	}
	f := &File{Servers: map[string]*Entry{}}
	switch v := string(top["lockfileVersion"]); v {
	case "1", "2", "3":
		f.Version = int(v[0] - '0')
	case "":
		return nil, &Error{Err: fmt.Errorf("lockfileVersion is missing")}
	default:
		return nil, &Error{Err: fmt.Errorf("lockfileVersion %s is not supported (this mcpform reads 1 to 3): upgrade mcpform, or re-create the lock with mcpform apply", v)}
	}
	if g, ok := top["generator"]; ok {
		if err := json.Unmarshal(g, &f.Generator); err != nil {
			return nil, &Error{Err: fmt.Errorf("generator is not a string")}
		}
	}
	rawServers, ok := top["servers"]
	if !ok {
		return nil, &Error{Err: fmt.Errorf("servers is missing")}
	}
	servers, err := object(rawServers, nil, "servers")
	if err != nil {
		return nil, &Error{Err: err}
	}
	var unchecked []string // the entries without a configDigest
	for name, raw := range servers {
		if !validServerName(name) {
			return nil, &Error{Server: name, Err: fmt.Errorf("is not a valid server name (letters, digits, '_', '.', '-')")}
		}
		e, err := parseEntry(raw)
		if err != nil {
			return nil, &Error{Server: name, Err: err}
		}
		if e.Modern() && f.Version < 2 {
			return nil, &Error{Server: name, Err: fmt.Errorf("has supportedVersions (a 2026-07-28 entry) in a version-1 lock; lockfileVersion must be 2")}
		}
		if e.Remote != nil && f.Version < 3 {
			return nil, &Error{Server: name, Err: fmt.Errorf("is a remote server in a version-%d lock; lockfileVersion must be 3", f.Version)}
		}
		f.Servers[name] = e
		if e.ConfigDigest == "" {
			unchecked = append(unchecked, name)
		}
	}
	sort.Strings(unchecked)
	for _, name := range unchecked {
		f.Notes = append(f.Notes, fmt.Sprintf("server %q has no configDigest: its command, environment and policy are not integrity-checked; mcpform apply adds one", name))
	}
	return f, nil
}

// object splits data, which has passed strictjson.Check, into its members
// with exact-case keys, without copying. With known non-nil, any other key
// is an error.
func object(data []byte, known []string, what string) (map[string]json.RawMessage, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("%s is not a JSON object", what)
	}
	members, _ := scanMembers(data)
	m := make(map[string]json.RawMessage, len(members))
	for _, mem := range members {
		if known != nil && !slices.Contains(known, string(mem.key)) {
			return nil, fmt.Errorf("%s has an unknown key %q (known: %s)", what, mem.key, strings.Join(known, ", "))
		}
		m[string(mem.key)] = mem.value
	}
	return m, nil
}

func stringList(raw json.RawMessage, what string) ([]string, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '[' {
		return nil, fmt.Errorf("%s is not a list of strings", what)
	}
	var l []string
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("%s is not a list of strings", what)
	}
	return l, nil
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

func parseEntry(data []byte) (*Entry, error) {
	m, err := object(data, entryKeys, "the entry")
	if err != nil {
		return nil, err
	}
	if raw, remote := m["remote"]; remote {
		for _, k := range []string{"command", "envPassthrough"} {
			if _, ok := m[k]; ok {
				return nil, fmt.Errorf("has both remote and %s: a server is either local (command) or remote", k)
			}
		}
		e := &Entry{}
		if e.Remote, err = parseRemote(raw); err != nil {
			return nil, err
		}
		return parseSurface(m, e)
	}
	for _, k := range []string{"command", "envPassthrough"} {
		if _, ok := m[k]; !ok {
			return nil, fmt.Errorf("%s is missing (or remote, for a remote server)", k)
		}
	}
	e := &Entry{}
	if e.Command, err = stringList(m["command"], "command"); err != nil {
		return nil, err
	}
	if len(e.Command) == 0 || e.Command[0] == "" {
		return nil, fmt.Errorf("command is empty")
	}
	if e.EnvPassthrough, err = stringList(m["envPassthrough"], "envPassthrough"); err != nil {
		return nil, err
	}
	for _, n := range e.EnvPassthrough {
		if !envName.MatchString(n) {
			return nil, fmt.Errorf("envPassthrough: %q is not an environment variable name", n)
		}
	}
	return parseSurface(m, e)
}

// parseRemote reads a remote entry's "remote" object.
func parseRemote(raw json.RawMessage) (*Remote, error) {
	r := &Remote{}
	if err := strictDecode(raw, r, "remote", []string{"url", "transport", "headers", "auth"}); err != nil {
		return nil, err
	}
	u, err := url.Parse(r.URL)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil || u.Fragment != "":
		return nil, fmt.Errorf("remote.url %q is not an http(s) URL without userinfo or fragment", r.URL)
	case r.Transport != TransportStreamableHTTP && r.Transport != TransportSSE:
		return nil, fmt.Errorf("remote.transport %q is neither %q nor %q", r.Transport, TransportStreamableHTTP, TransportSSE)
	}
	for k, v := range r.Headers {
		if k == "" || strings.ContainsAny(k+v, "\r\n\x00") {
			return nil, fmt.Errorf("remote.headers: %q is not a header mcpform can send", k)
		}
	}
	if a := r.Auth; a != nil {
		switch {
		case a.BearerEnv != "" && a.OAuth:
			return nil, fmt.Errorf("remote.auth has both bearerEnv and oauth")
		case a.BearerEnv != "" && !envName.MatchString(a.BearerEnv):
			return nil, fmt.Errorf("remote.auth.bearerEnv %q is not an environment variable name", a.BearerEnv)
		case a.BearerEnv == "" && !a.OAuth:
			return nil, fmt.Errorf("remote.auth is empty: leave it out for a server without authentication")
		case len(a.Scopes) > 0 && !a.OAuth:
			return nil, fmt.Errorf("remote.auth.scopes is set without oauth")
		}
	}
	return r, nil
}

// parseSurface reads what every entry has, local or remote, into e.
func parseSurface(m map[string]json.RawMessage, e *Entry) (*Entry, error) {
	var err error
	for _, k := range []string{"protocolVersion", "serverInfo", "instructions", "capabilities",
		"tools", "prompts", "resources", "resourceTemplates", "digests"} {
		if _, ok := m[k]; !ok {
			return nil, fmt.Errorf("%s is missing", k)
		}
	}
	if err := json.Unmarshal(m["protocolVersion"], &e.ProtocolVersion); err != nil || e.ProtocolVersion == "" {
		return nil, fmt.Errorf("protocolVersion is not a non-empty string")
	}
	if sv, ok := m["supportedVersions"]; ok {
		if e.SupportedVersions, err = stringList(sv, "supportedVersions"); err != nil {
			return nil, err
		}
		if e.SupportedVersions == nil {
			e.SupportedVersions = []string{}
		}
		if !slices.Contains(e.SupportedVersions, e.ProtocolVersion) {
			return nil, fmt.Errorf("supportedVersions does not list protocolVersion %q", e.ProtocolVersion)
		}
	}
	if !isObject(m["serverInfo"]) {
		return nil, fmt.Errorf("serverInfo is not an object")
	}
	e.ServerInfo = compact(m["serverInfo"])
	if !isObject(m["capabilities"]) {
		return nil, fmt.Errorf("capabilities is not an object")
	}
	e.Capabilities = compact(m["capabilities"])
	if string(m["instructions"]) != "null" {
		var s string
		if err := json.Unmarshal(m["instructions"], &s); err != nil {
			return nil, fmt.Errorf("instructions is neither a string nor null")
		}
		e.Instructions = &s
	}
	for _, k := range Kinds {
		items, err := parseList(k, m[k.Field()])
		if err != nil {
			return nil, err
		}
		e.SetList(k, items)
	}
	recorded, err := parseDigests(m["digests"])
	if err != nil {
		return nil, err
	}
	if raw, ok := m["policy"]; ok {
		if e.Policy, err = parsePolicy(raw); err != nil {
			return nil, err
		}
	}
	if raw, ok := m["mcpform"]; ok {
		var limits *policy.Limits
		if e.Mcpform, limits, e.ConfigDigest, err = parseSettings(raw); err != nil {
			return nil, err
		}
		if e.Remote != nil && e.Mcpform.Pins != nil {
			return nil, fmt.Errorf("mcpform.pins is set on a remote server: pins name the files a command starts")
		}
		if e.Remote != nil && e.Mcpform.NPM != nil {
			return nil, fmt.Errorf("mcpform.npm is set on a remote server: it pins the package a command runs")
		}
		if e.Remote != nil && e.Mcpform.PyPI != nil {
			return nil, fmt.Errorf("mcpform.pypi is set on a remote server: it pins the package a command runs")
		}
		if e.Remote != nil && e.Mcpform.Image != nil {
			return nil, fmt.Errorf("mcpform.image is set on a remote server: it pins the image a command runs")
		}
		if limits != nil {
			// mcpform's own part of the sandbox policy, kept under its key
			// so that other readers of the format can ignore it.
			if e.Policy == nil || e.Policy.Sandbox == nil {
				return nil, fmt.Errorf("mcpform.sandboxLimits is set, and policy.sandbox is not: limits apply only to a sandboxed server")
			}
			e.Policy.Sandbox.Limits = limits
		}
	}
	if err := e.Seal(); err != nil {
		return nil, err
	}
	if err := compareDigests(recorded, e.Digests); err != nil {
		return nil, err
	}
	if err := e.checkPolicy(); err != nil {
		return nil, err
	}
	if e.ConfigDigest != "" {
		// Last, so that a value the format refuses is named as such.
		got, err := e.ComputeConfigDigest()
		if err != nil {
			return nil, err
		}
		if got != e.ConfigDigest {
			return nil, fmt.Errorf("its command, environment, remote, policy or mcpform settings do not match mcpform.configDigest (recorded %s, content %s): "+
				"they were edited after the entry was locked. Restore the file from version control; to change them, change mcp.hcl "+
				"and run mcpform plan and mcpform apply (plan does not build on a lock that fails this check)", e.ConfigDigest, got)
		}
	}
	return e, nil
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func parseList(k Kind, raw json.RawMessage) ([]Item, error) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, fmt.Errorf("%s is not a list", k.Field())
	}
	raws := scanElements(raw)
	if len(raws) > maxItems {
		return nil, fmt.Errorf("%s has %d items, more than the %d the format allows", k.Field(), len(raws), maxItems)
	}
	items := make([]Item, len(raws))
	seen := make(map[string]bool, len(raws))
	for i, r := range raws {
		it, err := newItem(k, r)
		if err != nil {
			return nil, &ItemError{Kind: k, Key: it.Key, Index: i, Err: err}
		}
		if seen[it.Key] {
			return nil, &ItemError{Kind: k, Key: it.Key, Index: i, Err: fmt.Errorf("is listed twice")}
		}
		seen[it.Key] = true
		items[i] = it
	}
	return items, nil
}

func parseDigests(raw json.RawMessage) (*Digests, error) {
	m, err := object(raw, digestKeys, "digests")
	if err != nil {
		return nil, err
	}
	d := &Digests{}
	if err := json.Unmarshal(m["surface"], &d.Surface); err != nil || d.Surface == "" {
		return nil, fmt.Errorf("digests.surface is not a digest string")
	}
	if in, ok := m["instructions"]; !ok {
		return nil, fmt.Errorf("digests.instructions is missing")
	} else if string(in) != "null" {
		var s string
		if err := json.Unmarshal(in, &s); err != nil {
			return nil, fmt.Errorf("digests.instructions is neither a string nor null")
		}
		d.Instructions = &s
	}
	for _, k := range Kinds {
		raw, ok := m[k.Field()]
		if !ok || !isObject(raw) {
			return nil, fmt.Errorf("digests.%s is not an object", k.Field())
		}
		var dm map[string]string
		if err := json.Unmarshal(raw, &dm); err != nil {
			return nil, fmt.Errorf("digests.%s is not an object of digest strings", k.Field())
		}
		d.setDigestMap(k, dm)
	}
	return d, nil
}

// compareDigests reports the first recorded digest that differs from the
// one computed from the content.
func compareDigests(recorded *Digests, computed Digests) error {
	const hint = "the file was changed by hand or damaged: restore it from version control, or re-lock with mcpform plan and mcpform apply"
	for _, k := range Kinds {
		rec, comp := recorded.digestMap(k), computed.digestMap(k)
		for _, key := range sortedKeys(comp) {
			r, ok := rec[key]
			if !ok {
				return &ItemError{Kind: k, Key: key, Err: fmt.Errorf("has no digest in digests.%s; %s", k.Field(), hint)}
			}
			if r != comp[key] {
				return &ItemError{Kind: k, Key: key, Err: fmt.Errorf("does not match its digest (recorded %s, content %s); %s", r, comp[key], hint)}
			}
		}
		for _, key := range sortedKeys(rec) {
			if _, ok := comp[key]; !ok {
				return fmt.Errorf("digests.%s names %q, which is not in %s; %s", k.Field(), key, k.Field(), hint)
			}
		}
	}
	switch {
	case (recorded.Instructions == nil) != (computed.Instructions == nil):
		return fmt.Errorf("instructions do not match digests.instructions; %s", hint)
	case recorded.Instructions != nil && *recorded.Instructions != *computed.Instructions:
		return fmt.Errorf("instructions do not match their digest (recorded %s, content %s); %s", *recorded.Instructions, *computed.Instructions, hint)
	case recorded.Surface != computed.Surface:
		return fmt.Errorf("the surface does not match digests.surface (recorded %s, content %s); %s", recorded.Surface, computed.Surface, hint)
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// strictDecode decodes raw into v, refusing keys v does not define. The
// input has passed strictjson.Check, so keys are unique; exact case is
// enforced by checking every key against the JSON tags of v's fields.
func strictDecode(raw json.RawMessage, v any, what string, known []string) error {
	if _, err := object(raw, known, what); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func parsePolicy(raw json.RawMessage) (*policy.Policy, error) {
	m, err := object(raw, []string{"taint", "sandbox", "onDrift", "expose"}, "policy")
	if err != nil {
		return nil, err
	}
	p := &policy.Policy{}
	if v, ok := m["onDrift"]; ok {
		if err := json.Unmarshal(v, &p.OnDrift); err != nil {
			return nil, fmt.Errorf("policy.onDrift must be a string")
		}
		if p.OnDrift == "" {
			return nil, fmt.Errorf("policy.onDrift is empty; leave it out for the default (%q)", policy.DriftQuarantine)
		}
		if err := policy.CheckOnDrift(p.OnDrift); err != nil {
			return nil, fmt.Errorf("policy.onDrift: %w", err)
		}
	}
	if v, ok := m["expose"]; ok {
		p.Expose = &policy.Expose{}
		if err := json.Unmarshal(v, p.Expose); err != nil {
			return nil, fmt.Errorf("policy.expose: %w", err)
		}
		if err := p.Expose.Check(); err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
	}
	if t, ok := m["taint"]; ok {
		p.Taint = &policy.Taint{}
		if err := strictDecode(t, p.Taint, "policy.taint", []string{"sources", "sinks"}); err != nil {
			return nil, err
		}
	}
	if s, ok := m["sandbox"]; ok {
		sm, err := object(s, []string{"filesystem", "network"}, "policy.sandbox")
		if err != nil {
			return nil, err
		}
		p.Sandbox = &policy.Sandbox{}
		if fs, ok := sm["filesystem"]; ok {
			if err := strictDecode(fs, &p.Sandbox.Filesystem, "policy.sandbox.filesystem", []string{"read", "write"}); err != nil {
				return nil, err
			}
		}
		if n, ok := sm["network"]; ok {
			if err := strictDecode(n, &p.Sandbox.Network, "policy.sandbox.network", []string{"allow"}); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// Upper bounds of a limit, the same on every platform so that a lock reads
// the same everywhere: counts fit an int32, sizes are at most what
// policy.ParseSize gives. The lower bounds are policy.Limits.Check's.
const (
	maxLimitCount = math.MaxInt32
	maxLimitSize  = 1 << 62
)

// parseLimits decodes mcpform.sandboxLimits: an object of exactly memory,
// processes, files and fileSize, each a positive JSON integer (sizes in
// bytes). 0 is refused: the writer leaves a limit at its default out.
func parseLimits(raw json.RawMessage) (*policy.Limits, error) {
	m, err := object(raw, []string{"memory", "processes", "files", "fileSize"}, "mcpform.sandboxLimits")
	if err != nil {
		return nil, err
	}
	l := &policy.Limits{}
	for _, f := range []struct {
		key string
		max int64
		set func(int64)
	}{
		{"memory", maxLimitSize, func(n int64) { l.Memory = n }},
		{"processes", maxLimitCount, func(n int64) { l.Processes = int(n) }},
		{"files", maxLimitCount, func(n int64) { l.Files = int(n) }},
		{"fileSize", maxLimitSize, func(n int64) { l.FileSize = n }},
	} {
		v, ok := m[f.key]
		if !ok {
			continue
		}
		what := "mcpform.sandboxLimits." + f.key
		digits := string(bytes.TrimSpace(v))
		n, err := strconv.ParseInt(digits, 10, 64)
		switch {
		case err != nil && errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(digits, "-"):
			return nil, fmt.Errorf("%s is too large (at most %d)", what, f.max)
		case err != nil && !errors.Is(err, strconv.ErrRange):
			return nil, fmt.Errorf("%s is not a whole number written in digits", what)
		case err != nil || n < 0:
			return nil, fmt.Errorf("%s is negative", what)
		case n == 0:
			return nil, fmt.Errorf("%s is 0; a limit at its default is left out", what)
		case n > f.max:
			return nil, fmt.Errorf("%s is too large (at most %d)", what, f.max)
		}
		f.set(n)
	}
	return l, nil
}

// configDigestForm is mcpform.configDigest's only form.
var configDigestForm = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// parseSettings decodes the entry's "mcpform" object: the settings, the
// sandbox's limits (sandboxLimits), which belong to the policy, and the
// configDigest ("" when there is none).
func parseSettings(raw json.RawMessage) (*Settings, *policy.Limits, string, error) {
	var doc struct {
		// ConfigDigest is checked for a string here, and by the caller
		// against the entry.
		ConfigDigest json.RawMessage `json:"configDigest"`
		Settings
		SandboxLimits json.RawMessage `json:"sandboxLimits"`
		// Pins shadows Settings.Pins: json.Unmarshal matches keys
		// regardless of case, and parsePins checks them exactly.
		Pins json.RawMessage `json:"pins"`
		NPM  json.RawMessage `json:"npm"`
		// Image shadows Settings.Image, checked by parseImage.
		Image json.RawMessage `json:"image"`
		// PyPI shadows Settings.PyPI, checked by parsePyPI.
		PyPI json.RawMessage `json:"pypi"`
		// Samples shadows Settings.Samples, checked by parseSamples.
		Samples json.RawMessage `json:"samples"`
	}
	if err := strictDecode(raw, &doc, "mcpform", []string{"configDigest", "version", "tools", "clientCapabilities", "protocol", "timeout", "pins", "npm", "image", "pypi", "samples", "sandboxLimits"}); err != nil {
		return nil, nil, "", err
	}
	if doc.Pins != nil {
		var err error
		if doc.Settings.Pins, err = parsePins(doc.Pins); err != nil {
			return nil, nil, "", err
		}
	}
	if doc.NPM != nil {
		var err error
		if doc.Settings.NPM, err = parseNPM(doc.NPM); err != nil {
			return nil, nil, "", err
		}
	}
	if doc.Image != nil {
		var err error
		if doc.Settings.Image, err = parseImage(doc.Image); err != nil {
			return nil, nil, "", err
		}
	}
	if doc.PyPI != nil {
		var err error
		if doc.Settings.PyPI, err = parsePyPI(doc.PyPI); err != nil {
			return nil, nil, "", err
		}
	}
	if doc.Samples != nil {
		var err error
		if doc.Settings.Samples, err = parseSamples(doc.Samples); err != nil {
			return nil, nil, "", err
		}
	}
	var limits *policy.Limits
	if doc.SandboxLimits != nil {
		var err error
		if limits, err = parseLimits(doc.SandboxLimits); err != nil {
			return nil, nil, "", err
		}
	}
	s, err := checkSettings(&doc.Settings)
	if err != nil {
		return nil, nil, "", err
	}
	var configDigest string
	if m, _ := object(raw, nil, "mcpform"); m["configDigest"] != nil {
		if v := bytes.TrimSpace(m["configDigest"]); v[0] != '"' || json.Unmarshal(v, &configDigest) != nil {
			return nil, nil, "", fmt.Errorf("mcpform.configDigest is not a string")
		}
		if !configDigestForm.MatchString(configDigest) {
			return nil, nil, "", fmt.Errorf("mcpform.configDigest %q is not sha256:<64 lowercase hex>", configDigest)
		}
	}
	return s, limits, configDigest, nil
}

// sha256Hex is a pin's digest: lowercase hex, as sha256sum prints it.
var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// parsePins decodes mcpform.pins: an executable, and a script only beside
// one. Keys are matched exactly, and any other is refused.
func parsePins(raw json.RawMessage) (*Pins, error) {
	m, err := object(raw, []string{"executable", "script"}, "mcpform.pins")
	if err != nil {
		return nil, err
	}
	p := &Pins{}
	if _, ok := m["executable"]; !ok {
		return nil, fmt.Errorf("mcpform.pins.executable is missing: pins always name the executable")
	}
	if p.Executable, err = parseFilePin(m["executable"], "mcpform.pins.executable"); err != nil {
		return nil, err
	}
	if s, ok := m["script"]; ok {
		if p.Script, err = parseFilePin(s, "mcpform.pins.script"); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// sriSHA512 is an SRI sha512 digest, as npm's registry gives it.
var sriSHA512 = regexp.MustCompile(`^sha512-[A-Za-z0-9+/]{86}==$`)

// npmName is a package name npm would publish (lowercase, URL-safe, an
// optional scope); pins/npm checks the full rules when it installs.
var npmName = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`)

// parseNPM decodes mcpform.npm: every key but installScripts is required,
// keys are matched exactly, and any other is refused. The lockfile's path
// must stay inside the lock's directory.
func parseNPM(raw json.RawMessage) (*NPM, error) {
	const what = "mcpform.npm"
	m, err := object(raw, []string{"package", "version", "integrity", "registry", "lockfile", "bin", "installScripts", "allowInstallScripts", "provenance"}, what)
	if err != nil {
		return nil, err
	}
	n := &NPM{}
	for _, k := range []struct {
		key string
		to  *string
	}{{"package", &n.Package}, {"version", &n.Version}, {"integrity", &n.Integrity}, {"registry", &n.Registry}, {"bin", &n.Bin}} {
		v, ok := m[k.key]
		if !ok {
			return nil, fmt.Errorf("%s.%s is missing", what, k.key)
		}
		if err := json.Unmarshal(v, k.to); err != nil || bytes.TrimSpace(v)[0] != '"' {
			return nil, fmt.Errorf("%s.%s is not a string", what, k.key)
		}
	}
	lf, ok := m["lockfile"]
	if !ok {
		return nil, fmt.Errorf("%s.lockfile is missing", what)
	}
	p, err := parseFilePin(lf, what+".lockfile")
	if err != nil {
		return nil, err
	}
	n.Lockfile = *p
	if s, ok := m["installScripts"]; ok {
		if err := json.Unmarshal(s, &n.InstallScripts); err != nil || bytes.TrimSpace(s)[0] != '[' {
			return nil, fmt.Errorf("%s.installScripts is not a list of strings", what)
		}
		if len(n.InstallScripts) == 0 {
			return nil, fmt.Errorf("%s.installScripts is empty; an empty list is left out", what)
		}
		for _, s := range n.InstallScripts {
			if !strings.HasPrefix(s, "node_modules/") || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				return nil, fmt.Errorf("%s.installScripts holds %q, not a lockfile path (node_modules/…)", what, s)
			}
		}
	}
	if a, ok := m["allowInstallScripts"]; ok {
		if !bytes.Equal(bytes.TrimSpace(a), []byte("true")) {
			return nil, fmt.Errorf("%s.allowInstallScripts is %s, not true; false is left out", what, bytes.TrimSpace(a))
		}
		n.AllowInstallScripts = true
	}
	if pv, ok := m["provenance"]; ok {
		if n.Provenance, err = parseProvenance(pv, what+".provenance"); err != nil {
			return nil, err
		}
	}
	bad := func(s string) bool {
		return strings.ContainsFunc(s, func(r rune) bool { return r <= 0x20 || r == 0x7f })
	}
	switch {
	case !npmName.MatchString(n.Package) || len(n.Package) > 214:
		return nil, fmt.Errorf("%s.package %q is not an npm package name", what, n.Package)
	case n.Version == "" || bad(n.Version) || len(n.Version) > 256:
		return nil, fmt.Errorf("%s.version %q is not an exact version", what, n.Version)
	case !sriSHA512.MatchString(n.Integrity):
		return nil, fmt.Errorf("%s.integrity %q is not an SRI sha512 digest (sha512-…)", what, n.Integrity)
	case !(strings.HasPrefix(n.Registry, "https://") || strings.HasPrefix(n.Registry, "http://")) || !strings.HasSuffix(n.Registry, "/") || bad(n.Registry):
		return nil, fmt.Errorf("%s.registry %q is not an http(s) URL ending in /", what, n.Registry)
	case n.Bin == "" || bad(n.Bin) || strings.HasPrefix(n.Bin, "/") || slices.Contains(strings.Split(n.Bin, "/"), ".."):
		return nil, fmt.Errorf("%s.bin %q is not a path inside the package", what, n.Bin)
	case strings.HasPrefix(n.Lockfile.Path, "/") || strings.Contains(n.Lockfile.Path, `\`) || slices.Contains(strings.Split(n.Lockfile.Path, "/"), ".."):
		return nil, fmt.Errorf("%s.lockfile.path %q is not a relative path inside the lock's directory", what, n.Lockfile.Path)
	}
	return n, nil
}

// gitCommit is a git commit id (SHA-1, or SHA-256 for a SHA-256
// repository).
var gitCommit = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// maxProvenanceText bounds each string of mcpform.npm.provenance.
const maxProvenanceText = 2048

// parseProvenance decodes mcpform.npm.provenance: repository and workflow
// required, commit optional, keys matched exactly, any other refused.
func parseProvenance(raw json.RawMessage, what string) (*Provenance, error) {
	m, err := object(raw, []string{"repository", "workflow", "commit"}, what)
	if err != nil {
		return nil, err
	}
	p := &Provenance{}
	for _, k := range []struct {
		key      string
		to       *string
		required bool
	}{{"repository", &p.Repository, true}, {"workflow", &p.Workflow, true}, {"commit", &p.Commit, false}} {
		v, ok := m[k.key]
		if !ok {
			if k.required {
				return nil, fmt.Errorf("%s.%s is missing", what, k.key)
			}
			continue
		}
		if err := json.Unmarshal(v, k.to); err != nil || bytes.TrimSpace(v)[0] != '"' {
			return nil, fmt.Errorf("%s.%s is not a string", what, k.key)
		}
	}
	bad := func(s string) bool {
		return s == "" || len(s) > maxProvenanceText || strings.ContainsFunc(s, func(r rune) bool { return r <= 0x20 || r >= 0x7f })
	}
	_, hasCommit := m["commit"]
	switch {
	case bad(p.Repository) || !strings.HasPrefix(p.Repository, "https://"):
		return nil, fmt.Errorf("%s.repository %q is not an https URL (at most %d printable ASCII characters, no space)", what, p.Repository, maxProvenanceText)
	case bad(p.Workflow):
		return nil, fmt.Errorf("%s.workflow %q is not a workflow (path@ref, at most %d printable ASCII characters, no space)", what, p.Workflow, maxProvenanceText)
	case hasCommit && !gitCommit.MatchString(p.Commit):
		return nil, fmt.Errorf("%s.commit %q is not a git commit id (40 or 64 lowercase hex digits); an unknown commit is left out", what, p.Commit)
	}
	return p, nil
}

// imageDigest is the only digest an image pin holds.
var imageDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// mediaType is a media type as a registry names a manifest
// (type/subtype[+suffix]), bounded.
var mediaType = regexp.MustCompile(`^[a-z0-9][a-z0-9.+-]*/[a-z0-9][a-z0-9.+-]*$`)

// MaxImageReference bounds mcpform.image.reference, as pins/image bounds
// an image reference.
const MaxImageReference = 512

// parseImage decodes mcpform.image: reference and digest are required,
// mediaType optional, keys are matched exactly, and any other is refused.
// pins/image checks the reference's grammar when run starts it.
func parseImage(raw json.RawMessage) (*Image, error) {
	const what = "mcpform.image"
	m, err := object(raw, []string{"reference", "digest", "mediaType"}, what)
	if err != nil {
		return nil, err
	}
	im := &Image{}
	for _, k := range []struct {
		key      string
		to       *string
		required bool
	}{{"reference", &im.Reference, true}, {"digest", &im.Digest, true}, {"mediaType", &im.MediaType, false}} {
		v, ok := m[k.key]
		if !ok {
			if k.required {
				return nil, fmt.Errorf("%s.%s is missing", what, k.key)
			}
			continue
		}
		if err := json.Unmarshal(v, k.to); err != nil || bytes.TrimSpace(v)[0] != '"' {
			return nil, fmt.Errorf("%s.%s is not a string", what, k.key)
		}
	}
	_, hasType := m["mediaType"]
	switch {
	case im.Reference == "" || len(im.Reference) > MaxImageReference || strings.ContainsFunc(im.Reference, func(r rune) bool { return r <= 0x20 || r >= 0x7f }):
		return nil, fmt.Errorf("%s.reference %q is not an image reference (1 to %d printable ASCII characters, no space)", what, im.Reference, MaxImageReference)
	case !imageDigest.MatchString(im.Digest):
		return nil, fmt.Errorf("%s.digest %q is not sha256:<64 lowercase hex>", what, im.Digest)
	case hasType && (!mediaType.MatchString(im.MediaType) || len(im.MediaType) > 255):
		return nil, fmt.Errorf("%s.mediaType %q is not a media type (type/subtype); an unknown one is left out", what, im.MediaType)
	}
	return im, nil
}

// The grammar of mcpform.pypi's names, as pins/pypi writes them: a
// normalised PEP 503 name, an exact version (N.N[aN|bN|rcN][.postN][.devN]),
// a console script name, and a module:function reference of dotted ASCII
// identifiers. pins/pypi checks the same when run starts the entry.
var (
	pypiName       = regexp.MustCompile(`^([a-z0-9]|[a-z0-9][a-z0-9-]*[a-z0-9])$`)
	pypiVersion    = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?$`)
	pypiScript     = regexp.MustCompile(`^[A-Za-z0-9._+][A-Za-z0-9._+-]*$`)
	pypiEntryPoint = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
)

// parsePyPI decodes mcpform.pypi: every key is required, keys are matched
// exactly, and any other is refused. The requirements file's path must
// stay inside the lock's directory.
func parsePyPI(raw json.RawMessage) (*PyPI, error) {
	const what = "mcpform.pypi"
	m, err := object(raw, []string{"package", "version", "sha256", "index", "requirements", "script", "entryPoint"}, what)
	if err != nil {
		return nil, err
	}
	py := &PyPI{}
	for _, k := range []struct {
		key string
		to  *string
	}{{"package", &py.Package}, {"version", &py.Version}, {"sha256", &py.SHA256}, {"index", &py.Index}, {"script", &py.Script}, {"entryPoint", &py.EntryPoint}} {
		v, ok := m[k.key]
		if !ok {
			return nil, fmt.Errorf("%s.%s is missing", what, k.key)
		}
		if err := json.Unmarshal(v, k.to); err != nil || bytes.TrimSpace(v)[0] != '"' {
			return nil, fmt.Errorf("%s.%s is not a string", what, k.key)
		}
	}
	rq, ok := m["requirements"]
	if !ok {
		return nil, fmt.Errorf("%s.requirements is missing", what)
	}
	p, err := parseFilePin(rq, what+".requirements")
	if err != nil {
		return nil, err
	}
	py.Requirements = *p
	switch {
	case !pypiName.MatchString(py.Package) || len(py.Package) > 200:
		return nil, fmt.Errorf("%s.package %q is not a normalised Python package name", what, py.Package)
	case !pypiVersion.MatchString(py.Version) || len(py.Version) > 64:
		return nil, fmt.Errorf("%s.version %q is not an exact version", what, py.Version)
	case !sha256Hex.MatchString(py.SHA256):
		return nil, fmt.Errorf("%s.sha256 %q is not 64 lowercase hex digits (the wheel's SHA-256)", what, py.SHA256)
	case py.Index != "" && (!(strings.HasPrefix(py.Index, "https://") || strings.HasPrefix(py.Index, "http://")) || len(py.Index) > 2048 ||
		strings.ContainsFunc(py.Index, func(r rune) bool { return r <= 0x20 || r >= 0x7f })):
		return nil, fmt.Errorf("%s.index %q is not an http(s) URL (or \"\" for find-links only)", what, py.Index)
	case !pypiScript.MatchString(py.Script) || len(py.Script) > 200:
		return nil, fmt.Errorf("%s.script %q is not a console script name", what, py.Script)
	case !pypiEntryPoint.MatchString(py.EntryPoint) || len(py.EntryPoint) > 400:
		return nil, fmt.Errorf("%s.entryPoint %q is not a module:function reference", what, py.EntryPoint)
	case strings.HasPrefix(py.Requirements.Path, "/") || strings.Contains(py.Requirements.Path, `\`) || slices.Contains(strings.Split(py.Requirements.Path, "/"), ".."):
		return nil, fmt.Errorf("%s.requirements.path %q is not a relative path inside the lock's directory", what, py.Requirements.Path)
	}
	return py, nil
}

func parseFilePin(raw json.RawMessage, what string) (*FilePin, error) {
	m, err := object(raw, []string{"path", "sha256"}, what)
	if err != nil {
		return nil, err
	}
	f := &FilePin{}
	for _, k := range []struct {
		key string
		to  *string
	}{{"path", &f.Path}, {"sha256", &f.SHA256}} {
		v, ok := m[k.key]
		if !ok {
			return nil, fmt.Errorf("%s.%s is missing", what, k.key)
		}
		if err := json.Unmarshal(v, k.to); err != nil || bytes.TrimSpace(v)[0] != '"' {
			return nil, fmt.Errorf("%s.%s is not a string", what, k.key)
		}
	}
	switch {
	case f.Path == "" || strings.ContainsFunc(f.Path, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return nil, fmt.Errorf("%s.path is empty or holds a control character", what)
	case !sha256Hex.MatchString(f.SHA256):
		return nil, fmt.Errorf("%s.sha256 %q is not 64 lowercase hex digits (a SHA-256, as sha256sum prints it)", what, f.SHA256)
	}
	return f, nil
}

// checkSettings checks the settings' values.
func checkSettings(s *Settings) (*Settings, error) {
	if s.ClientCapabilities != nil {
		if !isObject(s.ClientCapabilities) {
			return nil, fmt.Errorf("mcpform.clientCapabilities is not an object")
		}
		s.ClientCapabilities = compact(s.ClientCapabilities)
	}
	if _, ok := s.Tools[""]; ok {
		return nil, fmt.Errorf("mcpform.tools has an empty tool name")
	}
	if s.Timeout != "" {
		if d, err := time.ParseDuration(s.Timeout); err != nil || d <= 0 {
			return nil, fmt.Errorf("mcpform.timeout %q is not a positive duration such as \"30s\"", s.Timeout)
		}
	}
	switch s.Protocol {
	case "", "legacy", ModernVersion:
	default:
		return nil, fmt.Errorf("mcpform.protocol %q is not \"legacy\" or %q", s.Protocol, ModernVersion)
	}
	return s, nil
}

// checkPolicy checks the policy against the entry: taint names are locked
// tools, sandbox paths and host:port entries are well formed, limits are
// not below the least a server starts under.
func (e *Entry) checkPolicy() error {
	if e.Policy == nil {
		return nil
	}
	isTool := func(name string) bool { _, ok := e.Find(Tools, name); return ok }
	if err := e.Policy.Taint.Check(isTool); err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	if sb := e.Policy.Sandbox; sb != nil {
		for _, p := range sb.Filesystem.Read {
			if err := policy.CheckPath(p); err != nil {
				return fmt.Errorf("policy.sandbox.filesystem.read: %w", err)
			}
		}
		for _, p := range sb.Filesystem.Write {
			if err := policy.CheckPath(p); err != nil {
				return fmt.Errorf("policy.sandbox.filesystem.write: %w", err)
			}
		}
		for _, a := range sb.Network.Allow {
			if _, err := policy.ParseHostPort(a); err != nil {
				return fmt.Errorf("policy.sandbox.network.allow: %w", err)
			}
		}
		if err := sb.Limits.Check(); err != nil {
			return fmt.Errorf("mcpform.sandboxLimits: %w", err)
		}
	}
	return nil
}
