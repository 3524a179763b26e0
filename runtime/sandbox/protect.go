package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
)

// State names mcpform's own files. No write grant of any sandbox may cover
// one of them, nor the home directory (SpecFromPolicy adds it): a server
// that could write them could rewrite what it is allowed (mcp.lock), erase
// its tracks (the audit log), clear its taint or forge taint tokens (the
// taint state holds their key), or replace mcpform itself.
type State struct {
	Lock  string // mcp.lock; its directory is protected too
	Audit string // the audit log and its directory; "" when none
	Taint string // the taint state directory; "" when unknown
}

// Protected returns the paths of s, made absolute against the working
// directory, with the lock's and the audit log's directories and the
// running mcpform binary.
func (s State) Protected() ([]string, error) {
	var out []string
	for _, p := range []struct {
		path   string
		andDir bool
	}{{s.Lock, true}, {s.Audit, true}, {s.Taint, false}} {
		if p.path == "" {
			continue
		}
		abs, err := filepath.Abs(p.path)
		if err != nil {
			return nil, fmt.Errorf("resolving %q: %w", p.path, err)
		}
		out = append(out, abs)
		if p.andDir {
			out = append(out, filepath.Dir(abs))
		}
	}
	if exe, err := os.Executable(); err == nil {
		out = append(out, exe)
	}
	return out, nil
}
