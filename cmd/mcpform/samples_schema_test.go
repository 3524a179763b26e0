package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestSchemasSamples: the lock apply writes for a server with sample calls
// (a structured shape, a union, an empty array, a sample skipped and one
// allowed side effects) validates against schemas/mcp.lock.schema.json, and
// the schema refuses the forms the loader refuses (not vacuous).
func TestSchemasSamples(t *testing.T) {
	lockSchema := compileSchema(t, "mcp.lock.schema.json")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"mcp.hcl": `server "search" {
  command = ["fakemcp", "search.json"]
  sample "search" {
    arguments = { q = "mcp", n = 2 }
  }
  sample "reindex" {}
  sample "purge" {
    allow_side_effects = true
  }
}
`,
		"search.json": `{"tools": [
    {"name": "search", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "number"}}}, "annotations": {"readOnlyHint": true}},
    {"name": "reindex", "inputSchema": {"type": "object"}},
    {"name": "purge", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": true}}
  ],
  "on": {"tools/call": [
    {"name": "search", "do": "result", "result": {"content": [{"type": "text", "text": "x"}, {"type": "image", "data": "", "mimeType": "image/png"}], "structuredContent": {"hits": [{"id": 1}, {"id": "2", "tags": []}], "next": null}}},
    {"name": "purge", "do": "result", "result": {"content": [], "isError": true}}
  ]}}`,
	})
	mcpformIn(t, dir, 0, "apply", "-auto-approve")
	data, err := os.ReadFile(filepath.Join(dir, "mcp.lock"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"allowSideEffects": true`, `"isError": true`, `"number",`, `"reindex": {`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Fatalf("the lock lacks %s, so the test misses a case:\n%s", want, data)
		}
	}
	if err := schemaErr(lockSchema, data); err != nil {
		t.Fatalf("the lock with samples does not validate: %v\n%s", err, data)
	}
	for _, bad := range [][2]string{
		{`"allowSideEffects": true`, `"allowSideEffects": false`},
		{`"isError": true`, `"isError": false`},
		{`"text",`, `"video",`},
		{`"type": "null"`, `"type": "nil"`},
		{`"arguments": {`, `"args": {`},
	} {
		edited := bytes.Replace(data, []byte(bad[0]), []byte(bad[1]), 1)
		if bytes.Equal(edited, data) {
			t.Fatalf("the lock has no %s to edit", bad[0])
		}
		if schemaErr(lockSchema, edited) == nil {
			t.Errorf("the schema accepts %s", bad[1])
		}
	}
}
