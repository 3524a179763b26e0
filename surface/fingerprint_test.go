package surface

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/lock"
)

func shapeJSON(t testing.TB, s *lock.ResultShape) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}

func TestFingerprint(t *testing.T) {
	tests := []struct{ name, result, want string }{
		{"text only", `{"content":[{"type":"text","text":"The sum of 2 and 3 is 5."}]}`,
			`{"content":["text"]}`},
		{"no content", `{"content":[]}`, `{"content":[]}`},
		{"a run of one type is one entry, order kept", `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"image","data":"","mimeType":"image/png"},{"type":"text","text":"c"}]}`,
			`{"content":["text","image","text"]}`},
		{"tool error", `{"content":[{"type":"text","text":"no"}],"isError":true}`, `{"isError":true,"content":["text"]}`},
		{"isError false is no flag", `{"content":[],"isError":false}`, `{"content":[]}`},
		{"structured, keys sorted, values dropped", `{"content":[{"type":"text","text":"{}"}],"structuredContent":{"total":5,"name":"x","ok":true,"none":null,"ratio":0.5}}`,
			`{"content":["text"],"structuredContent":{"type":"object","properties":{"name":{"type":"string"},"none":{"type":"null"},"ok":{"type":"boolean"},"ratio":{"type":"number"},"total":{"type":"number"}}}}`},
		{"array elements merged", `{"content":[],"structuredContent":{"items":[{"id":1},{"id":2,"tag":"a"},{"id":"3"}]}}`,
			`{"content":[],"structuredContent":{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"id":{"type":["number","string"]},"tag":{"type":"string"}}}}}}}`},
		{"an empty array has no items", `{"content":[],"structuredContent":{"items":[],"o":{}}}`,
			`{"content":[],"structuredContent":{"type":"object","properties":{"items":{"type":"array"},"o":{"type":"object"}}}}`},
		{"a union of an object and an array keeps both", `{"content":[],"structuredContent":{"v":[{"a":1},[true],null]}}`,
			`{"content":[],"structuredContent":{"type":"object","properties":{"v":{"type":"array","items":{"type":["array","null","object"],"properties":{"a":{"type":"number"}},"items":{"type":"boolean"}}}}}}`},
		{"structuredContent null is none", `{"content":[],"structuredContent":null}`, `{"content":[]}`},
		{"huge numbers are numbers", `{"content":[],"structuredContent":{"n":1e999}}`,
			`{"content":[],"structuredContent":{"type":"object","properties":{"n":{"type":"number"}}}}`},
		{"keys that look like markup are kept as written", `{"content":[],"structuredContent":{"<b>&":1}}`,
			`{"content":[],"structuredContent":{"type":"object","properties":{"<b>&":{"type":"number"}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Fingerprint([]byte(tt.result))
			if err != nil {
				t.Fatal(err)
			}
			if got := shapeJSON(t, s); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestFingerprintValueTolerant: results that differ only in values have
// one fingerprint; a moved type, key or block type does not.
func TestFingerprintValueTolerant(t *testing.T) {
	fp := func(r string) string {
		s, err := Fingerprint([]byte(r))
		if err != nil {
			t.Fatal(err)
		}
		return shapeJSON(t, s)
	}
	same := [][2]string{
		{`{"content":[{"type":"text","text":"5"}],"structuredContent":{"sum":5}}`, `{"content":[{"type":"text","text":"7"}],"structuredContent":{"sum":7.25}}`},
		{`{"content":[],"structuredContent":{"l":[1,2,3]}}`, `{"content":[],"structuredContent":{"l":[9]}}`},
		{`{"content":[{"type":"text","text":"a"}]}`, `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`},
	}
	for _, p := range same {
		if a, b := fp(p[0]), fp(p[1]); a != b {
			t.Errorf("value-only change moved the fingerprint:\n%s\n%s", a, b)
		}
	}
	differ := [][2]string{
		{`{"content":[],"structuredContent":{"sum":5}}`, `{"content":[],"structuredContent":{"sum":"5"}}`},
		{`{"content":[],"structuredContent":{"sum":5}}`, `{"content":[],"structuredContent":{"total":5}}`},
		{`{"content":[{"type":"text","text":"a"}]}`, `{"content":[{"type":"image","data":"","mimeType":"image/png"}]}`},
		{`{"content":[{"type":"text","text":"a"}]}`, `{"content":[{"type":"text","text":"a"}],"isError":true}`},
		{`{"content":[{"type":"text","text":"a"},{"type":"image","data":"","mimeType":"x"}]}`, `{"content":[{"type":"image","data":"","mimeType":"x"},{"type":"text","text":"a"}]}`},
	}
	for _, p := range differ {
		if a, b := fp(p[0]), fp(p[1]); a == b {
			t.Errorf("a shape change kept the fingerprint %s", a)
		}
	}
}

func TestFingerprintBadResults(t *testing.T) {
	deep := `{"content":[],"structuredContent":` + strings.Repeat(`{"a":`, lock.MaxShapeDepth+1) + "1" + strings.Repeat("}", lock.MaxShapeDepth+1) + "}"
	var wide strings.Builder
	wide.WriteString(`{"content":[],"structuredContent":{`)
	for i := range lock.MaxShapeNodes + 1 {
		if i > 0 {
			wide.WriteByte(',')
		}
		fmt.Fprintf(&wide, `"k%d":1`, i)
	}
	wide.WriteString("}}")
	tests := []struct{ result, want string }{
		{`[]`, "not a JSON object"},
		{`null`, "not a JSON object"},
		{`{"isError":true}`, "no content"},
		{`{"content":{}}`, "not an array of objects"},
		{`{"content":[1]}`, "not an array of objects"},
		{`{"content":[{}]}`, "no type string"},
		{`{"content":[null]}`, "no type string"},
		{`{"content":[{"type":"\u001b[31mevil"}]}`, "a type MCP does not define"},
		{`{"content":[],"isError":"yes"}`, "isError is not a boolean"},
		{deep, "nests deeper than 32"},
		{wide.String(), "more than the 4096"},
	}
	for _, tt := range tests {
		_, err := Fingerprint([]byte(tt.result))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%.60s: error %v, want %q", tt.result, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "\x1b") {
			t.Errorf("the error quotes the server raw: %q", err)
		}
	}
	// A long array of one shape is one shape, however long.
	long := `{"content":[],"structuredContent":{"l":[` + strings.TrimSuffix(strings.Repeat(`{"a":1},`, 10000), ",") + `]}}`
	if _, err := Fingerprint([]byte(long)); err != nil {
		t.Errorf("10,000 elements of one shape: %v", err)
	}
}

// roundTrip writes a lock whose one entry has a sample of shape s, loads
// it strictly, and returns the loaded shape's JSON.
func roundTrip(t testing.TB, s *lock.ResultShape) string {
	t.Helper()
	e := &lock.Entry{Command: []string{"srv"}, ProtocolVersion: "2025-11-25", ServerInfo: json.RawMessage(`{}`), Capabilities: json.RawMessage(`{}`),
		Mcpform: &lock.Settings{Samples: map[string]lock.Sample{"t": {Arguments: json.RawMessage(`{}`), Shape: s}}}}
	if err := e.Seal(); err != nil {
		t.Fatal(err)
	}
	data, err := lock.Marshal(&lock.File{Servers: map[string]*lock.Entry{"s": e}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := lock.Parse(data)
	if err != nil {
		t.Fatalf("the loader refuses the lock:\n%s\n%v", data, err)
	}
	return shapeJSON(t, f.Servers["s"].Mcpform.Samples["t"].Shape)
}

// TestFingerprintRoundTrip: every fingerprint of TestFingerprint's kind is
// one the lock writes and reads back unchanged.
func TestFingerprintRoundTrip(t *testing.T) {
	s, err := Fingerprint([]byte(`{"content":[{"type":"text","text":"a"},{"type":"image","data":"","mimeType":"x"}],"isError":true,"structuredContent":{"v":[{"a":1},[true],null],"e":[],"o":{},"<&>":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := roundTrip(t, s), shapeJSON(t, s); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// FuzzFingerprint: any bytes give a fingerprint or an error, never a
// panic; a fingerprint is one the lock's strict loader accepts, within its
// bounds, and fingerprinting is deterministic.
func FuzzFingerprint(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"The sum of 2 and 3 is 5."}]}`,
		`{"content":[{"type":"text","text":"a"},{"type":"image","data":"","mimeType":"image/png"}],"isError":true}`,
		`{"content":[],"structuredContent":{"items":[{"id":1},{"id":"2","tag":null}],"n":{"m":[[1],[true]]}}}`,
		`{"content":[{"type":"resource","resource":{"uri":"a://b","text":"x"}},{"type":"resource_link","uri":"a://c","name":"c"},{"type":"audio","data":"","mimeType":"audio/wav"}]}`,
		`{"content":[],"structuredContent":{"v":[{"a":1},[true],null,"s",1.5]}}`,
		`{"content":[],"structuredContent":[]}`,
		`{"content":[],"structuredContent":"s"}`,
		`[]`, `{}`, `{"content":null}`, `{"content":[{"type":1}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Fingerprint(data)
		if err != nil {
			return
		}
		b := []byte(shapeJSON(t, s))
		// The writer writes it and the strict loader reads it back as it
		// was written.
		if back := roundTrip(t, s); back != string(b) {
			t.Fatalf("the lock changed the fingerprint %s into %s", b, back)
		}
		again, err := Fingerprint(data)
		if err != nil || shapeJSON(t, again) != string(b) {
			t.Fatalf("not deterministic: %s vs %v %v", b, again, err)
		}
	})
}

// BenchmarkFingerprint: a small result (get-sum's), and a search-sized
// structured result of 200 objects of 6 keys, each beside a plain
// encoding/json decode of the same bytes.
func BenchmarkFingerprint(b *testing.B) {
	small := []byte(`{"content":[{"type":"text","text":"The sum of 2 and 3 is 5."}]}`)
	var big strings.Builder
	big.WriteString(`{"content":[{"type":"text","text":"see structuredContent"}],"structuredContent":{"total":200,"results":[`)
	for i := range 200 {
		if i > 0 {
			big.WriteByte(',')
		}
		fmt.Fprintf(&big, `{"id":%d,"title":"Result number %d","url":"https://example.com/%d","score":0.%d,"tags":["a","b"],"meta":{"lang":"en"}}`, i, i, i, i)
	}
	big.WriteString("]}}")
	for _, c := range []struct {
		name string
		data []byte
	}{{"Small", small}, {"Structured200", []byte(big.String())}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Fingerprint(c.data); err != nil {
					b.Fatal(err)
				}
			}
		})
		// Side by side: what decoding the same result with encoding/json
		// alone costs, the floor of any reader of it.
		b.Run(c.name+"/DecodeOnly", func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				var v any
				if err := json.Unmarshal(c.data, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
