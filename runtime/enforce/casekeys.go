package enforce

import (
	"bytes"
	"fmt"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/jsonscan"
	"github.com/mcpform/mcpform/mcp"
)

// The proxy reads member names exactly (mcp.DecodeMessage;
// docs/GUARANTEES.md, section 11); many servers do not. Go's encoding/json
// matches "NAME" to a field tagged "name" and keeps the last of the two, so
// {"name":"echo","NAME":"send"} passes the proxy's checks as a call to echo
// and runs as a call to send, and {"name":"count","Arguments":{…}} carries
// arguments the proxy never saw. A key that differs only in case from
// another key of the same object, or from a key the proxy reads, is
// refused.

// paramKeys are the params members the proxy reads or sets on a forwarded
// request.
var paramKeys = keyList("name", "arguments", "uri", "_meta", "ref", "argument", "requestState", "inputResponses", "cursor", "level", "task", "taskId", "notifications")

func keyList(keys ...string) [][]byte {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = []byte(k)
	}
	return out
}

// caseTwin returns a member key of obj that equals, under Unicode case
// folding but not exactly, another key of obj or one of known; the keys
// are returned unescaped. It allocates only for keys with escapes, and for
// what it returns.
func caseTwin(obj []byte, known [][]byte) (key, twin string, found bool) {
	var ms [16]jsonscan.Member
	return memberCaseTwin(jsonscan.Members(ms[:0], obj), known)
}

// memberCaseTwin is caseTwin for an object's members, already listed.
func memberCaseTwin(list []jsonscan.Member, known [][]byte) (key, twin string, found bool) {
	var buf [16][]byte
	names := buf[:0]
	for _, m := range list {
		names = append(names, keyBytes(m.Key))
	}
	for i, n := range names {
		for _, k := range known {
			if !bytes.Equal(n, k) && bytes.EqualFold(n, k) {
				return string(n), string(k), true
			}
		}
		for _, o := range names[:i] {
			if !bytes.Equal(n, o) && bytes.EqualFold(n, o) {
				return string(n), string(o), true
			}
		}
	}
	return "", "", false
}

// keyBytes returns a member key's text: a view into the key when it has no
// escapes, else its unescaped copy.
func keyBytes(raw []byte) []byte {
	if len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1]
	}
	s, _ := jsonscan.String(raw)
	return []byte(s)
}

// nestedCaseTwin is caseTwin for every object nested in v, at any depth
// (without known keys): arguments are read by the server the same way.
func nestedCaseTwin(v []byte) (key, twin string, found bool) {
	i := jsonscan.SkipWS(v, 0)
	if i >= len(v) {
		return "", "", false
	}
	switch v[i] {
	case '{':
		if k, o, ok := caseTwin(v, nil); ok {
			return k, o, true
		}
		return valuesCaseTwin(v)
	case '[':
		j := i + 1
		for {
			j = jsonscan.SkipWS(v, j)
			if j >= len(v) || v[j] == ']' {
				return "", "", false
			}
			if v[j] == ',' {
				j++
				continue
			}
			end := jsonscan.SkipValue(v, j)
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

// valuesCaseTwin is nestedCaseTwin for the values of the object obj.
func valuesCaseTwin(obj []byte) (key, twin string, found bool) {
	var ms [16]jsonscan.Member
	for _, m := range jsonscan.Members(ms[:0], obj) {
		if k, o, ok := nestedCaseTwin(m.Value); ok {
			return k, o, true
		}
	}
	return "", "", false
}

// checkParamCase refuses params with a wrong-case twin of a key the proxy
// reads, or two keys that differ only in case.
func checkParamCase(c *Call) *Refusal {
	if k, twin, ok := caseTwin(c.Params, paramKeys); ok {
		return refuse(mcp.CodeInvalidParams, fmt.Sprintf("params hold %q and %q, keys that differ only in case: a server that reads keys regardless of case could take one for the other, so mcpform refuses the request", escape.String(k), escape.String(twin)))
	}
	return nil
}

// argumentCase returns why arguments are refused: a key that differs only
// in case from another key of the same object (at any depth) or from a
// property the locked schema names at the top level (props).
func argumentCase(args []byte, props [][]byte) (string, bool) {
	k, twin, ok := caseTwin(args, props)
	if !ok { // args' own keys were compared with each other too
		k, twin, ok = valuesCaseTwin(args)
	}
	if !ok {
		return "", false
	}
	return fmt.Sprintf("the arguments hold %q and %q, names that differ only in case: a server that reads names regardless of case could take one for the other", escape.String(k), escape.String(twin)), true
}

// schemaProps returns the property names a tool's input schema names at its
// top level.
func schemaProps(tool []byte) [][]byte {
	var props [][]byte
	var ms [16]jsonscan.Member
	for _, m := range jsonscan.Members(ms[:0], jsonscan.Find(jsonscan.Find(tool, "inputSchema"), "properties")) {
		n, _ := jsonscan.String(m.Key)
		props = append(props, []byte(n))
	}
	return props
}
