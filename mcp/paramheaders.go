package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
)

// A 2026-07-28 server may ask for tool parameters to be mirrored into
// HTTP headers (an "x-mcp-header" on a parameter's schema: its value goes
// out as Mcp-Param-{name} on each tools/call), so that what routes or
// authorises the request need not parse its body. A client of the HTTP
// transport must mirror them, and must leave out of tools/list a tool
// whose annotations break the rules (ParamHeaders says which): the probe
// does, and `mcpform run` mirrors what the locked schema says.

// ParamHeader is one mirrored parameter: the header's name part and the
// chain of "properties" keys that leads to the parameter.
type ParamHeader struct {
	Name string
	Path []string
}

// maxSafeInteger is JavaScript's largest safe integer: the one range an
// integer parameter may be mirrored in.
const maxSafeInteger = 1<<53 - 1

// ParamHeaders returns the x-mcp-header annotations of a tool's input
// schema, or why they make the tool definition invalid: a name that is
// not an HTTP token or is not unique (case-insensitively), a parameter
// that is not a string, integer or boolean, or an annotation that is not
// reached from the root through "properties" alone (under items, a
// composition, a condition or a $ref).
func ParamHeaders(inputSchema json.RawMessage) ([]ParamHeader, error) {
	if !bytes.Contains(inputSchema, []byte("x-mcp-header")) {
		return nil, nil // the common case, without decoding
	}
	var root any
	d := json.NewDecoder(bytes.NewReader(inputSchema))
	d.UseNumber()
	if err := d.Decode(&root); err != nil {
		return nil, err
	}
	var out []ParamHeader
	seen := map[string]bool{}
	var walk func(node any, path []string, reachable bool) error
	walk = func(node any, path []string, reachable bool) error {
		switch n := node.(type) {
		case []any:
			for _, v := range n {
				if err := walk(v, path, false); err != nil {
					return err
				}
			}
		case map[string]any:
			if v, ok := n["x-mcp-header"]; ok {
				if !reachable || len(path) == 0 {
					return errors.New("an x-mcp-header is not on a parameter reached from the schema's root through properties alone")
				}
				name, err := checkParamHeader(v, n, path)
				if err != nil {
					return err
				}
				if seen[strings.ToLower(name)] {
					return fmt.Errorf("x-mcp-header %q is given twice", escape.String(name))
				}
				seen[strings.ToLower(name)] = true
				out = append(out, ParamHeader{Name: name, Path: append([]string(nil), path...)})
			}
			for k, v := range n {
				switch k {
				case "x-mcp-header", "const", "default", "enum", "examples":
					// values, not schemas
				case "properties":
					props, ok := v.(map[string]any)
					if !ok {
						continue
					}
					for name, sub := range props {
						if err := walk(sub, append(path, name), reachable); err != nil {
							return err
						}
					}
				default:
					if err := walk(v, path, false); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true); err != nil {
		return nil, err
	}
	return out, nil
}

// checkParamHeader checks one annotation v on the parameter schema s.
func checkParamHeader(v any, s map[string]any, path []string) (string, error) {
	where := strings.Join(path, ".")
	name, ok := v.(string)
	if !ok || name == "" || !isToken(name) {
		return "", fmt.Errorf("the x-mcp-header of %s is not an HTTP header name", escape.String(where))
	}
	switch s["type"] {
	case "string", "integer", "boolean":
		return name, nil
	}
	return "", fmt.Errorf("the x-mcp-header of %s is on a parameter that is not a string, integer or boolean", escape.String(where))
}

// isToken reports whether s is an HTTP token (RFC 9110, section 5.6.2).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// paramHeaderValues returns the headers the parameters hs of a call
// with arguments args are mirrored into; a parameter without a value
// has none.
func paramHeaderValues(hs []ParamHeader, args []byte) map[string]string {
	if len(hs) == 0 || len(args) == 0 {
		return nil
	}
	var decoded any
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	if d.Decode(&decoded) != nil {
		return nil
	}
	out := map[string]string{}
	for _, h := range hs {
		v := decoded
		for _, k := range h.Path {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[k]
		}
		switch x := v.(type) {
		case string:
			out["Mcp-Param-"+h.Name] = headerValue(x)
		case bool:
			out["Mcp-Param-"+h.Name] = strconv.FormatBool(x)
		case json.Number:
			if n, err := strconv.ParseInt(x.String(), 10, 64); err == nil && n >= -maxSafeInteger && n <= maxSafeInteger {
				out["Mcp-Param-"+h.Name] = strconv.FormatInt(n, 10)
			}
		}
	}
	return out
}

// headerValue is s as a header value (Mcp-Name, Mcp-Param-*): as it is
// when it is visible ASCII and spaces, without a space at either end,
// else in the base64 sentinel form of the 2026-07-28 transport, which a
// plain value that looks like one takes too.
func headerValue(s string) string {
	plain := !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=")) &&
		!strings.HasPrefix(s, " ") && !strings.HasSuffix(s, " ")
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] <= 0x7e
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}
