package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
)

// Caller sends one request over a connection someone else owns (the
// runtime proxy's upstream) and returns its result. It applies whatever
// envelope the connection's era needs.
type Caller func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

// InitializeParams returns the params of a legacy initialize asking for
// version, declaring caps (nil is {}), as mcpform's clientInfo.
func InitializeParams(version string, caps json.RawMessage) (json.RawMessage, error) {
	if caps == nil {
		caps = json.RawMessage("{}")
	}
	return json.Marshal(map[string]json.RawMessage{
		"protocolVersion": mustMarshal(version),
		"capabilities":    caps,
		"clientInfo":      ClientInfo(),
	})
}

// SurfaceFromInitialize reads an InitializeResult with the probe's rules:
// a legacy protocol version, a serverInfo object, capabilities and optional
// instructions. Lists are left empty for ListSurface.
func SurfaceFromInitialize(result json.RawMessage) (*Surface, error) {
	res, err := resultObject(result)
	if err != nil {
		return nil, err
	}
	var version string
	if raw, ok := res["protocolVersion"]; !ok || json.Unmarshal(raw, &version) != nil {
		return nil, errors.New("InitializeResult has no protocolVersion string")
	}
	if !isLegacyVersion(version) {
		return nil, fmt.Errorf("server chose protocol version %q, which mcpform does not speak", escape.String(version))
	}
	info, ok := res["serverInfo"]
	if !ok || !isObject(info) {
		return nil, errors.New("InitializeResult has no serverInfo object")
	}
	s := &Surface{Era: EraLegacy, ProtocolVersion: version, ServerInfo: info}
	if err := s.common(res, "InitializeResult"); err != nil {
		return nil, err
	}
	return s, nil
}

// legacyOnlyError is a DiscoverResult that lists initialize-era versions
// mcpform speaks and not 2026-07-28: a server that answers server/discover
// but negotiates only the legacy way (the Go SDK's stateful HTTP handler
// does). In auto it is spoken to with initialize.
type legacyOnlyError struct{ error }

func (e *legacyOnlyError) Unwrap() error { return e.error }

// SurfaceFromDiscover reads a 2026-07-28 DiscoverResult with the probe's
// rules (see Probe): complete, listing 2026-07-28, with serverInfo in
// _meta.
func SurfaceFromDiscover(result json.RawMessage) (*Surface, error) {
	res, err := resultObject(result)
	if err != nil {
		return nil, err
	}
	if err := resultComplete(res); err != nil {
		return nil, err
	}
	var versions []string
	if raw, ok := res["supportedVersions"]; !ok || json.Unmarshal(raw, &versions) != nil {
		return nil, errors.New("DiscoverResult has no supportedVersions list of strings")
	}
	found := false
	for _, v := range versions {
		found = found || v == ModernVersion
	}
	if !found {
		err := fmt.Errorf("DiscoverResult lists %s, not %s", escape.String(strings.Join(versions, ", ")), ModernVersion)
		for _, v := range versions {
			if slices.Contains(LegacyVersions, v) {
				return nil, &legacyOnlyError{err}
			}
		}
		return nil, err
	}
	info, err := resultServerInfo(result)
	if err != nil {
		return nil, fmt.Errorf("DiscoverResult: %w", err)
	}
	if info == nil {
		return nil, fmt.Errorf("DiscoverResult has no serverInfo in _meta (%q)", MetaServerInfo)
	}
	s := &Surface{Era: EraModern, ProtocolVersion: ModernVersion, SupportedVersions: versions, ServerInfo: info}
	if err := s.common(res, "DiscoverResult"); err != nil {
		return nil, err
	}
	return s, nil
}

func resultObject(result json.RawMessage) (map[string]json.RawMessage, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(result, &res); err != nil || res == nil {
		return nil, errors.New("result is not an object")
	}
	return res, nil
}

// ListMethods are the four list methods in the order of lock.Kinds (tools,
// prompts, resources, resource templates).
var ListMethods = [4]string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"}

// ListSurface fills s's lists through call, with the probe's pagination
// rules (every page, at most maxItems, no duplicate keys, no cursor loops),
// listing only what s.Capabilities declares. only, when non-nil, limits the
// listing to the kinds (indexes into ListMethods) it marks; the others are
// left as they are.
func ListSurface(ctx context.Context, call Caller, s *Surface, only *[4]bool) error {
	var caps map[string]json.RawMessage
	if err := json.Unmarshal(s.Capabilities, &caps); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	out := []*[]json.RawMessage{&s.Tools, &s.Prompts, &s.Resources, &s.ResourceTemplates}
	for i, k := range kinds {
		if only != nil && !only[i] {
			continue
		}
		*out[i] = []json.RawMessage{}
		if c, ok := caps[k.cap]; !ok || string(c) == "null" {
			continue
		}
		items, err := listWith(ctx, call, k)
		if err != nil {
			return fmt.Errorf("%s: %w", k.method, err)
		}
		*out[i] = items
	}
	return nil
}

// listWith is prober.listAll over a Caller.
func listWith(ctx context.Context, call Caller, k kind) ([]json.RawMessage, error) {
	var items []json.RawMessage
	seen := map[string]bool{}
	cursors := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		var params json.RawMessage
		if cursor != "" {
			params = mustMarshal(map[string]string{"cursor": cursor})
		}
		raw, err := call(ctx, k.method, params)
		if err != nil {
			if page > 1 {
				return nil, fmt.Errorf("page %d: %w", page, err)
			}
			return nil, err
		}
		res, err := resultObject(raw)
		if err != nil {
			return nil, err
		}
		if err := resultComplete(res); err != nil {
			return nil, err
		}
		var pageItems []json.RawMessage
		if r, ok := res[k.field]; !ok || json.Unmarshal(r, &pageItems) != nil || pageItems == nil {
			return nil, fmt.Errorf("result has no %q array", k.field)
		}
		if len(items)+len(pageItems) > maxItems {
			return nil, fmt.Errorf("more than %d %ss", maxItems, k.noun)
		}
		for _, it := range pageItems {
			var obj map[string]json.RawMessage
			var key string
			if json.Unmarshal(it, &obj) != nil || obj == nil {
				return nil, fmt.Errorf("a %s that is not an object: %s", k.noun, clip(it))
			}
			if json.Unmarshal(obj[k.key], &key) != nil || key == "" {
				return nil, fmt.Errorf("a %s without a %q string: %s", k.noun, k.key, clip(it))
			}
			if seen[key] {
				return nil, fmt.Errorf("two %ss with %s %q", k.noun, k.key, escape.String(key))
			}
			seen[key] = true
			items = append(items, append(json.RawMessage(nil), it...))
		}
		next, err := nextCursor(res)
		if err != nil {
			return nil, err
		}
		if next == "" {
			return items, nil
		}
		if cursors[next] {
			return nil, fmt.Errorf("the server repeated the cursor %q: a pagination loop", clip([]byte(next)))
		}
		cursors[next] = true
		cursor = next
	}
}

// ParseID reads a raw JSON-RPC id as DecodeMessage does (a string or an
// integer), returning its canonical form.
func ParseID(raw json.RawMessage) (ID, bool) { return parseID(raw) }

// AppendQuoted appends s as a JSON string in the one canonical form mcp
// writes (only quote, backslash and control characters escaped).
func AppendQuoted(b []byte, s string) []byte { return appendQuoted(b, s) }
