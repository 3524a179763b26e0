package onboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/mcpform/mcpform/internal/escape"
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

// The variables VS Code and Cursor expand in mcp.json for the workspace
// folder and the user's home directory.
const (
	WorkspaceFolder = "${workspaceFolder}"
	UserHome        = "${userHome}"
)

// InWorkspace returns the launches for a file of the workspace folder ws
// (see Workspace): every absolute path under ws (the lock, an mcpform
// binary kept in the project) is written ${workspaceFolder}/…, and every
// other one under the home directory home (an mcpform from go install) as
// ${userHome}/…, which the client expands. The file then holds no path of
// one machine's and can be committed. Other paths stay absolute. ws ""
// returns ls unchanged: a user's own file has no workspace, and absolute
// paths are right there.
func InWorkspace(ls []Launch, ws, home string) []Launch {
	if ws == "" {
		return ls
	}
	out := make([]Launch, len(ls))
	for i, l := range ls {
		args := make([]string, len(l.Args))
		for j, a := range l.Args {
			args[j] = portable(a, ws, home)
		}
		out[i] = Launch{Name: l.Name, Command: portable(l.Command, ws, home), Args: args}
	}
	return out
}

func portable(p, ws, home string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	if r, ok := under(p, ws); ok {
		return join(WorkspaceFolder, r)
	}
	if home != "" {
		if r, ok := under(p, home); ok {
			return join(UserHome, r)
		}
	}
	return p
}

// under is p relative to dir, when p is dir or below it.
func under(p, dir string) (string, bool) {
	r, err := filepath.Rel(dir, p)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return r, true
}

// join writes a path below a variable with forward slashes, which both
// clients' expansions and Windows accept.
func join(variable, rel string) string {
	if rel == "." {
		return variable
	}
	return variable + "/" + filepath.ToSlash(rel)
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
// place, keeping its env and envFile; other launches are appended after the
// last server. Everything else is kept byte for byte: other keys and
// servers, comments and trailing commas (VS Code's and Cursor's mcp.json
// are JSON with comments), the layout, a UTF-8 byte order mark and the
// line endings; added lines take the file's indentation and line ending.
// An entry that already launches what its launch says is left as written.
func Merge(c Client, current []byte, ls []Launch) ([]byte, error) {
	if len(bytes.TrimSpace(bytes.TrimPrefix(current, utf8BOM))) == 0 {
		out := Snippet(c, ls)
		if lineEnding(current) == "\r\n" {
			out = bytes.ReplaceAll(out, []byte("\n"), []byte("\r\n"))
		}
		if bytes.HasPrefix(current, utf8BOM) {
			out = append(bytes.Clone(utf8BOM), out...)
		}
		return out, nil
	}
	f, err := readClientFile(current)
	if err != nil {
		return nil, fmt.Errorf("reading the client configuration: %w", err)
	}
	key := c.serversKey()
	if raw, ok := lookup(f.top, key); ok && string(bytes.TrimSpace(raw)) != "null" {
		// Checked on the standardized bytes, as object checks: an object
		// whose names do not repeat.
		if _, err := object(raw); err != nil {
			return nil, fmt.Errorf("reading %q: %w", key, err)
		}
	}

	top := f.tree.Value.(*hujson.Object)
	unit := indentUnit(top)
	topLayout := layoutOf(top, "", unit, f.eol, false)
	sm := find(top, key)
	if sm == nil {
		appendMember(top, key, &hujson.Object{}, topLayout)
		sm = &top.Members[len(top.Members)-1]
	}
	servers, ok := sm.Value.Value.(*hujson.Object)
	if !ok { // null
		servers = &hujson.Object{}
		sm.Value.Value = servers
	}
	parent, ok := lineIndent(sm.Name.BeforeExtra)
	if !ok {
		parent = ""
	}
	l := layoutOf(servers, parent, unit, f.eol, topLayout.compact)

	for _, launch := range ls {
		e := entry(c, launch)
		old := find(servers, launch.Name)
		indent := l.indent
		if old != nil {
			if ind, ok := lineIndent(old.Name.BeforeExtra); ok {
				indent = ind
			}
			if obj, ok := old.Value.Value.(*hujson.Object); ok {
				for _, k := range carried {
					if m := find(obj, k); m != nil {
						v := m.Value // a copy: its own comments, not those around it
						v.BeforeExtra, v.AfterExtra = nil, nil
						e = append(e, member{Key: k, Value: v.Pack()})
					}
				}
			}
		}
		text := entryText(e, indent, l.unit, f.eol, l.compact)
		if old != nil && sameJSON(old.Value, text) {
			continue
		}
		v, err := hujson.Parse(text)
		if err != nil {
			// entryText writes JSON; this is a bug, not the user's file.
			return nil, fmt.Errorf("writing the entry of %q: %w", launch.Name, err)
		}
		if old != nil {
			old.Value.Value = v.Value
		} else {
			appendMember(servers, launch.Name, v.Value, l)
		}
	}
	return f.bytes(), nil
}

// entryText is the JSON text of one entry, laid out as the entries around
// it: a member per line at indent+unit and the closing brace at indent, or
// all on one line when compact. Values are written as they are (those
// carried from the file keep their own layout).
func entryText(ms []member, indent, unit, eol string, compact bool) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if compact {
			if i > 0 {
				b.WriteString(", ")
			}
		} else {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(eol + indent + unit)
		}
		b.Write(marshal(m.Key))
		b.WriteString(": ")
		b.Write(m.Value)
	}
	if !compact {
		b.WriteString(eol + indent)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// sameJSON reports whether the entry v in the file holds the same JSON as
// text (comments, layout and key order aside): then Merge leaves it as the
// user wrote it.
func sameJSON(v hujson.Value, text []byte) bool {
	plain, err := standardJSON(v.Pack())
	var a, b any
	if err != nil || decodeNumbers(plain, &a) != nil || decodeNumbers(text, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// Bypassing returns the servers of a client file that do not launch
// mcpform run: the client starts them directly, past every check. After
// an import renamed a server, its old entry is one of them.
func Bypassing(c Client, data []byte) []string {
	plain, err := standardJSON(data)
	if err != nil {
		return nil
	}
	top, err := object(plain)
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
		if _, ok := launchOf(e.Command, e.Args); !ok {
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
// when they are equal: what -write changes, for a person to read. The
// file's text is shown as a terminal would not: a BOM and the CR of CRLF
// line endings (on both sides alike, since Merge keeps them) are left out,
// and hidden characters, which a comment may hold, are escaped.
func Diff(nameA, nameB string, a, b []byte) string {
	if bytes.Equal(a, b) {
		return ""
	}
	return textdiff.Unified(nameA, nameB, diffText(a), diffText(b))
}

func diffText(data []byte) string {
	lines := strings.SplitAfter(string(bytes.TrimPrefix(data, utf8BOM)), "\n")
	for i, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		if nl {
			body = strings.TrimSuffix(body, "\r")
		}
		lines[i] = escape.Visible(body)
		if nl {
			lines[i] += "\n"
		}
	}
	return strings.Join(lines, "")
}
