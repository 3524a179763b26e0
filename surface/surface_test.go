package surface

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
)

func TestEntry(t *testing.T) {
	legacy := &mcp.Surface{
		Era:             mcp.EraLegacy,
		ProtocolVersion: "2025-11-25",
		ServerInfo:      json.RawMessage(`{"name":"s","version":"1"}`),
		Capabilities:    json.RawMessage(`{"tools":{}}`),
		Tools: []json.RawMessage{
			json.RawMessage(`{"name":"b","inputSchema":{"type":"object"}}`),
			json.RawMessage(`{"name":"a","inputSchema":{"type":"object"}}`),
		},
	}
	e, err := Entry(legacy)
	if err != nil {
		t.Fatal(err)
	}
	if e.Modern() {
		t.Error("a legacy surface was locked as a 2026-07-28 entry")
	}
	if len(e.Tools) != 2 || e.Tools[0].Key != "a" || e.Tools[1].Key != "b" {
		t.Errorf("tools = %v; want a, b in key order", e.Tools)
	}
	if e.Digests.Surface == "" || e.Digests.Tools["a"] == "" {
		t.Error("the entry is not sealed: no digests")
	}

	modern := *legacy
	modern.Era, modern.ProtocolVersion = mcp.EraModern, mcp.ModernVersion
	modern.SupportedVersions = []string{mcp.ModernVersion}
	m, err := Entry(&modern)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Modern() || m.SupportedVersions[0] != mcp.ModernVersion {
		t.Errorf("supportedVersions = %v; want the discovered ones", m.SupportedVersions)
	}
	if m.Digests.Surface == e.Digests.Surface {
		t.Error("the era is not part of the surface digest")
	}
	modern.SupportedVersions[0] = "changed"
	if m.SupportedVersions[0] != mcp.ModernVersion {
		t.Error("the entry shares the surface's supportedVersions")
	}

	bad := *legacy
	bad.Tools = []json.RawMessage{legacy.Tools[0], json.RawMessage(`{"description":"no name"}`)}
	_, err = Entry(&bad)
	var ie *lock.ItemError
	if !errors.As(err, &ie) || ie.Kind != lock.Tools || ie.Index != 1 {
		t.Fatalf("Entry of a nameless tool = %v; want an ItemError for tools[1]", err)
	}
}
