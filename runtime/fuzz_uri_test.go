package runtime

import (
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
