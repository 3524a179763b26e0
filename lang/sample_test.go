package lang

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSamples: sample blocks evaluate to their tool, their arguments as a
// JSON object (from variables and expressions too, {} without any) and
// allow_side_effects, sorted by tool whatever the blocks' order; a server
// without samples has no Samples in its JSON, so its configuration digest
// is what it was before samples.
func TestSamples(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{"mcp.hcl": `
variable "n" {
  type    = number
  default = 3
}

server "everything" {
  command = ["x"]

  sample "get-sum" {
    arguments = { a = 2, b = var.n, nested = { list = [1, "two", true], none = null } }
  }
  sample "add" {
    arguments          = { name = "n-${var.n}" }
    allow_side_effects = true
  }
  sample "get-tiny-image" {}
}

server "plain" {
  command = ["y"]
}
`})
	cfg := mustLoad(t, dir, Options{Version: "0.1.0"})
	want := []Sample{
		{Tool: "add", Arguments: json.RawMessage(`{"name":"n-3"}`), AllowSideEffects: true},
		{Tool: "get-sum", Arguments: json.RawMessage(`{"a":2,"b":3,"nested":{"list":[1,"two",true],"none":null}}`)},
		{Tool: "get-tiny-image", Arguments: json.RawMessage(`{}`)},
	}
	if diff := cmp.Diff(want, cfg.Servers[0].Samples); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(cfg.Servers[1])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"Name":"plain","Addr":"server.plain","Command":["y"],"Env":null,"Protocol":"auto","Timeout":30000000000,"Version":"","ToolVersions":null,"ClientCapabilities":null,"Policy":{}}`; string(b) != want {
		t.Errorf("a server without samples:\n got %s\nwant %s", b, want)
	}
}
