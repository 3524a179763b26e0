package surface

import (
	"encoding/json"
	"fmt"

	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
)

// Entry turns a probed surface into a sealed lock entry with no command,
// settings or policy yet; a remote server's has only its Remote.Transport.
func Entry(s *mcp.Surface) (*lock.Entry, error) {
	e := &lock.Entry{
		ProtocolVersion: s.ProtocolVersion,
		ServerInfo:      s.ServerInfo,
		Instructions:    s.Instructions,
		Capabilities:    s.Capabilities,
	}
	if s.Transport != "" {
		// How the server was reached; the caller fills in the rest of
		// what the lock pins of it (plan: mcp.hcl's url, headers, auth).
		e.Remote = &lock.Remote{Transport: s.Transport}
	}
	if s.Era == mcp.EraModern {
		e.SupportedVersions = append([]string{}, s.SupportedVersions...)
	}
	if len(e.ServerInfo) == 0 {
		e.ServerInfo = json.RawMessage(`{}`)
	}
	if len(e.Capabilities) == 0 {
		e.Capabilities = json.RawMessage(`{}`)
	}
	lists := map[lock.Kind][]json.RawMessage{
		lock.Tools: s.Tools, lock.Prompts: s.Prompts, lock.Resources: s.Resources, lock.ResourceTemplates: s.ResourceTemplates,
	}
	for _, k := range lock.Kinds {
		items := make([]lock.Item, 0, len(lists[k]))
		for i, raw := range lists[k] {
			it, err := lock.NewItem(k, raw)
			if err != nil {
				return nil, &lock.ItemError{Kind: k, Key: it.Key, Index: i, Err: err}
			}
			items = append(items, it)
		}
		e.SetList(k, items)
	}
	if err := e.Seal(); err != nil {
		return nil, fmt.Errorf("the server's surface cannot be locked: %w", err)
	}
	return e, nil
}
