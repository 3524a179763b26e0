package mcp

import (
	"encoding/json"
	"fmt"
)

// The 2026-07-28 _meta keys (schema.ts RequestMetaObject, ResultMetaObject).
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	// MetaLogLevel is the log level a 2026-07-28 request asks log messages
	// at (the legacy era's logging/setLevel, per request); absent, the
	// server sends none for the request.
	MetaLogLevel = "io.modelcontextprotocol/logLevel"
)

// logLevels are the logging levels (RFC 5424's severities), as JSON.
var logLevels = []string{`"debug"`, `"info"`, `"notice"`, `"warning"`, `"error"`, `"critical"`, `"alert"`, `"emergency"`}

// IsLogLevel reports whether raw is one of the logging levels, as a JSON
// string written plainly (no escapes).
func IsLogLevel(raw []byte) bool {
	for _, l := range logLevels {
		if string(raw) == l {
			return true
		}
	}
	return false
}

// clientVersion is the version mcpform reports in clientInfo: what
// SetClientVersion set, "devel" until then.
var clientVersion = "devel"

// SetClientVersion sets the version clientInfo carries, in probes and in
// the proxy's own handshake. The CLI calls it once at start-up with its
// own version (the one `mcpform version` prints and the lock's generator
// names), before any server is started.
func SetClientVersion(v string) { clientVersion = v }

// ClientInfo returns mcpform's Implementation object,
// {"name":"mcpform","version":clientVersion}.
func ClientInfo() json.RawMessage {
	b, _ := json.Marshal(struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}{"mcpform", clientVersion})
	return b
}

// envelope is what a 2026-07-28 request carries in params._meta instead of
// an initialize handshake: "every request names its version in _meta".
type envelope struct {
	ProtocolVersion    string
	ClientCapabilities json.RawMessage // nil is sent as {}
	ClientInfo         json.RawMessage // nil is left out
}

// Apply returns params with the envelope's keys set in its _meta object.
// Other _meta keys (progressToken, …) and other params are kept; nil params
// become an object holding only _meta.
func (e envelope) Apply(params json.RawMessage) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &obj); err != nil {
			return nil, fmt.Errorf("params must be an object: %w", err)
		}
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := obj["_meta"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("params._meta must be an object: %w", err)
		}
	}
	v, _ := json.Marshal(e.ProtocolVersion)
	meta[MetaProtocolVersion] = v
	caps := e.ClientCapabilities
	if caps == nil {
		caps = json.RawMessage("{}")
	}
	meta[MetaClientCapabilities] = caps
	if e.ClientInfo != nil {
		meta[metaClientInfo] = e.ClientInfo
	}
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = m
	return json.Marshal(obj)
}

// readEnvelope reads the envelope from a request's params. ok is false when
// there is no protocol version in _meta (a legacy request). A protocol
// version that is not a string, or capabilities that are not an object, are
// errors.
func readEnvelope(params json.RawMessage) (env envelope, ok bool, err error) {
	meta, err := metaOf(params)
	if err != nil || meta == nil {
		return envelope{}, false, err
	}
	raw, has := meta[MetaProtocolVersion]
	if !has {
		return envelope{}, false, nil
	}
	if err := json.Unmarshal(raw, &env.ProtocolVersion); err != nil {
		return envelope{}, false, fmt.Errorf("_meta %q must be a string", MetaProtocolVersion)
	}
	if c, has := meta[MetaClientCapabilities]; has {
		if !isObject(c) {
			return envelope{}, false, fmt.Errorf("_meta %q must be an object", MetaClientCapabilities)
		}
		env.ClientCapabilities = c
	}
	if c, has := meta[metaClientInfo]; has {
		if !isObject(c) {
			return envelope{}, false, fmt.Errorf("_meta %q must be an object", metaClientInfo)
		}
		env.ClientInfo = c
	}
	return env, true, nil
}

// resultServerInfo returns the serverInfo a 2026-07-28 result carries in its
// _meta, or nil when it has none.
func resultServerInfo(result json.RawMessage) (json.RawMessage, error) {
	meta, err := metaOf(result)
	if err != nil || meta == nil {
		return nil, err
	}
	info, ok := meta[MetaServerInfo]
	if !ok || string(info) == "null" {
		return nil, nil
	}
	if !isObject(info) {
		return nil, fmt.Errorf("_meta %q must be an object", MetaServerInfo)
	}
	return info, nil
}

// setResultServerInfo returns result with info under _meta's serverInfo key,
// other keys kept.
func setResultServerInfo(result, info json.RawMessage) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if len(result) > 0 {
		if err := json.Unmarshal(result, &obj); err != nil {
			return nil, fmt.Errorf("result must be an object: %w", err)
		}
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := obj["_meta"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("result._meta must be an object: %w", err)
		}
	}
	meta[MetaServerInfo] = info
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = m
	return json.Marshal(obj)
}

// volatileResultFields are the members of a list or discover result that
// change from one call to the next without the surface changing; probes drop
// them before anything is compared or locked.
var volatileResultFields = []string{"nextCursor", "resultType", "ttlMs", "cacheScope", "_meta"}

// dropFields returns the object obj without the named top-level members.
func dropFields(obj json.RawMessage, names ...string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil || m == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	for _, n := range names {
		delete(m, n)
	}
	return json.Marshal(m)
}

func metaOf(obj json.RawMessage) (map[string]json.RawMessage, error) {
	if len(obj) == 0 || string(obj) == "null" {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	raw, ok := m["_meta"]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("_meta must be an object")
	}
	return meta, nil
}

func isObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{'
	}
	return false
}
