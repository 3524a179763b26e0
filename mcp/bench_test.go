package mcp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
)

var benchCall = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"search_notes","arguments":{"query":"quarterly planning","limit":10},"_meta":{"progressToken":"p-42"}}}`)

func benchListResult() []byte {
	var tools []string
	for i := range 50 {
		tools = append(tools, fmt.Sprintf(`{"name":"tool_%d","description":"Does thing number %d with care and attention to detail.","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"where"},"depth":{"type":"integer"}},"required":["path"]},"annotations":{"readOnlyHint":true}}`, i, i))
	}
	return []byte(`{"jsonrpc":"2.0","id":7,"result":{"tools":[` + strings.Join(tools, ",") + `],"nextCursor":"abc"}}`)
}

// BenchmarkDecodeMessage is the proxy's per-message cost of strict
// decoding (duplicate-key check included).
func BenchmarkDecodeMessage(b *testing.B) {
	for _, bc := range []struct {
		name string
		line []byte
	}{{"tools-call", benchCall}, {"tools-list-result-50", benchListResult()}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.line)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeMessage(bc.line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendMessage(b *testing.B) {
	m, err := DecodeMessage(benchCall)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = AppendMessage(buf[:0], m); err != nil {
			b.Fatal(err)
		}
	}
}

// cycle repeats data forever.
type cycle struct {
	data []byte
	pos  int
}

func (c *cycle) Read(p []byte) (int, error) {
	n := copy(p, c.data[c.pos:])
	c.pos = (c.pos + n) % len(c.data)
	return n, nil
}

// BenchmarkReader is the framer's cost per line (one op = one line).
func BenchmarkReader(b *testing.B) {
	for _, bc := range []struct {
		name string
		line []byte
	}{{"200B", benchCall}, {"13KB", benchListResult()}, {"1MB", bytes.Repeat([]byte("x"), 1<<20)}} {
		b.Run(bc.name, func(b *testing.B) {
			r := NewReader(&cycle{data: append(bytes.Clone(bc.line), '\n')}, 0)
			b.SetBytes(int64(len(bc.line) + 1))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.ReadLine(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkConnCall is one request/response through a rpcConn against an
// in-process echo server: what the client side adds to a round trip.
func BenchmarkConnCall(b *testing.B) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	go func() {
		r := NewReader(sr, 0)
		w := bufio.NewWriter(sw)
		for {
			line, err := r.ReadLine()
			if err != nil {
				return
			}
			m, err := DecodeMessage(line)
			if err != nil {
				return
			}
			out, _ := AppendMessage(nil, &Message{ID: m.ID, Result: m.Params})
			w.Write(append(out, '\n'))
			w.Flush()
		}
	}()
	c := newRPCConn(cr, cw, rpcConnOptions{})
	defer sw.Close()
	defer cw.Close()
	params := []byte(`{"name":"search_notes","arguments":{"query":"q"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Call(context.Background(), "tools/call", params); err != nil {
			b.Fatal(err)
		}
	}
}
