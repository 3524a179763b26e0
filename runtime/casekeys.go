package runtime

import (
	"fmt"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/mcp"
)

// The proxy reads member names exactly (DESIGN.md 6, STYLE.md 11); many
// servers do not. Go's encoding/json matches "NAME" to a field tagged
// "name" and keeps the last of the two, so {"name":"echo","NAME":"send"}
// passes the proxy's checks as a call to echo and runs as a call to send,
// and {"name":"count","Arguments":{…}} carries arguments the proxy never
// saw. A key that differs only in case from another key of the same
// object, or from a key the proxy reads, is refused.

// paramKeys are the params members the proxy reads or sets on a forwarded
// request.
var paramKeys = []string{"name", "arguments", "uri", "_meta", "ref", "argument", "requestState", "inputResponses", "cursor", "level"}

// caseTwin returns a member key of obj that equals, under Unicode case
// folding but not exactly, another key of obj or one of known; the keys
// are returned unescaped.
func caseTwin(obj []byte, known []string) (key, twin string, found bool) {
	var ms [16]member
	list := members(ms[:0], obj)
	names := make([]string, 0, len(list))
	for _, m := range list {
		n, _ := stringValue(m.key)
		names = append(names, n)
	}
	for i, n := range names {
		for _, k := range known {
			if n != k && strings.EqualFold(n, k) {
				return n, k, true
			}
		}
		for _, o := range names[:i] {
			if n != o && strings.EqualFold(n, o) {
				return n, o, true
			}
		}
	}
	return "", "", false
}

// nestedCaseTwin is caseTwin for every object nested in v, at any depth
// (without known keys): arguments are read by the server the same way.
func nestedCaseTwin(v []byte) (key, twin string, found bool) {
	i := skipWS(v, 0)
	if i >= len(v) {
		return "", "", false
	}
	switch v[i] {
	case '{':
		if k, o, ok := caseTwin(v, nil); ok {
			return k, o, true
		}
		var ms [16]member
		for _, m := range members(ms[:0], v) {
			if k, o, ok := nestedCaseTwin(m.value); ok {
				return k, o, true
			}
		}
	case '[':
		j := i + 1
		for {
			j = skipWS(v, j)
			if j >= len(v) || v[j] == ']' {
				return "", "", false
			}
			if v[j] == ',' {
				j++
				continue
			}
			end := skipValue(v, j)
			if k, o, ok := nestedCaseTwin(v[j:end]); ok {
				return k, o, true
			}
			if end <= j {
				return "", "", false
			}
			j = end
		}
	}
	return "", "", false
}

// checkParamCase refuses params with a wrong-case twin of a key the proxy
// reads, or two keys that differ only in case.
func checkParamCase(req *Request) *Response {
	if k, twin, ok := caseTwin(req.Params, paramKeys); ok {
		return rpcError(mcp.CodeInvalidParams, fmt.Sprintf("params hold %q and %q, keys that differ only in case: a server that reads keys regardless of case could take one for the other, so mcpform refuses the request", escape.String(k), escape.String(twin)))
	}
	return nil
}

// argumentCase returns why arguments are refused: a key that differs only
// in case from another key of the same object (at any depth) or from a
// property the locked schema names at the top level.
func argumentCase(args []byte, props map[string]bool) (string, bool) {
	var known []string
	for p := range props {
		known = append(known, p)
	}
	k, twin, ok := caseTwin(args, known)
	if !ok {
		k, twin, ok = nestedCaseTwin(args)
	}
	if !ok {
		return "", false
	}
	return fmt.Sprintf("the arguments hold %q and %q, names that differ only in case: a server that reads names regardless of case could take one for the other", escape.String(k), escape.String(twin)), true
}

// schemaProps returns the property names the locked tool's input schema
// names at its top level.
func schemaProps(tool []byte) map[string]bool {
	props := map[string]bool{}
	var ms [16]member
	for _, m := range members(ms[:0], find(find(tool, "inputSchema"), "properties")) {
		n, _ := stringValue(m.key)
		props[n] = true
	}
	return props
}
