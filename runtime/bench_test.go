package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mcpform/mcpform/internal/benchclient"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/policy"
	"github.com/mcpform/mcpform/runtime/audit"
	"github.com/mcpform/mcpform/runtime/internal/upstream"
)

// newBenchClient drives an in-process proxy over pipes, as proxybench does
// the real binary.
func newBenchClient(b *testing.B, tools int) (*benchclient.Client, func()) {
	return newBenchClientWith(b, tools, "", nil)
}

// newBenchClientWith is newBenchClient whose tools have the output schema
// output (none when "") and whose server answers every tools/call with
// result (its own echo when nil).
func newBenchClientWith(b *testing.B, tools int, output string, result json.RawMessage) (*benchclient.Client, func()) {
	b.Helper()
	dir := b.TempDir()
	var list []json.RawMessage
	for i := 0; i < tools; i++ {
		list = append(list, json.RawMessage(benchTool(i, output)))
	}
	spec := map[string]any{"era": "legacy", "tools": list}
	if result != nil {
		spec["on"] = map[string]any{"tools/call": map[string]any{"do": "result", "result": result}}
	}
	raw, _ := json.Marshal(spec)
	cfgPath := filepath.Join(dir, "upstream.json")
	cfg := writeUpstream(b, raw, cfgPath, "")
	auditLog, err := audit.Open(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := benchclient.New(inW, outR)
	done := make(chan struct{})
	go func() {
		Run(context.Background(), Options{Name: "bench", Entry: lockFor(b, cfg, cfgPath), Stdin: inR, Stdout: outW, Stderr: io.Discard, Audit: auditLog, Session: "bench", LookupEnv: fakeEnv, MaxInFlight: 1024})
		close(done)
	}()
	if err := c.Call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}`); err != nil {
		b.Fatal(err)
	}
	return c, func() {
		inW.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
		auditLog.Close()
	}
}

const benchCall = `{"name":"tool-1","arguments":{"text":"hello"}}`

// benchTool is the definition of the bench's tool i, with the output
// schema output when it is not "".
func benchTool(i int, output string) string {
	t := `{"name":"tool-` + strconv.Itoa(i) + `","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`
	if output != "" {
		t += `,"outputSchema":` + output
	}
	return t + "}"
}

// The structured result the output benchmarks answer with, and the schema
// it satisfies.
const (
	benchOutputSchema = `{"type":"object","properties":{"count":{"type":"integer","minimum":0},"label":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["count","label"]}`
	benchStructured   = `{"content":[{"type":"text","text":"{\"count\":2,\"label\":\"hello\",\"tags\":[\"a\",\"b\"]}"}],"structuredContent":{"count":2,"label":"hello","tags":["a","b"]}}`
)

// BenchmarkProxyToolsCallStructured is BenchmarkProxyToolsCall answered
// with a structuredContent result, side by side: schema=none locks the
// tools without an outputSchema (the result is not checked), schema=output
// with one (the result is validated against it).
func BenchmarkProxyToolsCallStructured(b *testing.B) {
	for _, c := range []struct{ name, output string }{{"none", ""}, {"output", benchOutputSchema}} {
		b.Run("schema="+c.name, func(b *testing.B) {
			cl, stop := newBenchClientWith(b, 1000, c.output, json.RawMessage(benchStructured))
			defer stop()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := cl.Call("tools/call", benchCall); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkProxyToolsCall is one tools/call round trip through the proxy
// (in-process) to the test server, one at a time; BenchmarkProxyToolsCall64
// keeps 64 in flight. Compare with cmd proxybench for the whole binary
// against a direct connection.
func BenchmarkProxyToolsCall(b *testing.B) {
	c, stop := newBenchClient(b, 1000)
	defer stop()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.Call("tools/call", benchCall); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProxyToolsCall64(b *testing.B) {
	c, stop := newBenchClient(b, 1000)
	defer stop()
	b.ReportAllocs()
	b.SetParallelism(32) // 2 cores × 32 = 64 in flight
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := c.Call("tools/call", benchCall); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkMessagePath is the proxy's own work for one tools/call, with no
// process or pipe around it: the request line through the chain (audit,
// quarantine, enforcement, the schema check) to the line for the server,
// and the server's answer back to the line for the client. burst=1 is one
// call at a time (one audit append and two writes per call); burst=64 is
// 64 requests read at once, then their 64 answers, as the readers batch
// them (one append and two writes per burst).
func BenchmarkMessagePath(b *testing.B) {
	for _, burst := range []int{1, 64} {
		b.Run("burst="+strconv.Itoa(burst), func(b *testing.B) { benchMessagePath(b, burst, "", `{"content":[{"type":"text","text":"ok"}]}`) })
	}
}

// BenchmarkMessagePathStructured is BenchmarkMessagePath for a call
// answered with structuredContent, side by side: schema=none locks the tool
// without an outputSchema, schema=output with one, which the result is
// validated against on its way back.
func BenchmarkMessagePathStructured(b *testing.B) {
	for _, c := range []struct{ name, output string }{{"none", ""}, {"output", benchOutputSchema}} {
		for _, burst := range []int{1, 64} {
			b.Run("schema="+c.name+"/burst="+strconv.Itoa(burst), func(b *testing.B) { benchMessagePath(b, burst, c.output, benchStructured) })
		}
	}
}

// benchMessagePath measures the message path for tools with the output
// schema output ("": none) answered with result.
func benchMessagePath(b *testing.B, burst int, output, result string) {
	benchMessagePathPolicy(b, burst, output, result, nil)
}

// BenchmarkMessagePathExpose is the message path side by side without and
// with an expose block (tools = ["tool-1*", "tool-2?"]: 113 of the 1,000
// tools, tool-1 among them): a tools/call of an exposed tool, one at a
// time, and a tools/list, answered from the lock (the whole list, or the
// exposed part of it).
func BenchmarkMessagePathExpose(b *testing.B) {
	for _, c := range []struct {
		name string
		x    *policy.Expose
	}{{"none", nil}, {"expose", &policy.Expose{Tools: []string{"tool-1*", "tool-2?"}}}} {
		pol := &policy.Policy{Expose: c.x}
		b.Run("call/expose="+c.name, func(b *testing.B) {
			benchMessagePathPolicy(b, 1, "", `{"content":[{"type":"text","text":"ok"}]}`, pol)
		})
		b.Run("list/expose="+c.name, func(b *testing.B) { benchList(b, pol) })
	}
}

// benchEntry is the bench's sealed lock entry of 1,000 tools with the
// output schema output ("": none) and the policy pol.
func benchEntry(b *testing.B, output string, pol *policy.Policy) *lock.Entry {
	e := &lock.Entry{
		Command:         []string{"unused"},
		ProtocolVersion: "2025-11-25",
		ServerInfo:      json.RawMessage(`{"name":"echo","version":"1.0.0"}`),
		Capabilities:    json.RawMessage(`{"tools":{}}`),
	}
	for i := 0; i < 1000; i++ {
		it, err := lock.NewItem(lock.Tools, json.RawMessage(benchTool(i, output)))
		if err != nil {
			b.Fatal(err)
		}
		e.Tools = append(e.Tools, it)
	}
	if pol != nil && !pol.IsEmpty() {
		e.Policy = pol
	}
	if err := e.Seal(); err != nil {
		b.Fatal(err)
	}
	return e
}

// benchList is a tools/list answered from the lock, through the chain.
func benchList(b *testing.B, pol *policy.Policy) {
	auditLog, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer auditLog.Close()
	var toClient, toServer countingWriter
	p, err := newProxy(Options{Name: "bench", Entry: benchEntry(b, "", pol), Audit: auditLog, Session: "bench", Stdout: &toClient, Stderr: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	p.connect(&toServer)
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		p.clientLine(req)
		if n%64 == 63 {
			_ = p.audit.FlushBacklog(outcomeBurst)
		}
	}
	b.StopTimer()
	if toServer.lines != 0 {
		b.Fatalf("%d lines to the server, want none", toServer.lines)
	}
}

// benchMessagePathPolicy is benchMessagePath with the lock's policy pol.
func benchMessagePathPolicy(b *testing.B, burst int, output, result string, pol *policy.Policy) {
	e := benchEntry(b, output, pol)
	auditLog, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer auditLog.Close()
	var toClient, toServer countingWriter
	var stderr bytes.Buffer // what the server's side warns of: nothing
	p, err := newProxy(Options{Name: "bench", Entry: e, Audit: auditLog, Session: "bench", Stdout: &toClient, Stderr: &stderr})
	if err != nil {
		b.Fatal(err)
	}
	p.connect(&toServer)
	conn := p.up.(*upstream.Conn)
	var sent int64 // the ids the connection gave: 1, 2, …
	reqs := make([][]byte, burst)
	for i := range reqs {
		reqs[i] = []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"name":"tool-1","arguments":{"text":"hello"}}}`)
	}
	var resp []byte
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += burst {
		first := sent + 1
		sent += int64(burst)
		p.up.Hold()
		for _, r := range reqs {
			p.clientLine(r)
		}
		_ = p.up.Release()
		p.out.Hold()
		for i := range reqs {
			resp = append(resp[:0], `{"jsonrpc":"2.0","id":`...)
			resp = strconv.AppendInt(resp, first+int64(i), 10)
			resp = append(resp, `,"result":`...)
			resp = append(resp, result...)
			resp = append(resp, '}')
			conn.Handle(resp)
		}
		p.out.Release()
		_ = p.audit.FlushBacklog(outcomeBurst) // as the server's reader does before it waits
	}
	b.StopTimer()
	if stderr.Len() > 0 {
		b.Fatalf("the proxy warned: %s", stderr.Bytes())
	}
	if want := (b.N + burst - 1) / burst * burst; toClient.lines != want || toServer.lines != want {
		b.Fatalf("%d lines to the client, %d to the server; want %d each", toClient.lines, toServer.lines, want)
	}
}

type countingWriter struct{ lines int }

func (w *countingWriter) Write(b []byte) (int, error) {
	w.lines += bytes.Count(b, []byte("\n"))
	return len(b), nil
}
