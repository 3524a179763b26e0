package surface

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
)

const savedTool = `{"name":"echo","description":"Echo.","inputSchema":{"type":"object"}}`

// TestParseSaved: the three forms a saved list comes in, and what a probe
// would refuse, refused with a message that says what to do.
func TestParseSaved(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		def        lock.Kind
		named      bool
		kind       lock.Kind
		items      int
		err        string
	}{
		{name: "response", data: `{"jsonrpc":"2.0","id":1,"result":{"tools":[` + savedTool + `]}}`, kind: lock.Tools, items: 1},
		{name: "result", data: `{"tools":[` + savedTool + `],"nextCursor":null}`, kind: lock.Tools, items: 1},
		{name: "bare array", data: " [" + savedTool + "]\n", kind: lock.Tools, items: 1},
		{name: "bare array of a named kind", data: `[{"name":"p"}]`, def: lock.Prompts, named: true, kind: lock.Prompts, items: 1},
		{name: "prompts result", data: `{"prompts":[{"name":"p"}]}`, kind: lock.Prompts, items: 1},
		{name: "templates result", data: `{"resourceTemplates":[{"uriTemplate":"db://{t}","name":"t"}]}`, kind: lock.ResourceTemplates, items: 1},
		{name: "empty list", data: `{"resources":[]}`, kind: lock.Resources, items: 0},

		{name: "error response", data: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no\u202e"}}`, err: "the saved response is an error"},
		{name: "no result", data: `{"jsonrpc":"2.0","id":1}`, err: "has no result"},
		{name: "result not an object", data: `{"jsonrpc":"2.0","id":1,"result":[]}`, err: "result is not an object"},
		{name: "a page", data: `{"tools":[],"nextCursor":"abc"}`, err: "one page of a longer list"},
		{name: "no list", data: `{"items":[]}`, err: "has no list"},
		{name: "two lists", data: `{"tools":[],"prompts":[]}`, err: "more than one list"},
		{name: "named for another kind", data: `{"tools":[]}`, def: lock.Prompts, named: true, err: "named for prompts but holds tools"},
		{name: "list not an array", data: `{"tools":{}}`, err: "tools is not an array"},
		{name: "item not an object", data: `{"tools":[1]}`, err: "tool #1"},
		{name: "tool without inputSchema", data: `{"tools":[{"name":"a"}]}`, err: "inputSchema"},
		{name: "key twice", data: `{"tools":[` + savedTool + `,` + savedTool + `]}`, err: `lists "echo" twice`},
		{name: "duplicate member", data: `{"tools":[],"tools":[` + savedTool + `]}`, err: "not one JSON value mcpform can trust"},
		{name: "invalid UTF-8", data: "{\"tools\":[{\"name\":\"\xff\",\"inputSchema\":{}}]}", err: "not one JSON value mcpform can trust"},
		{name: "not JSON", data: `tools: []`, err: "not one JSON value mcpform can trust"},
		{name: "a string", data: `"tools"`, err: "neither a list result nor an array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := tc.def
			if def == 0 && !tc.named {
				def = lock.Tools
			}
			k, items, err := ParseSaved([]byte(tc.data), def, tc.named)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if k != tc.kind || len(items) != tc.items {
				t.Errorf("got %d %s, want %d %s", len(items), k.Field(), tc.items, tc.kind.Field())
			}
		})
	}
}

// TestReadSavedDirectory: a directory's files are read by name, and a
// file of another name is refused rather than ignored (a typo would
// otherwise check nothing).
func TestReadSavedDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ReadSaved(dir); err == nil || !strings.Contains(err.Error(), "holds no saved list") {
		t.Fatalf("empty directory: %v", err)
	}
	write("tools.json", `{"tools":[`+savedTool+`]}`)
	write("prompts.json", `[{"name":"p"}]`)
	write("README.md", "not a list")
	s, err := ReadSaved(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Lists[lock.Tools]) != 1 || len(s.Lists[lock.Prompts]) != 1 {
		t.Errorf("lists = %v", s.Lists)
	}
	if _, ok := s.Lists[lock.Resources]; ok {
		t.Error("resources were not saved, and must stay as locked")
	}
	write("resource_templates.json", `[]`)
	if _, err := ReadSaved(dir); err == nil || !strings.Contains(err.Error(), "rename or remove resource_templates.json") {
		t.Fatalf("misnamed file: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "resource_templates.json")); err != nil {
		t.Fatal(err)
	}
	write("resources.json", `{"tools":[]}`)
	if _, err := ReadSaved(dir); err == nil || !strings.Contains(err.Error(), "resources.json: the file is named for resources but holds tools") {
		t.Fatalf("a file of the wrong list: %v", err)
	}
	// A FIFO in place of a file is refused, not waited on.
	fifo := filepath.Join(t.TempDir(), "tools.json")
	if err := mkfifo(fifo); err == nil {
		if _, err := ReadSaved(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("a FIFO: %v", err)
		}
	}
}

// TestOverlay: the saved lists replace the locked ones, everything else
// is as locked, and a saved surface equal to the lock is no drift at all.
func TestOverlay(t *testing.T) {
	instr := "Be brief."
	locked, err := Entry(&mcp.Surface{Era: mcp.EraModern, ProtocolVersion: lock.ModernVersion, SupportedVersions: []string{lock.ModernVersion},
		ServerInfo: json.RawMessage(`{"name":"s","version":"1"}`), Instructions: &instr, Capabilities: json.RawMessage(`{"tools":{}}`),
		Tools: []json.RawMessage{json.RawMessage(savedTool)}, Prompts: []json.RawMessage{json.RawMessage(`{"name":"p"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	same, err := Overlay(locked, &Saved{Lists: map[lock.Kind][]json.RawMessage{lock.Tools: {json.RawMessage(savedTool)}}})
	if err != nil {
		t.Fatal(err)
	}
	if d := lock.Compare(locked, same); len(d) != 0 {
		t.Errorf("a saved surface equal to the lock drifts: %v", d)
	}
	moved, err := Overlay(locked, &Saved{Lists: map[lock.Kind][]json.RawMessage{lock.Tools: {}, lock.Resources: {json.RawMessage(`{"uri":"file:///x","name":"x"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range lock.Compare(locked, moved) {
		got = append(got, string(d.Action)+d.Field+":"+d.Key)
	}
	if want := "-tools:echo +resources:file:///x"; strings.Join(got, " ") != want {
		t.Errorf("drift = %v, want %s (the prompts, not saved, stay as locked)", got, want)
	}
}

// FuzzParseSaved: whatever a saved file holds, ParseSaved returns items
// that lock.NewItem accepts, or an error; it never panics.
func FuzzParseSaved(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[` + savedTool + `]}}`,
		`[` + savedTool + `]`,
		`{"prompts":[{"name":"p","arguments":[{"name":"q"}]}],"nextCursor":null}`,
		`{"resourceTemplates":[{"uriTemplate":"db://{t}","name":"t"}]}`,
		`{"tools":[],"nextCursor":"x"}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`,
		`{"tools":[],"tools":[]}`,
		`[1,2]`,
	} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(`[{"name":"p"}]`), true)
	f.Fuzz(func(t *testing.T, data []byte, named bool) {
		def := lock.Tools
		if named {
			def = lock.Prompts
		}
		k, items, err := ParseSaved(data, def, named)
		if err != nil {
			return
		}
		if named && k != def {
			t.Fatalf("a file named for %s gave %s", def.Field(), k.Field())
		}
		for _, it := range items {
			if _, err := lock.NewItem(k, it); err != nil {
				t.Fatalf("accepted an item NewItem refuses: %v", err)
			}
		}
	})
}
