package runtime

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzMatchTemplate feeds client-chosen URIs to the resource template
// matcher: a match for a one-directory template never leaves it, and a
// match for a {+path} template never holds a dot-segment.
func FuzzMatchTemplate(f *testing.F) {
	for _, s := range []string{"file:///docs/readme", "file:///docs/a/b", "file:///docs/..", "file:///docs/%2e%2e", "file:///src/a/../../etc/passwd", "file:///src/a/b.go", "file:///src/./x", "file:///docs/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		if matchTemplate("file:///docs/{name}", uri) {
			rest := strings.TrimPrefix(uri, "file:///docs/")
			if !strings.HasPrefix(uri, "file:///docs/") || strings.Contains(rest, "/") || !dotFree(rest) {
				t.Fatalf("file:///docs/{name} matched %q", uri)
			}
		}
		if matchTemplate("file:///src/{+path}", uri) {
			if !strings.HasPrefix(uri, "file:///src/") || !dotFree(strings.TrimPrefix(uri, "file:///src/")) {
				t.Fatalf("file:///src/{+path} matched %q", uri)
			}
		}
	})
}

// FuzzVerifyAudit reads arbitrary bytes as an audit log: it never panics,
// and a log it accepts stays accepted with a record appended by the writer.
func FuzzVerifyAudit(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"time":"2026-01-01T00:00:00Z","pid":1,"event":"start","prev":"","hash":"sha256:0000000000000000000000000000000000000000000000000000000000000000"}` + "\n"))
	f.Add([]byte("not json\n{\"a\":1}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := VerifyAudit(bytes.NewReader(data))
		if err != nil {
			return
		}
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		a, err := OpenAudit(path)
		if err != nil {
			t.Fatal(err)
		}
		werr := a.Write(&Record{Event: "start", Detail: "fuzz"})
		a.Close()
		if werr != nil {
			t.Fatal(werr)
		}
		after, _ := os.ReadFile(path)
		if m, err := VerifyAudit(bytes.NewReader(after)); err != nil || m != n+1 {
			t.Fatalf("a verified log of %d records, with one appended, reads as %d records: %v", n, m, err)
		}
	})
}
