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
		if plain, err := standardJSON(data); err == nil && len(plain) != len(bytes.TrimPrefix(data, utf8BOM)) {
			t.Fatalf("standardJSON changed the length: %d -> %d", len(data), len(plain))
		}
		for _, c := range Clients {
			merged, err := Merge(c, data, launches)
			if err != nil {
				continue
			}
			checkMerged(t, c, merged, launches)
		}
	})
}

// FuzzClientConfig feeds client files to the client-config reader and
// Merge. Seeds: testdata/fuzz/FuzzClientConfig, testdata/clientconfig and
// the client files of testdata/import. The file is the user's, edited by
// hand and by editors: no input may panic; a file the reader takes packs
// back byte for byte; what Merge writes reads back with the launches in
// it, keeps the file's BOM, line endings, other keys and other servers,
// and merging it again changes nothing.
func FuzzClientConfig(f *testing.F) {
	for _, pattern := range []string{"testdata/clientconfig/*.json*", "testdata/import/*/*.json", "testdata/import/*/.*/*.json", "testdata/import/*/.mcp.json"} {
		files, _ := filepath.Glob(pattern)
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	launches := Launches("/bin/mcpform", "/p/mcp.lock", []string{"a", "b.c"})
	f.Fuzz(func(t *testing.T, data []byte) {
		if cf, err := readClientFile(data); err == nil {
			if got := cf.bytes(); !bytes.Equal(got, data) {
				t.Fatalf("read and packed, the file changed:\n%q\n%q", data, got)
			}
		}
		before, _ := standardJSON(data)
		for _, c := range Clients {
			merged, err := Merge(c, data, launches)
			if err != nil {
				continue
			}
			if bytes.HasPrefix(data, utf8BOM) != bytes.HasPrefix(merged, utf8BOM) {
				t.Fatalf("the BOM was not kept:\n%q\n%q", data, merged)
			}
			if !bytes.Contains(data, []byte("\r")) && bytes.Contains(merged, []byte("\r")) {
				t.Fatalf("a CR in a file that had none:\n%q", merged)
			}
			if n := bytes.Count(data, []byte("\n")); n > 0 && n == bytes.Count(data, []byte("\r\n")) &&
				bytes.Count(merged, []byte("\n")) != bytes.Count(merged, []byte("\r\n")) {
				t.Fatalf("a line ending in LF alone in a CRLF file:\n%q\n%q", data, merged)
			}
			top, servers := checkMerged(t, c, merged, launches)
			if old, err := object(before); err == nil {
				for _, m := range old {
					if m.Key == c.serversKey() {
						if olds, err := object(m.Value); err == nil {
							for _, s := range olds {
								if s.Key == "a" || s.Key == "b.c" {
									continue
								}
								if v, ok := lookup(servers, s.Key); !ok || !bytes.Equal(v, s.Value) {
									t.Fatalf("server %q changed: %s -> %s", s.Key, s.Value, v)
								}
							}
						}
						continue
					}
					if v, ok := lookup(top, m.Key); !ok || !bytes.Equal(v, m.Value) {
						t.Fatalf("key %q changed: %s -> %s", m.Key, m.Value, v)
					}
				}
			}
			again, err := Merge(c, merged, launches)
			if err != nil || !bytes.Equal(again, merged) {
				t.Fatalf("a second merge changed the file (%v):\n%q\n%q", err, merged, again)
			}
		}
	})
}

// checkMerged checks what Merge wrote for c: it reads back as a JSON
// object whose servers object holds every launch. It returns the top-level
// members and the servers' members.
func checkMerged(t *testing.T, c Client, merged []byte, launches []Launch) (top, servers []member) {
	t.Helper()
	plain, err := standardJSON(merged)
	if err != nil {
		t.Fatalf("Merge wrote something it cannot read (%v):\n%q", err, merged)
	}
	top, err = object(plain)
	if err != nil {
		t.Fatalf("Merge wrote something that is not a JSON object (%v):\n%s", err, merged)
	}
	raw, _ := lookup(top, c.serversKey())
	servers, err = object(raw)
	if err != nil {
		t.Fatalf("Merge wrote %s that is not an object: %v", c.serversKey(), err)
	}
	for _, l := range launches {
		v, ok := lookup(servers, l.Name)
		if !ok || !bytes.Contains(v, []byte(`"/p/mcp.lock"`)) {
			t.Fatalf("Merge lost the launch %s:\n%s", l.Name, merged)
		}
	}
	return top, servers
}
