package main

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseExplainFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    explainFlags
		wantErr bool
	}{
		{nil, explainFlags{}, false},
		{[]string{"MCP-TOOL-REMOVED"}, explainFlags{rule: "MCP-TOOL-REMOVED"}, false},
		{[]string{"mcp-tool-removed"}, explainFlags{rule: "MCP-TOOL-REMOVED"}, false},
		{[]string{"A", "B"}, explainFlags{}, true},
		{[]string{"-x"}, explainFlags{}, true},
	}
	for _, tt := range tests {
		got, err := parseExplainFlags(tt.args, io.Discard)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseExplainFlags(%q) error = %v, want error %v", tt.args, err, tt.wantErr)
			continue
		}
		if err == nil {
			if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(explainFlags{})); d != "" {
				t.Errorf("parseExplainFlags(%q) (-want +got):\n%s", tt.args, d)
			}
		}
	}
}
