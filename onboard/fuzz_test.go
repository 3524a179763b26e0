package onboard

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lang"
)

// FuzzImport feeds client files to Import and Merge. Seeds:
// testdata/fuzz/FuzzImport and the client files of testdata/import. A
// client file is the user's own, but it is still bytes from elsewhere: no
// input may panic, every mcp.hcl Import returns must parse, and Merge must
// keep the file a JSON object with the launches in it.
func FuzzImport(f *testing.F) {
	files, _ := filepath.Glob("testdata/import/*/*.json")
	more, _ := filepath.Glob("testdata/import/*/.*/*.json")
	hidden, _ := filepath.Glob("testdata/import/*/.mcp.json")
	for _, p := range append(append(files, more...), hidden...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	launches := Launches("/bin/mcpform", "/p/mcp.lock", []string{"a", "b.c"})
	f.Fuzz(func(t *testing.T, data []byte) {
		if res, err := Import(data, Options{}); err == nil {
			if _, diags := lang.Format(res.HCL, lang.ConfigFile); diags.HasErrors() {
				t.Fatalf("Import wrote HCL that does not parse: %s\n%s", diags.Error(), res.HCL)
			}
			for _, n := range res.Names {
				if !strings.Contains(string(res.HCL), "server "+escape.HCLString(n)+" {") {
					t.Fatalf("server %q missing from\n%s", n, res.HCL)
				}
			}
		}
		stripped, _ := stripJSONC(data)
		if len(stripped) != len(data) {
			t.Fatalf("stripJSONC changed the length: %d -> %d", len(data), len(stripped))
		}
		for _, c := range Clients {
			merged, err := Merge(c, data, launches)
			if err != nil {
				continue
			}
			top, err := object(merged)
			if err != nil {
				t.Fatalf("Merge wrote something that is not a JSON object (%v):\n%s", err, merged)
			}
			raw, _ := lookup(top, c.serversKey())
			servers, err := object(raw)
			if err != nil {
				t.Fatalf("Merge wrote %s that is not an object: %v", c.serversKey(), err)
			}
			for _, l := range launches {
				v, ok := lookup(servers, l.Name)
				if !ok || !bytes.Contains(v, []byte(`"/p/mcp.lock"`)) {
					t.Fatalf("Merge lost the launch %s:\n%s", l.Name, merged)
				}
			}
		}
	})
}
