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
	if p := claudeDesktopPath(e); p != "" {
		locs = append(locs, Location{ClaudeDesktop, p})
	}
	if e.Home != "" {
		locs = append(locs, Location{Cursor, filepath.Join(e.Home, ".cursor", "mcp.json")})
	}
	return locs
}

// claudeDesktopPath is where Claude Desktop keeps claude_desktop_config.json
// on e's operating system, or "" when it cannot be known.
func claudeDesktopPath(e Env) string {
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
	return claudeDesktopPath(e)
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

// Workspace is the workspace folder whose ${workspaceFolder} the client
// expands in file, "" when it expands none there. VS Code expands it in a
// workspace's .vscode/mcp.json and Cursor in a project's .cursor/mcp.json
// (Cursor's MCP documentation lists ${workspaceFolder}, ${userHome} and
// ${env:NAME} in command, args and env): the folder holding .vscode/ or
// .cursor/, a file teams commit, where a machine's absolute paths do not
// belong. A user's own file has no workspace: Claude Desktop's, Cursor's
// ~/.cursor/mcp.json (its dir is .cursor/, but under home, not a project)
// and VS Code's user mcp.json. Claude Code's .mcp.json is a project's file
// too, but Claude Code expands only environment variables in it, so its
// paths stay absolute.
func Workspace(c Client, file string, e Env) string {
	if c != VSCode && c != Cursor {
		return ""
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return ""
	}
	want := ".vscode"
	if c == Cursor {
		want = ".cursor"
	}
	dir := filepath.Dir(abs)
	if filepath.Base(dir) != want {
		return ""
	}
	ws := filepath.Dir(dir)
	if e.Home != "" && samePath(ws, e.Home) {
		return ""
	}
	return ws
}

func samePath(a, b string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	if a == b {
		return true
	}
	if ra, err := filepath.EvalSymlinks(a); err == nil {
		if rb, err := filepath.EvalSymlinks(b); err == nil {
			return ra == rb
		}
	}
	return false
}
