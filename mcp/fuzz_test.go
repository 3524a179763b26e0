package mcp

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpform/mcpform/internal/strictjson"
)

// FuzzDecodeMessage: no input panics; whatever is accepted is strict JSON,
// and encodes back to one line that decodes to the same message.
// Seeds: testdata/fuzz/FuzzDecodeMessage.
func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := DecodeMessage(line)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || (de.Code != CodeParseError && de.Code != CodeInvalidRequest) {
				t.Fatalf("error %T %v is not a DecodeError with a JSON-RPC code", err, err)
			}
			return
		}
		if err := strictjson.Check(line); err != nil {
			t.Fatalf("accepted a line strictjson refuses: %v", err)
		}
		b, err := AppendMessage(nil, m)
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", m, err)
		}
		if bytes.ContainsAny(b, "\n\r") {
			t.Fatalf("re-encoded frame holds a line break: %q", b)
		}
		back, err := DecodeMessage(b)
		if err != nil {
			t.Fatalf("re-encoded %q does not decode: %v", b, err)
		}
		if d := cmp.Diff(m, back, cmp.Comparer(jsonEqual)); d != "" {
			t.Fatalf("round trip of %q via %q (-first +second):\n%s", line, b, d)
		}
	})
}

// FuzzReader: the framer returns exactly the non-blank lines of its input,
// each under the cap, and refuses (never truncates) the longer ones.
// Seeds: testdata/fuzz/FuzzReader.
func FuzzReader(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n\n{\"b\":2}\r\nlast"), uint16(4))
	f.Fuzz(func(t *testing.T, data []byte, capSeed uint16) {
		max := int(capSeed)%2000 + 1
		got, errs := readAll(NewReader(bytes.NewReader(data), max))
		if errs != nil {
			t.Fatal(errs)
		}
		want := []string{}
		for _, line := range strings.SplitAfter(string(data), "\n") {
			line, ended := strings.CutSuffix(line, "\n")
			if len(line) > max {
				want = append(want, "<too long>")
				continue
			}
			if ended {
				line = strings.TrimSuffix(line, "\r")
			}
			if strings.Trim(line, " \t\r") == "" {
				continue
			}
			want = append(want, line)
		}
		if got == nil {
			got = []string{}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("max %d (-want +got):\n%s", max, d)
		}
	})
}
