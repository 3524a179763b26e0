package mcp

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpform/mcpform/internal/npmtest"
)

// listenOnPort runs argv with PORT set to a free loopback port and
// returns the address once it listens.
func listenOnPort(t *testing.T, argv ...string) (addr string, out *bytes.Buffer) {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(argv[0], argv[1:]...)
	for i, a := range cmd.Args {
		cmd.Args[i] = strings.ReplaceAll(a, "$PORT", fmt.Sprint(port))
	}
	cmd.Env = append(os.Environ(), fmt.Sprint("PORT=", port), "PATH="+npmtest.BinDir()+string(os.PathListSeparator)+os.Getenv("PATH"))
	out = new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr = fmt.Sprint("127.0.0.1:", port)
	waitListening(t, addr)
	return addr, out
}

// The npm server-everything in its sse mode (the 2024-11-05 HTTP+SSE
// transport: POST to /sse is a 404, GET /sse names /message?sessionId=…)
// shows a probe over it the same surface as over stdio, found by the
// spec's fallback rule in auto and forced legacy, and spoken to at once
// when the transport is forced; forced Streamable HTTP does not fall back.
func TestProbeSSEEverything(t *testing.T) {
	bin := npmtest.Bin(t, "mcp-server-everything")
	addr, out := listenOnPort(t, bin, "sse")
	stdio, err := Probe(context.Background(), ServerSpec{Name: "stdio", Command: []string{bin, "stdio"}, Env: []string{"PATH"}, Era: EraLegacy})
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + addr + "/sse"
	for _, c := range []struct {
		era       Era
		transport string
	}{{EraAuto, ""}, {EraLegacy, ""}, {EraLegacy, TransportSSE}} {
		s, err := Probe(context.Background(), ServerSpec{Name: "sse", URL: url, Era: c.era, Transport: c.transport, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatalf("%v %q: %v\nserver output: %s", c.era, c.transport, err, out)
		}
		if s.Transport != TransportSSE || s.Era != EraLegacy {
			t.Errorf("%v %q: transport %q era %v, want sse and legacy", c.era, c.transport, s.Transport, s.Era)
		}
		if diff := cmp.Diff(compactAll(t, stdio.Tools), compactAll(t, s.Tools)); diff != "" || len(s.Tools) < 10 {
			t.Errorf("%v %q: %d tools over HTTP+SSE, not those over stdio (-stdio +sse):\n%s", c.era, c.transport, len(s.Tools), diff)
		}
		if diff := cmp.Diff(compactAll(t, stdio.Resources), compactAll(t, s.Resources)); diff != "" {
			t.Errorf("%v %q: resources differ (-stdio +sse):\n%s", c.era, c.transport, diff)
		}
	}
	_, err = Probe(context.Background(), ServerSpec{Name: "sse", URL: url, Era: EraLegacy, Transport: TransportStreamableHTTP, Timeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("forced Streamable HTTP against an HTTP+SSE server: %v, want its 404", err)
	}
}

// supergateway bridges a stdio server (server-everything) to either
// remote transport; the probe finds each, with the same surface.
func TestProbeSupergateway(t *testing.T) {
	gateway := npmtest.Bin(t, "supergateway")
	everything := npmtest.Bin(t, "mcp-server-everything")
	stdio := everything + " stdio"
	var tools [][]string
	for _, c := range []struct {
		transport string
		argv      []string
		path      string
	}{
		{TransportStreamableHTTP, []string{gateway, "--stdio", stdio, "--outputTransport", "streamableHttp", "--stateful", "--port", "$PORT", "--streamableHttpPath", "/mcp"}, "/mcp"},
		{TransportSSE, []string{gateway, "--stdio", stdio, "--outputTransport", "sse", "--port", "$PORT", "--ssePath", "/sse", "--messagePath", "/message"}, "/sse"},
	} {
		t.Run(c.transport, func(t *testing.T) {
			addr, out := listenOnPort(t, c.argv...)
			s, err := Probe(context.Background(), ServerSpec{Name: c.transport, URL: "http://" + addr + c.path, Timeout: 15 * time.Second})
			if err != nil {
				t.Fatalf("%v\nsupergateway: %s", err, out)
			}
			if s.Transport != c.transport || len(s.Tools) < 10 {
				t.Errorf("transport %q with %d tools, want %q and server-everything's", s.Transport, len(s.Tools), c.transport)
			}
			tools = append(tools, compactAll(t, s.Tools))
		})
	}
	if len(tools) == 2 {
		if diff := cmp.Diff(tools[0], tools[1]); diff != "" {
			t.Errorf("the tools differ between the transports (-streamable-http +sse):\n%s", diff)
		}
	}
}
