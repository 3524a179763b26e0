package onboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Client is an MCP client whose configuration file onboard reads and writes.
type Client string

const (
	ClaudeDesktop Client = "claude"
	ClaudeCode    Client = "claude-code"
	VSCode        Client = "vscode"
	Cursor        Client = "cursor"
)

// Clients lists every client, in the order flags document them.
var Clients = []Client{ClaudeDesktop, ClaudeCode, VSCode, Cursor}

// ParseClient returns the client a -client flag names.
func ParseClient(s string) (Client, error) {
	for _, c := range Clients {
		if string(c) == s {
			return c, nil
		}
	}
	names := make([]string, len(Clients))
	for i, c := range Clients {
		names[i] = string(c)
	}
	return "", fmt.Errorf("unknown client %q: use one of %s", s, strings.Join(names, ", "))
}

// Title is the client's product name, for messages.
func (c Client) Title() string {
	switch c {
	case ClaudeDesktop:
		return "Claude Desktop"
	case ClaudeCode:
		return "Claude Code"
	case VSCode:
		return "VS Code"
	case Cursor:
		return "Cursor"
	}
	return string(c)
}

// serversKey is the top-level key under which the client keeps its servers:
// VS Code's mcp.json says "servers", the others "mcpServers".
func (c Client) serversKey() string {
	if c == VSCode {
		return "servers"
	}
	return "mcpServers"
}

// Location is a place a client keeps its configuration.
type Location struct {
	Client Client
	Path   string
}

// Env is what Locations needs to know about the machine: the user's home
// directory, the working directory, the operating system (runtime.GOOS) and
// %APPDATA% on Windows.
type Env struct {
	Home, Dir, GOOS, AppData string
}

// Locations returns the usual configuration files, most specific first: the
// project's own files (Claude Code, VS Code, Cursor) before the user's
// (Claude Desktop, Cursor's global file). import reads the first that exists.
func Locations(e Env) []Location {
	locs := []Location{
		{ClaudeCode, filepath.Join(e.Dir, ".mcp.json")},
		{VSCode, filepath.Join(e.Dir, ".vscode", "mcp.json")},
		{Cursor, filepath.Join(e.Dir, ".cursor", "mcp.json")},
	}
	if p := ClaudeDesktopPath(e); p != "" {
		locs = append(locs, Location{ClaudeDesktop, p})
	}
	if e.Home != "" {
		locs = append(locs, Location{Cursor, filepath.Join(e.Home, ".cursor", "mcp.json")})
	}
	return locs
}

// ClaudeDesktopPath is where Claude Desktop keeps claude_desktop_config.json
// on e's operating system, or "" when it cannot be known.
func ClaudeDesktopPath(e Env) string {
	const file = "claude_desktop_config.json"
	switch e.GOOS {
	case "darwin":
		if e.Home != "" {
			return filepath.Join(e.Home, "Library", "Application Support", "Claude", file)
		}
	case "windows":
		if e.AppData != "" {
			return filepath.Join(e.AppData, "Claude", file)
		}
	default:
		if e.Home != "" {
			return filepath.Join(e.Home, ".config", "Claude", file)
		}
	}
	return ""
}

// DefaultFile is the file `client-config -write` updates for c when no
// -file is given: the project's file for Claude Code, VS Code and Cursor,
// the user's for Claude Desktop.
func DefaultFile(c Client, e Env) string {
	switch c {
	case ClaudeCode:
		return filepath.Join(e.Dir, ".mcp.json")
	case VSCode:
		return filepath.Join(e.Dir, ".vscode", "mcp.json")
	case Cursor:
		return filepath.Join(e.Dir, ".cursor", "mcp.json")
	}
	return ClaudeDesktopPath(e)
}

// DetectClient guesses which client wrote the file at path from its name and
// directory; ok is false when the name says nothing (the keys decide then).
func DetectClient(path string) (c Client, ok bool) {
	base := filepath.Base(path)
	dir := filepath.Base(filepath.Dir(path))
	switch {
	case base == "claude_desktop_config.json":
		return ClaudeDesktop, true
	case base == ".mcp.json":
		return ClaudeCode, true
	case dir == ".vscode":
		return VSCode, true
	case dir == ".cursor":
		return Cursor, true
	}
	return "", false
}

// member is one key of a JSON object, in file order.
type member struct {
	Key   string
	Value json.RawMessage
	// src marks a value read from a file: written back byte for byte, so
	// that rewriting a client's file leaves what it does not change alone.
	src bool
}

// object decodes a JSON object keeping its keys in file order, which a map
// would lose: the generated mcp.hcl lists servers in the order the user
// wrote them. A repeated key is an error.
func object(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		if seen[key] {
			return nil, fmt.Errorf("key %q appears twice", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("reading %q: %w", key, err)
		}
		out = append(out, member{Key: key, Value: v, src: true})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the JSON object")
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("data after the JSON object")
	}
	return out, nil
}

func lookup(ms []member, key string) (json.RawMessage, bool) {
	for _, m := range ms {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// stripJSONC turns JSON with comments (// and /* */) and trailing commas,
// which VS Code and Cursor accept in mcp.json, into plain JSON of the same
// length, so that offsets in errors still point into the file. It reports
// whether anything was removed.
func stripJSONC(data []byte) ([]byte, bool) {
	out := bytes.Clone(data)
	changed := false
	blank := func(i, j int) {
		for k := i; k < j; k++ {
			if out[k] != '\n' && out[k] != '\r' {
				out[k] = ' '
			}
		}
		changed = true
	}
	// walk calls f for every byte outside strings; f returns the index
	// to continue after.
	walk := func(f func(i int) int) {
		inString := false
		for i := 0; i < len(out); i++ {
			c := out[i]
			switch {
			case inString:
				if c == '\\' {
					i++
				} else if c == '"' {
					inString = false
				}
			case c == '"':
				inString = true
			default:
				i = f(i)
			}
		}
	}
	walk(func(i int) int {
		if out[i] != '/' || i+1 >= len(out) {
			return i
		}
		switch out[i+1] {
		case '/':
			j := i
			for j < len(out) && out[j] != '\n' {
				j++
			}
			blank(i, j)
			return j
		case '*':
			end := len(out)
			if j := bytes.Index(out[i+2:], []byte("*/")); j >= 0 {
				end = i + 2 + j + 2
			}
			blank(i, end)
			return end - 1
		}
		return i
	})
	walk(func(i int) int {
		if out[i] != ',' {
			return i
		}
		j := i + 1
		for j < len(out) && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
			j++
		}
		if j < len(out) && (out[j] == '}' || out[j] == ']') {
			blank(i, i+1)
		}
		return i
	})
	return out, changed
}
