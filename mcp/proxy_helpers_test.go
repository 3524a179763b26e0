package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// pagedCaller serves tools in pages of two, as a Caller over someone
// else's connection would.
func pagedCaller(tools []string, loop bool) Caller {
	return func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method != "tools/list" {
			return nil, &RPCError{Code: CodeMethodNotFound, Message: "no"}
		}
		var p struct {
			Cursor string `json:"cursor"`
		}
		json.Unmarshal(params, &p)
		start := 0
		if p.Cursor != "" {
			start = int(p.Cursor[0] - '0')
		}
		end := min(start+2, len(tools))
		res := map[string]any{"tools": json.RawMessage("[" + strings.Join(tools[start:end], ",") + "]")}
		switch {
		case loop:
			res["nextCursor"] = "2" // page 2 names itself next: a loop
		case end < len(tools):
			res["nextCursor"] = string(rune('0' + end))
		}
		return json.Marshal(res)
	}
}

func TestListSurfaceOverCaller(t *testing.T) {
	tools := []string{`{"name":"a","inputSchema":{}}`, `{"name":"b","inputSchema":{}}`, `{"name":"c","inputSchema":{}}`}
	s, err := SurfaceFromInitialize(json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := ListSurface(context.Background(), pagedCaller(tools, false), s, nil); err != nil {
		t.Fatal(err)
	}
	if len(s.Tools) != 3 || s.Prompts == nil || len(s.Prompts) != 0 {
		t.Fatalf("tools %d, prompts %v", len(s.Tools), s.Prompts)
	}
	if err := ListSurface(context.Background(), pagedCaller(tools, true), s, nil); err == nil || !strings.Contains(err.Error(), "pagination loop") {
		t.Fatalf("a cursor loop: %v", err)
	}
	dup := []string{tools[0], tools[0]}
	if err := ListSurface(context.Background(), pagedCaller(dup, false), s, nil); err == nil || !strings.Contains(err.Error(), "two tools") {
		t.Fatalf("a duplicate tool: %v", err)
	}
}

func TestSurfaceFromDiscover(t *testing.T) {
	good := `{"supportedVersions":["2026-07-28"],"capabilities":{},"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x"}}}`
	s, err := SurfaceFromDiscover(json.RawMessage(good))
	if err != nil || s.Era != EraModern || s.ProtocolVersion != ModernVersion {
		t.Fatalf("%+v, %v", s, err)
	}
	for _, bad := range []string{
		`{"supportedVersions":["2025-06-18"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{}}}`,
		`{"supportedVersions":["2026-07-28"],"capabilities":{}}`,
		`{"supportedVersions":["2026-07-28"],"capabilities":{},"resultType":"input_required","_meta":{"io.modelcontextprotocol/serverInfo":{}}}`,
	} {
		if _, err := SurfaceFromDiscover(json.RawMessage(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	if _, err := SurfaceFromInitialize(json.RawMessage(`{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{}}`)); err == nil {
		t.Error("accepted an unknown legacy version")
	}
}
