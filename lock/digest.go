package lock

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gowebpki/jcs"

	"github.com/mcpform/mcpform/internal/strictjson"
)

// digestPrefix names the hash of every digest in the format.
const digestPrefix = "sha256:"

var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// Digest returns "sha256:" + the lowercase hex SHA-256 of the RFC 8785
// canonical form of the JSON value v.
func Digest(v []byte) (string, error) {
	if strictjson.Check(v) == nil {
		return DigestStrict(v)
	}
	return digestTransformed(v)
}

// DigestStrict is Digest for a value that has passed strictjson.Check (an
// argument of a message the proxy decoded): it skips the check and writes
// the canonical form in one pass, without a tree of the value.
func DigestStrict(v []byte) (string, error) {
	buf := scratchPool.Get().(*[]byte)
	defer scratchPool.Put(buf)
	c, rest, err := appendCanonical((*buf)[:0], v)
	if cap(c) <= 64<<10 {
		*buf = c
	}
	if err == nil && len(skipSpace(rest)) == 0 {
		return digestCanonical(c), nil
	}
	return digestTransformed(v)
}

// Canonical returns the RFC 8785 canonical form of the JSON value v: the
// bytes Digest hashes, written in one pass for a value strictjson accepts
// (FuzzCanonicalMatchesJCS holds them equal to jcs.Transform's).
func Canonical(v []byte) ([]byte, error) {
	if strictjson.Check(v) == nil {
		if c, rest, err := appendCanonical(nil, v); err == nil && len(skipSpace(rest)) == 0 {
			return c, nil
		}
	}
	c, err := jcs.Transform(v)
	if err != nil {
		return nil, fmt.Errorf("canonicalizing JSON: %w", err)
	}
	return c, nil
}

func digestTransformed(v []byte) (string, error) {
	c, err := jcs.Transform(v)
	if err != nil {
		return "", fmt.Errorf("canonicalizing JSON: %w", err)
	}
	return digestCanonical(c), nil
}

func digestCanonical(c []byte) string {
	sum := sha256.Sum256(c)
	return digestPrefix + hex.EncodeToString(sum[:])
}

// ItemError names the item an entry problem is about.
type ItemError struct {
	Kind Kind
	Key  string // empty when the item has no usable key
	// Index is the item's position in the list as given, for an item
	// without a key.
	Index int
	Err   error
}

func (e *ItemError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s #%d: %v", e.Kind, e.Index+1, e.Err)
	}
	return fmt.Sprintf("%s %q: %v", e.Kind, e.Key, e.Err)
}

func (e *ItemError) Unwrap() error { return e.Err }

// NewItem checks one item of kind k as a server sent it. The item must be
// strict JSON (see internal/strictjson), an object whose key field is a
// non-empty string; a tool must have an inputSchema object. The item's bytes
// are kept as they are: key order, number literals and escapes as sent.
func NewItem(k Kind, raw json.RawMessage) (Item, error) {
	if err := strictjson.Check(raw); err != nil {
		return Item{}, fmt.Errorf("is not valid JSON: %w", err)
	}
	return newItem(k, raw)
}

// newItem is NewItem for bytes already known to be strict JSON.
func newItem(k Kind, raw json.RawMessage) (Item, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return Item{}, fmt.Errorf("is not a JSON object")
	}
	members, _ := scanMembers(raw)
	var key string
	hasSchema := false
	for _, m := range members {
		switch string(m.key) {
		case k.KeyField():
			if m.value[0] == '"' {
				k, _ := scanString(m.value)
				key = string(k)
			}
		case "inputSchema":
			hasSchema = m.value[0] == '{'
		}
	}
	if key == "" {
		return Item{}, fmt.Errorf("has no %q string", k.KeyField())
	}
	if k == Tools && !hasSchema {
		return Item{Key: key}, fmt.Errorf("has no inputSchema object")
	}
	return Item{Key: key, JSON: raw}, nil
}

// Seal checks the entry's lists (at most maxItems of a kind, no duplicate
// keys), sorts each by key in byte order and computes every digest. Call it
// after building an entry from a probe and before saving.
//
// The surface digest is computed in one stream: the members of the surface
// object are written to the hash in RFC 8785 key order, each item
// canonicalized once for both its own digest and the surface's.
func (e *Entry) Seal() error {
	for _, k := range Kinds {
		list := e.List(k)
		if len(list) > maxItems {
			return fmt.Errorf("%d %ss, more than the %d the format allows", len(list), k, maxItems)
		}
		if !slices.IsSortedFunc(list, compareItems) {
			slices.SortStableFunc(list, compareItems)
		}
		for i := 1; i < len(list); i++ {
			if list[i-1].Key == list[i].Key {
				return &ItemError{Kind: k, Key: list[i].Key, Err: fmt.Errorf("is listed twice")}
			}
		}
	}
	var d Digests
	surface := sha256.New()
	var scratch []byte
	canonical := func(what string, raw []byte) ([]byte, error) {
		if len(raw) == 0 {
			return nil, fmt.Errorf("%s is missing", what)
		}
		if err := strictjson.Check(raw); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		var err error
		scratch, _, err = appendCanonical(scratch[:0], raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		return scratch, nil
	}
	member := func(name string, raw []byte) error {
		c, err := canonical(name, raw)
		if err != nil {
			return err
		}
		surface.Write([]byte(`,"` + name + `":`))
		surface.Write(c)
		return nil
	}
	list := func(k Kind) error {
		items := e.List(k)
		m := make(map[string]string, len(items))
		surface.Write([]byte(`,"` + k.Field() + `":[`))
		for i := range items {
			c, err := canonical(k.String(), items[i].JSON)
			if err != nil {
				return &ItemError{Kind: k, Key: items[i].Key, Err: err}
			}
			if i > 0 {
				surface.Write([]byte{','})
			}
			surface.Write(c)
			items[i].Digest = digestCanonical(c)
			m[items[i].Key] = items[i].Digest
		}
		surface.Write([]byte{']'})
		d.setDigestMap(k, m)
		return nil
	}

	caps, err := canonical("capabilities", e.Capabilities)
	if err != nil {
		return err
	}
	surface.Write([]byte(`{"capabilities":`))
	surface.Write(caps)
	instr := []byte("null")
	if e.Instructions != nil {
		instr = appendCanonicalString(nil, *e.Instructions)
		id := digestCanonical(instr)
		d.Instructions = &id
	}
	surface.Write([]byte(`,"instructions":`))
	surface.Write(instr)
	if err := list(Prompts); err != nil {
		return err
	}
	surface.Write([]byte(`,"protocolVersion":`))
	surface.Write(appendCanonicalString(nil, e.ProtocolVersion))
	if err := list(ResourceTemplates); err != nil {
		return err
	}
	if err := list(Resources); err != nil {
		return err
	}
	if err := member("serverInfo", e.ServerInfo); err != nil {
		return err
	}
	if e.Modern() {
		surface.Write([]byte(`,"supportedVersions":[`))
		for i, v := range e.SupportedVersions {
			if i > 0 {
				surface.Write([]byte{','})
			}
			surface.Write(appendCanonicalString(nil, v))
		}
		surface.Write([]byte{']'})
	}
	if err := list(Tools); err != nil {
		return err
	}
	surface.Write([]byte{'}'})
	d.Surface = digestPrefix + hex.EncodeToString(surface.Sum(nil))
	e.Digests = d
	return nil
}

func compareItems(a, b Item) int { return strings.Compare(a.Key, b.Key) }
