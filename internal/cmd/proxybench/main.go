package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpform/mcpform/internal/benchclient"
	"github.com/mcpform/mcpform/lock"
)

func main() {
	server := flag.Bool("server", false, "act as the echo server (internal)")
	relay := flag.Bool("relay", false, "act as a bare line relay to the command in the arguments (internal)")
	n := flag.Int("n", 20000, "tools/call requests per measurement one at a time (ten times as many with 64 in flight)")
	tools := flag.Int("tools", 1000, "tools in the server's surface and the lock")
	mcpform := flag.String("mcpform", "", "the mcpform binary (default: go build ./cmd/mcpform)")
	flag.Parse()
	if *server {
		echoServer(*tools)
		return
	}
	if *relay {
		if err := relayTo(flag.Args()); err != nil {
			fmt.Fprintln(os.Stderr, "proxybench relay:", err)
			os.Exit(1)
		}
		return
	}
	if err := bench(*n, *tools, *mcpform); err != nil {
		fmt.Fprintln(os.Stderr, "proxybench:", err)
		os.Exit(1)
	}
}

func toolJSON(i int) string {
	return fmt.Sprintf(`{"name":"tool-%04d","description":"Echo tool %d","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}`, i, i)
}

// echoServer is a minimal legacy MCP server: as fast as a server can be, so
// the measurement shows the proxy.
func echoServer(tools int) {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	var list bytes.Buffer
	list.WriteString(`{"tools":[`)
	for i := 1; i <= tools; i++ {
		if i > 1 {
			list.WriteByte(',')
		}
		list.WriteString(toolJSON(i))
	}
	list.WriteString(`]}`)
	for {
		line, err := in.ReadSlice('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			continue
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
		out.WriteString(`{"jsonrpc":"2.0","id":`)
		out.Write(m.ID)
		out.WriteString(`,"result":`)
		out.WriteString(res)
		out.WriteString("}\n")
		if in.Buffered() == 0 {
			out.Flush()
		}
	}
}

// relayTo is the floor for any stdio proxy: it starts argv and copies
// lines both ways with nothing in between, batching like mcpform does
// (a write once no further whole line is buffered).
func relayTo(argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	w, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	pump := func(dst io.Writer, src io.Reader) {
		in := bufio.NewReaderSize(src, 1<<20)
		out := bufio.NewWriterSize(dst, 1<<20)
		for {
			line, err := in.ReadSlice('\n')
			if err != nil {
				out.Flush()
				return
			}
			out.Write(line)
			if !bytes.Contains(peekBuffered(in), []byte("\n")) {
				out.Flush()
			}
		}
	}
	go pump(os.Stdout, r)
	pump(w, os.Stdin)
	w.Close()
	return cmd.Wait()
}

func peekBuffered(r *bufio.Reader) []byte {
	b, _ := r.Peek(r.Buffered())
	return b
}

// client drives one server process over stdio.
type client struct {
	*benchclient.Client
	cmd *exec.Cmd
	w   io.WriteCloser
}

func start(argv []string, env []string) (*client, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &client{Client: benchclient.New(w, r), cmd: cmd, w: w}, nil
}

// call is Call for a benchmark that cannot go on without the answer.
func (c *client) call(method, params string) {
	if err := c.Call(method, params); err != nil {
		fmt.Fprintln(os.Stderr, "proxybench:", err)
		os.Exit(1)
	}
}

func (c *client) close() {
	c.w.Close()
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
	}
}

const callParams = `{"name":"tool-0001","arguments":{"text":"hello"}}`

type result struct {
	p50, p99      time.Duration
	tput1, tput64 float64
}

