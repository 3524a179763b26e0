package main

import (
	"testing"
)

func TestParseExplainFlags(t *testing.T) {
	testParse(t, parseExplainFlags, []parseCase[explainFlags]{
		{args: nil, want: explainFlags{}},
		{args: []string{"MCP-TOOL-REMOVED"}, want: explainFlags{rule: "MCP-TOOL-REMOVED"}},
		{args: []string{"mcp-tool-removed"}, want: explainFlags{rule: "MCP-TOOL-REMOVED"}},
		{args: []string{"A", "B"}, wantErr: true},
		{args: []string{"-x"}, wantErr: true},
	})
}
