package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpform/mcpform/lock"
)

// The -http mode: tools/call to a local Streamable HTTP server (a minimal
// legacy one, answering each POST with a JSON body), direct from an HTTP
// client and through `mcpform run`, whose upstream is that server.

// httpEcho serves the echo surface over Streamable HTTP on a loopback
// port and returns its URL.
func httpEcho(tools int) (string, func(), error) {
	var list bytes.Buffer
	list.WriteString(`{"tools":[`)
	for i := 1; i <= tools; i++ {
		if i > 1 {
			list.WriteByte(',')
		}
		list.WriteString(toolJSON(i))
	}
	list.WriteString(`]}`)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &m) != nil || m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var res string
		switch m.Method {
		case "initialize":
			res = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"echo","version":"1.0.0"}}`
		case "tools/list":
			res = list.String()
		case "tools/call":
			res = `{"content":[{"type":"text","text":"ok"}]}`
		default:
			res = `{}`
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, res)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	return "http://" + l.Addr().String() + "/mcp", func() { srv.Close() }, nil
}

// httpClient is the direct way: one POST per call, connections kept alive.
type httpClient struct {
	url  string
	c    *http.Client
	next atomic.Int64
}

func (h *httpClient) call(method, params string) {
	id := h.next.Add(1)
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"` + method + `","params":` + params + `}`
	req, _ := http.NewRequest(http.MethodPost, h.url, bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := h.c.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "proxybench:", err)
		os.Exit(1)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// caller is what measureWith drives: a stdio client or the HTTP one.
type caller interface{ call(method, params string) }

// measureWith is measure for any caller; pid 0 measures no CPU.
func measureWith(c caller, pid, n int) result {
	c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"proxybench","version":"1"}}`)
	c.call("tools/list", `{}`)
	for i := 0; i < 1000; i++ {
		c.call("tools/call", callParams)
	}
	cpu := func() time.Duration {
		if pid == 0 {
			return 0
		}
		return cpuTime(pid)
	}
	lat := make([]time.Duration, n)
	cpu0 := cpu()
	t0 := time.Now()
	for i := range lat {
		s := time.Now()
		c.call("tools/call", callParams)
		lat[i] = time.Since(s)
	}
	total1 := time.Since(t0)
	var r result
	r.cpu1 = (cpu() - cpu0) / time.Duration(n)
	slices.Sort(lat)
	r.p50, r.p99 = lat[n/2], lat[n*99/100]
	r.tput1 = float64(n) / total1.Seconds()
	const inflight = 64
	many := 10 * n / inflight * inflight
	var wg sync.WaitGroup
	cpu0 = cpu()
	t0 = time.Now()
	for g := 0; g < inflight; g++ {
		wg.Go(func() {
			for i := 0; i < many/inflight; i++ {
				c.call("tools/call", callParams)
			}
		})
	}
	wg.Wait()
	r.tput64 = float64(many) / time.Since(t0).Seconds()
	r.cpu64 = (cpu() - cpu0) / time.Duration(many)
	return r
}

func benchHTTP(n, tools int, mcpform, dir string) error {
	url, stop, err := httpEcho(tools)
	if err != nil {
		return err
	}
	defer stop()
	e := &lock.Entry{
		Remote:          &lock.Remote{URL: url, Transport: lock.TransportStreamableHTTP},
		ProtocolVersion: "2025-11-25",
		ServerInfo:      json.RawMessage(`{"name":"echo","version":"1.0.0"}`),
		Capabilities:    json.RawMessage(`{"tools":{}}`),
	}
	for i := 1; i <= tools; i++ {
		it, err := lock.NewItem(lock.Tools, json.RawMessage(toolJSON(i)))
		if err != nil {
			return err
		}
		e.Tools = append(e.Tools, it)
	}
	if err := e.Seal(); err != nil {
		return err
	}
	lockPath := filepath.Join(dir, "remote.lock")
	if err := lock.Save(lockPath, &lock.File{Generator: "proxybench", Servers: map[string]*lock.Entry{"echo": e}}); err != nil {
		return err
	}
	direct := &httpClient{url: url, c: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	d := measureWith(direct, 0, n)
	c, err := start([]string{mcpform, "run", "-lock", lockPath, "-audit", filepath.Join(dir, "remote-audit.jsonl"), "echo"}, []string{"HOME=" + dir})
	if err != nil {
		return err
	}
	r := measureWith(c, c.cmd.Process.Pid, n)
	c.close()
	us := func(d time.Duration) string { return d.Round(time.Microsecond).String() }
	fmt.Printf("\ntools/call over Streamable HTTP (a local server answering JSON): %d calls one at a time, %d with 64 in flight\n\n", n, 10*n/64*64)
	fmt.Printf("%-20s %8s %8s %19s %20s %16s\n", "", "p50", "p99", "req/s 1 in flight", "req/s 64 in flight", "CPU/call 1, 64")
	fmt.Printf("%-20s %8s %8s %19.0f %20.0f %16s\n", "direct HTTP client", us(d.p50), us(d.p99), d.tput1, d.tput64, "")
	fmt.Printf("%-20s %8s %8s %19s %20s %16s\n", "mcpform run", "+"+us(r.p50-d.p50), "+"+us(r.p99-d.p99),
		fmt.Sprintf("%.0f (%.0f%%)", r.tput1, 100*r.tput1/d.tput1), fmt.Sprintf("%.0f (%.0f%%)", r.tput64, 100*r.tput64/d.tput64),
		fmt.Sprintf("%.1f, %.1f µs", float64(r.cpu1)/1e3, float64(r.cpu64)/1e3))
	return nil
}
