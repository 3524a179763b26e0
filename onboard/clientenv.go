package onboard

import (
	"encoding/json"
	"slices"
)

// startEnv is the environment every client here gives a stdio server it
// starts, whatever the entry says: the MCP TypeScript SDK's default
// environment (getDefaultEnvironment), its POSIX and its Windows names.
// Claude Desktop starts a server with these and the entry's env alone; VS
// Code, Cursor and Claude Code with their whole environment, which holds
// these too. So PATH and HOME, which npx and uvx need, are always there.
var startEnv = []string{
	"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER",
	"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PROCESSOR_ARCHITECTURE",
	"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE",
}

// InheritsEnvironment reports whether c starts a server with its own whole
// environment (VS Code, Cursor, Claude Code), so that a variable set where
// the client starts reaches the server; Claude Desktop passes only
// startEnv and the entry's env.
func (c Client) InheritsEnvironment() bool {
	return c == VSCode || c == Cursor || c == ClaudeCode
}

// EnvNeed is what one server needs from the client's entry: the variables
// its lock passes through that the client would not set.
type EnvNeed struct {
	Server string
	Names  []string
}

// Unpassed returns, in the launches' order, the variables of need (the
// lock's envPassthrough by server name) that the client c would not give
// the server: neither its start environment nor the env of the entry with
// the launch's name in data, the client file as it will be (nil: no entry
// has an env, as in a printed snippet). An entry with an envFile may set
// any name, so none is reported for it.
func Unpassed(c Client, data []byte, ls []Launch, need map[string][]string) []EnvNeed {
	entries := entryEnvs(c, data)
	var out []EnvNeed
	for _, l := range ls {
		e, ok := entries[l.Name]
		if ok && e.envFile {
			continue
		}
		var missing []string
		for _, n := range need[l.Name] {
			if !slices.Contains(startEnv, n) && !slices.Contains(e.names, n) {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			out = append(out, EnvNeed{Server: l.Name, Names: missing})
		}
	}
	return out
}

type entryEnv struct {
	names   []string
	envFile bool
}

// entryEnvs reads the env names (never the values) of each server entry in
// a client file; an unreadable file has none.
func entryEnvs(c Client, data []byte) map[string]entryEnv {
	out := map[string]entryEnv{}
	if len(data) == 0 {
		return out
	}
	plain, err := standardJSON(data)
	if err != nil {
		return out
	}
	top, err := object(plain)
	if err != nil {
		return out
	}
	raw, ok := lookup(top, c.serversKey())
	if !ok {
		return out
	}
	servers, err := object(raw)
	if err != nil {
		return out
	}
	for _, s := range servers {
		fields, err := object(s.Value)
		if err != nil {
			continue
		}
		var e entryEnv
		if v, ok := lookup(fields, "env"); ok {
			if ms, err := object(v); err == nil {
				for _, m := range ms {
					e.names = append(e.names, m.Key)
				}
			}
		}
		if v, ok := lookup(fields, "envFile"); ok {
			var f string
			e.envFile = json.Unmarshal(v, &f) == nil && f != ""
		}
		out[s.Key] = e
	}
	return out
}
