package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzVerify reads arbitrary bytes as an audit log: it never panics,
// and a log it accepts stays accepted with a record appended by the writer.
func FuzzVerify(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"time":"2026-01-01T00:00:00Z","pid":1,"event":"start","prev":"","hash":"sha256:0000000000000000000000000000000000000000000000000000000000000000"}` + "\n"))
	f.Add([]byte("not json\n{\"a\":1}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := Verify(bytes.NewReader(data))
		if err != nil {
			return
		}
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		a, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		werr := a.Write(&Record{Event: "start", Detail: "fuzz"})
		a.Close()
		if werr != nil {
			t.Fatal(werr)
		}
		after, _ := os.ReadFile(path)
		if m, err := Verify(bytes.NewReader(after)); err != nil || m != n+1 {
			t.Fatalf("a verified log of %d records, with one appended, reads as %d records: %v", n, m, err)
		}
	})
}
