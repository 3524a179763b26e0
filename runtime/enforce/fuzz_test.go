package enforce

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/internal/strictjson"
	"github.com/santhosh-tekuri/jsonschema/v6"
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

// FuzzInstance holds instance (the proxy's decoder of arguments for the
// schema check) equal to jsonschema.UnmarshalJSON on every strict JSON
// value.
func FuzzInstance(f *testing.F) {
	for _, s := range []string{`{}`, `{"text":"hello","n":-1.5e3,"ok":true,"none":null}`, `[1,"a",[],{"b":[false]}]`, `"\u00e9\ud83d\ude00\n"`, ` 12 `, `{"a":{"b":{"c":[0.1,2E-3]}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if strictjson.Check(raw) != nil {
			return
		}
		want, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return // not one JSON value for the library either
		}
		if got := instance(raw); !reflect.DeepEqual(got, want) {
			t.Fatalf("instance(%s) = %#v, jsonschema.UnmarshalJSON = %#v", raw, got, want)
		}
	})
}
