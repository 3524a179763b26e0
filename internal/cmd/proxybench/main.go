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
	"strconv"
	"strings"
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
	remote := flag.Bool("http", false, "also measure tools/call to a local Streamable HTTP server, direct and through mcpform run")
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
	if err := bench(*n, *tools, *mcpform, *remote); err != nil {
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
	cpu1, cpu64   time.Duration // the child's CPU per call (0: unknown)
}

func measure(c *client, n int) result { return measureWith(c, c.cmd.Process.Pid, n) }

// cpuTime is the user and system time process pid has used so far (0 when
// /proc cannot say).
func cpuTime(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

func rss(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "n/a"
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			return f[1] + " kB"
		}
	}
	return "n/a"
}

func bench(n, tools int, mcpform string, remote bool) error {
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

	auditPath := filepath.Join(dir, "audit.jsonl")
	if d := os.Getenv("PROXYBENCH_AUDIT_DIR"); d != "" {
		auditPath = filepath.Join(d, "proxybench-audit.jsonl")
		defer os.Remove(auditPath)
	}
	run := func(flags ...string) []string {
		return append(append([]string{mcpform, "run", "-lock", lockPath, "-audit", auditPath}, flags...), "echo")
	}
	ways := []struct {
		name string
		argv []string
		env  []string
	}{
		{"direct", serverArgv, nil},
		{"bare relay", append([]string{self, "-relay", "--"}, serverArgv...), nil},
		{"mcpform run", run(), []string{"HOME=" + dir}},
		{"mcpform run -spin 0", run("-spin", "0"), []string{"HOME=" + dir}},
	}
	results := make([]result, len(ways))
	peak := "n/a"
	for i, w := range ways {
		c, err := start(w.argv, w.env)
		if err != nil {
			return err
		}
		results[i] = measure(c, n)
		if i == 2 {
			peak = rss(c.cmd.Process.Pid)
		}
		c.close()
	}

	fmt.Printf("tools/call over stdio: %d calls one at a time, %d with 64 in flight; lock of %d tools, audit log on\n", n, 10*n/64*64, tools)
	fmt.Printf("(bare relay: a process that only copies lines both ways, the floor for any stdio proxy;\n")
	fmt.Printf(" -spin 0: mcpform sleeps as soon as a pipe is empty instead of polling it for 100 µs)\n\n")
	fmt.Printf("%-20s %8s %8s %19s %20s %16s\n", "", "p50", "p99", "req/s 1 in flight", "req/s 64 in flight", "CPU/call 1, 64")
	us := func(d time.Duration) string { return d.Round(time.Microsecond).String() }
	added := func(d time.Duration) string {
		if d < 0 {
			return us(d) // a noisy run: the direct figure was the slower
		}
		return "+" + us(d)
	}
	d := results[0]
	for i, w := range ways {
		r := results[i]
		p50, p99 := us(r.p50), us(r.p99)
		t1, t64 := fmt.Sprintf("%.0f", r.tput1), fmt.Sprintf("%.0f", r.tput64)
		cpu := ""
		if i > 0 {
			p50, p99 = added(r.p50-d.p50), added(r.p99-d.p99)
			t1 += fmt.Sprintf(" (%.0f%%)", 100*r.tput1/d.tput1)
			t64 += fmt.Sprintf(" (%.0f%%)", 100*r.tput64/d.tput64)
			cpu = fmt.Sprintf("%.1f, %.1f µs", float64(r.cpu1)/1e3, float64(r.cpu64)/1e3)
		}
		fmt.Printf("%-20s %8s %8s %19s %20s %16s\n", w.name, p50, p99, t1, t64, cpu)
	}
	fmt.Printf("\nmcpform run's peak RSS: %s\n", peak)
	if remote {
		return benchHTTP(n, tools, mcpform, dir)
	}
	return nil
}
