package onboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpform/mcpform/internal/textdiff"
)

// Launch is how a client starts one locked server: through `mcpform run`,
// which reads the command from mcp.lock, never from the client's file.
type Launch struct {
	Name    string // the lock's name of the server
	Command string // the absolute path of the mcpform binary
	Args    []string
}

// Launches returns one Launch per locked server name:
// `MCPFORM run -lock LOCK NAME`, both paths absolute so that the client can
// start it from any directory.
func Launches(mcpform, lockPath string, names []string) []Launch {
	out := make([]Launch, len(names))
	for i, n := range names {
		out[i] = Launch{Name: n, Command: mcpform, Args: []string{"run", "-lock", lockPath, n}}
	}
	return out
}

// entry is the client's JSON object for one launch. Claude Code's
// `claude mcp add` and VS Code write "type": "stdio"; Claude Desktop and
// Cursor have no type for stdio servers.
func entry(c Client, l Launch) []member {
	var ms []member
	if c == ClaudeCode || c == VSCode {
		ms = append(ms, member{Key: "type", Value: json.RawMessage(`"stdio"`)})
	}
	args := make([]string, len(l.Args))
	for i, a := range l.Args {
		args[i] = string(marshal(a))
	}
	ms = append(ms, member{Key: "command", Value: marshal(l.Command)},
		member{Key: "args", Value: json.RawMessage("[" + strings.Join(args, ", ") + "]"), src: true})
	return ms
}

// Snippet is the client configuration holding just the launches, ready to
// paste into the client's file.
func Snippet(c Client, ls []Launch) []byte {
	servers := make([]member, len(ls))
	for i, l := range ls {
		servers[i] = member{Key: l.Name, Value: encodeObject(entry(c, l), "    "), src: true}
	}
	return append(encodeObject([]member{{Key: c.serversKey(), Value: encodeObject(servers, "  "), src: true}}, ""), '\n')
}

// carried are the keys of an existing entry that Merge keeps when it
// replaces the entry: the values the user gave the server's environment
// (mcp.lock names the variables; the values stay where they were).
var carried = []string{"env", "envFile"}

// Merge returns the client file current (nil or empty for a new file) with
// the launches written in: an entry with a launch's name is replaced in
// place, keeping its env and envFile; other launches are appended. Every
// other key and server is kept as it was, in order. A file with comments or
// trailing commas is refused, since rewriting it would drop them.
func Merge(c Client, current []byte, ls []Launch) ([]byte, error) {
	var top []member
	if len(bytes.TrimSpace(current)) > 0 {
		var err error
		if top, err = object(current); err != nil {
			if plain, changed := stripJSONC(current); changed {
				if _, err2 := object(plain); err2 == nil {
					return nil, fmt.Errorf("the file has comments or trailing commas, which rewriting it would drop: paste the printed configuration into it instead")
				}
			}
			return nil, fmt.Errorf("reading the client configuration: %w", err)
		}
	}
	key := c.serversKey()
	var servers []member
	at := -1
	for i, m := range top {
		if m.Key == key {
			at = i
			if string(bytes.TrimSpace(m.Value)) != "null" {
				var err error
				if servers, err = object(m.Value); err != nil {
					return nil, fmt.Errorf("reading %q: %w", key, err)
				}
			}
		}
	}
	for _, l := range ls {
		e := entry(c, l)
		replaced := false
		for i, s := range servers {
			if s.Key != l.Name {
				continue
			}
			if old, err := object(s.Value); err == nil {
				for _, k := range carried {
					if v, ok := lookup(old, k); ok {
						e = append(e, member{Key: k, Value: v, src: true})
					}
				}
			}
			servers[i] = member{Key: s.Key, Value: encodeObject(e, "    "), src: true}
			replaced = true
		}
		if !replaced {
			servers = append(servers, member{Key: l.Name, Value: encodeObject(e, "    "), src: true})
		}
	}
	val := member{Key: key, Value: encodeObject(servers, "  "), src: true}
	if at >= 0 {
		top[at] = val
	} else {
		top = append(top, val)
	}
	return append(encodeObject(top, ""), '\n'), nil
}

// Bypassing returns the servers of a client file that do not launch
// mcpform run: the client starts them directly, past every check. After
// an import renamed a server, its old entry is one of them.
func Bypassing(c Client, data []byte) []string {
	top, err := object(data)
	if err != nil {
		return nil
	}
	raw, ok := lookup(top, c.serversKey())
	if !ok {
		return nil
	}
	servers, err := object(raw)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range servers {
		var e struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}
		json.Unmarshal(m.Value, &e)
		base := e.Command[strings.LastIndexAny(e.Command, `/\`)+1:]
		base = strings.TrimSuffix(strings.ToLower(base), ".exe")
		if base != "mcpform" || len(e.Args) == 0 || e.Args[0] != "run" {
			out = append(out, m.Key)
		}
	}
	return out
}

// encodeObject writes members as a JSON object indented by two spaces per
// level, starting at indent. Values read from a file (src) and values
// already encoded at their depth are written as they are; the others are
// indented.
func encodeObject(ms []member, indent string) json.RawMessage {
	if len(ms) == 0 {
		return json.RawMessage("{}")
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, m := range ms {
		b.WriteString(indent + "  ")
		b.Write(marshal(m.Key))
		b.WriteString(": ")
		var v bytes.Buffer
		if m.src || json.Indent(&v, m.Value, indent+"  ", "  ") != nil {
			b.Write(m.Value)
		} else {
			b.Write(v.Bytes())
		}
		if i < len(ms)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(indent + "}")
	return b.Bytes()
}

func marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // strings and string slices always encode
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// Diff returns a unified diff of a and b with three lines of context, ""
// when they are equal: what -write changes, for a person to read.
func Diff(nameA, nameB string, a, b []byte) string {
	if bytes.Equal(a, b) {
		return ""
	}
	return textdiff.Unified(nameA, nameB, string(a), string(b))
}
