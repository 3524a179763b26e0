package lock

import (
	"bytes"
	"os"
	"testing"

	"github.com/gowebpki/jcs"
)

// TestCanonical: Canonical is jcs.Transform's output, and the bytes
// Digest hashes; a duplicate key or truncated JSON is an error.
func TestCanonical(t *testing.T) {
	data, err := os.ReadFile("testdata/time.lock")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range [][]byte{data, []byte(`{"b":1.50,"a":"\u00e9"}`), []byte(`{"b": 1e2 , "a" : [ ] }`)} {
		got, err := Canonical(v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := jcs.Transform(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("Canonical(%.40q) = %.60q, jcs %.60q", v, got, want)
		}
		if d, _ := Digest(v); d != digestCanonical(got) {
			t.Errorf("Digest and Canonical disagree for %.40q", v)
		}
	}
	for _, bad := range []string{`{"a":`, `{"a":1,"a":2}`} {
		if _, err := Canonical([]byte(bad)); err == nil {
			t.Errorf("%s canonicalised", bad)
		}
	}
}
