package lock

import (
	"encoding/json"
	"fmt"
	"testing"
)

// bigFile is a lock of servers × tools realistic tools each.
func bigFile(b testing.TB, servers, tools int) []byte {
	f := &File{Generator: "bench", Servers: map[string]*Entry{}}
	for s := range servers {
		e := &Entry{
			Command: []string{"npx", "-y", fmt.Sprintf("server-%d@1.0.0", s)}, EnvPassthrough: []string{},
			ProtocolVersion: "2025-11-25",
			ServerInfo:      json.RawMessage(`{"name":"bench","version":"1.0.0"}`),
			Capabilities:    json.RawMessage(`{"tools":{"listChanged":true}}`),
		}
		for i := range tools {
			raw := fmt.Sprintf(`{"name":"tool_%04d","description":"Tool number %d reads a record by id and returns it as JSON, with paging.","inputSchema":{"type":"object","properties":{"id":{"type":"string","description":"record id"},"limit":{"type":"integer","minimum":1,"maximum":100},"mode":{"type":"string","enum":["fast","full"]}},"required":["id"],"additionalProperties":false},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`, i, i)
			it, err := NewItem(Tools, json.RawMessage(raw))
			if err != nil {
				b.Fatal(err)
			}
			e.Tools = append(e.Tools, it)
		}
		if err := e.Seal(); err != nil {
			b.Fatal(err)
		}
		f.Servers[fmt.Sprintf("server%02d", s)] = e
	}
	data, err := Marshal(f)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkParse10x1000 loads and fully verifies a lock of 10 servers ×
// 1,000 tools (the target: under 300 ms and under 4× the file's
// size in allocated memory). It reports bytes allocated per byte of file.
func BenchmarkParse10x1000(b *testing.B) {
	data := bigFile(b, 10, 1000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var allocs float64
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
	_ = allocs
}