func measure(c *client, n int) result {
	c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"proxybench","version":"1"}}`)
	c.call("tools/list", `{}`)
	for i := 0; i < 1000; i++ { // warm up
		c.call("tools/call", callParams)
	}
	lat := make([]time.Duration, n)
	t0 := time.Now()
	for i := range lat {
		s := time.Now()
		c.call("tools/call", callParams)
		lat[i] = time.Since(s)
	}
	total1 := time.Since(t0)
	slices.Sort(lat)
	var r result
	r.p50, r.p99 = lat[n/2], lat[n*99/100]
	r.tput1 = float64(n) / total1.Seconds()
	// A burst of 64 goes by in microseconds: ten times as many calls give
	// the measurement a second or so, long enough to be repeatable.
	const inflight = 64
	many := 10 * n
	var wg sync.WaitGroup
	t0 = time.Now()
	for g := 0; g < inflight; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < many/inflight; i++ {
				c.call("tools/call", callParams)
			}
		}()
	}
	wg.Wait()
	r.tput64 = float64(many/inflight*inflight) / time.Since(t0).Seconds()
	return r
}

func rss(pid int) (now, peak string) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "n/a", "n/a"
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "VmRSS:" {
			now = f[1] + " kB"
		}
		if len(f) >= 2 && f[0] == "VmHWM:" {
			peak = f[1] + " kB"
		}
	}
	return now, peak
}

func bench(n, tools int, mcpform string) error {
	dir, err := os.MkdirTemp("", "proxybench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if mcpform == "" {
		mcpform = filepath.Join(dir, "mcpform")
		build := exec.Command("go", "build", "-o", mcpform, "./cmd/mcpform")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building mcpform (run from the module root, or pass -mcpform): %w", err)
		}
	}
	serverArgv := []string{self, "-server", "-tools", strconv.Itoa(tools)}
	e := &lock.Entry{
		Command:         serverArgv,
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
	lockPath := filepath.Join(dir, "mcp.lock")
	if err := lock.Save(lockPath, &lock.File{Generator: "proxybench", Servers: map[string]*lock.Entry{"echo": e}}); err != nil {
		return err
	}

	direct, err := start(serverArgv, []string{})
	if err != nil {
		return err
	}
	d := measure(direct, n)
	direct.close()

	relayed, err := start(append([]string{self, "-relay", "--"}, serverArgv...), []string{})
	if err != nil {
		return err
	}
	r := measure(relayed, n)
	relayed.close()

	auditPath := filepath.Join(dir, "audit.jsonl")
	if d := os.Getenv("PROXYBENCH_AUDIT_DIR"); d != "" {
		auditPath = filepath.Join(d, "proxybench-audit.jsonl")
		defer os.Remove(auditPath)
	}
	proxied, err := start([]string{mcpform, "run", "-lock", lockPath, "-audit", auditPath, "echo"}, []string{"HOME=" + dir})
	if err != nil {
		return err
	}
	p := measure(proxied, n)
	now, peak := rss(proxied.cmd.Process.Pid)
	proxied.close()

	fmt.Printf("tools/call over stdio, %d requests per measurement, lock of %d tools, audit log on\n", n, tools)
	fmt.Printf("(bare relay: a process that only copies lines both ways, the floor for any stdio proxy)\n\n")
	fmt.Printf("%-22s %10s %12s %12s %14s\n", "", "direct", "bare relay", "mcpform run", "mcpform adds")
	us := func(d time.Duration) string { return d.Round(time.Microsecond).String() }
	fmt.Printf("%-22s %10s %12s %12s %14s\n", "latency p50", us(d.p50), us(r.p50), us(p.p50), us(p.p50-d.p50))
	fmt.Printf("%-22s %10s %12s %12s %14s\n", "latency p99", us(d.p99), us(r.p99), us(p.p99), us(p.p99-d.p99))
	pct := func(x, of float64) string { return fmt.Sprintf("%.0f (%.0f%%)", x, 100*x/of) }
	fmt.Printf("%-22s %10.0f %12s %12s\n", "req/s, 1 in flight", d.tput1, pct(r.tput1, d.tput1), pct(p.tput1, d.tput1))
	fmt.Printf("%-22s %10.0f %12s %12s\n", "req/s, 64 in flight", d.tput64, pct(r.tput64, d.tput64), pct(p.tput64, d.tput64))
	fmt.Printf("%-22s %10s %12s %12s\n", "mcpform RSS now, peak", "", now, peak)
	return nil
}
