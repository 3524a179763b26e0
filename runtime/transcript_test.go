package runtime

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/mcpform/mcpform/internal/fakemcp"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/policy"
	"github.com/mcpform/mcpform/runtime/audit"
)

var update = flag.Bool("update", false, "rewrite the want sections of runtime/testdata/transcripts")

// TestMain makes the test binary, re-executed with MCPFORM_RUNTIME_FAKE=1
// (no helper binary to build; docs/ARCHITECTURE.md, "How the code is
// tested"), the server the tests run: internal/fakemcp serving the spec file
// in its first argument.
func TestMain(m *testing.M) {
	if os.Getenv("MCPFORM_RUNTIME_FAKE") == "1" {
		fakemcp.Main()
	}
	os.Exit(m.Run())
}

// fakeConfig is a test's server: a fakemcp spec (internal/fakemcp's package
// documentation), and "lock", what differs in the lock the test generates
// (see lockFor).
type fakeConfig struct {
	fakemcp.Spec
	Lock *lockOverrides `json:"lock"`
}

type lockOverrides struct {
	Tools              []json.RawMessage `json:"tools"`
	ClientCapabilities json.RawMessage   `json:"clientCapabilities"`
	Instructions       *string           `json:"instructions"`
	ServerInfo         json.RawMessage   `json:"serverInfo"`
	Era                string            `json:"era"`
	Sandbox            bool              `json:"sandbox"`
	OnDrift            string            `json:"onDrift"`
	Expose             *policy.Expose    `json:"expose"`
}

// fakeServerInfo is the serverInfo of a test's server unless its config
// says otherwise.
const fakeServerInfo = `{"name":"fake","version":"1.0.0"}`

// defaultCaps are the capabilities of a test's server unless its config
// says otherwise.
func defaultCaps(cfg *fakeConfig) json.RawMessage {
	caps := map[string]any{}
	if cfg.Tools != nil {
		caps["tools"] = map[string]bool{"listChanged": true}
	}
	if cfg.Prompts != nil {
		caps["prompts"] = map[string]bool{}
	}
	if cfg.Resources != nil || cfg.ResourceTemplates != nil {
		caps["resources"] = map[string]bool{"subscribe": true}
	}
	b, _ := json.Marshal(caps)
	return b
}

// writeUpstream writes cfgJSON to cfgPath as the spec of a test's server
// and returns it. Where it says nothing, the server is what these tests
// take for granted: locked as lockFor locks it (its serverInfo and
// capabilities), answering calls (tools/call echoes its arguments), with
// ttlMs 1000 on what it may cache, and an escape on stderr at start that
// the proxy must neutralise; unless logPath is "", every line it receives
// is appended to logPath. The config's own bytes are kept as written (what
// the server sends is what the config says, byte for byte).
func writeUpstream(t testing.TB, cfgJSON []byte, cfgPath, logPath string) *fakeConfig {
	t.Helper()
	var cfg fakeConfig
	var members map[string]json.RawMessage
	if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
		t.Fatalf("upstream config: %v", err)
	}
	json.Unmarshal(cfgJSON, &members)
	defaults := [][2]string{{"serverInfo", fakeServerInfo}, {"capabilities", string(defaultCaps(&cfg))},
		{"answerCalls", "true"}, {"ttlMs", "1000"}, {"stderr", `"fake server ready\u001b[31m\n"`}}
	if logPath != "" {
		log, _ := json.Marshal(logPath)
		defaults = append(defaults, [2]string{"log", string(log)})
	}
	spec := []byte("{")
	for _, d := range defaults {
		if _, ok := members[d[0]]; !ok {
			spec = append(spec, `"`+d[0]+`":`+d[1]+`,`...)
		}
	}
	rest := bytes.TrimSpace(cfgJSON)[1:] // the members after the object's "{"
	if bytes.TrimSpace(rest)[0] == '}' {
		spec = bytes.TrimSuffix(spec, []byte(","))
	}
	if err := os.WriteFile(cfgPath, append(spec, rest...), 0o644); err != nil {
		t.Fatal(err)
	}
	return &cfg
}

// lockFor builds the sealed lock entry a transcript's server is locked as:
// its surface, with the "lock" overrides applied, started as this test
// binary re-executed.
func lockFor(t testing.TB, cfg *fakeConfig, cfgPath string) *lock.Entry {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := &lock.Entry{
		Command:        []string{exe, cfgPath},
		EnvPassthrough: []string{"MCPFORM_RUNTIME_FAKE"},
		ServerInfo:     json.RawMessage(fakeServerInfo),
		Instructions:   cfg.Instructions,
		Capabilities:   defaultCaps(cfg),
	}
	if cfg.ServerInfo != nil {
		e.ServerInfo = cfg.ServerInfo
	}
	if cfg.Capabilities != nil {
		e.Capabilities = cfg.Capabilities
	}
	if cfg.Era == "modern" {
		e.ProtocolVersion = "2026-07-28"
		e.SupportedVersions = []string{"2026-07-28"}
	} else {
		e.ProtocolVersion = "2025-11-25"
	}
	tools := cfg.Tools
	if o := cfg.Lock; o != nil {
		if o.Tools != nil {
			tools = o.Tools
		}
		if o.Instructions != nil {
			e.Instructions = o.Instructions
		}
		if o.Era == "modern" {
			e.ProtocolVersion = "2026-07-28"
			e.SupportedVersions = []string{"2026-07-28"}
		}
		if o.ServerInfo != nil {
			e.ServerInfo = o.ServerInfo
		}
		if o.ClientCapabilities != nil {
			e.Mcpform = &lock.Settings{ClientCapabilities: o.ClientCapabilities}
		}
		if o.Sandbox {
			e.Policy = &policy.Policy{Sandbox: &policy.Sandbox{}}
		}
		if o.OnDrift != "" || o.Expose != nil {
			if e.Policy == nil {
				e.Policy = &policy.Policy{}
			}
			e.Policy.OnDrift, e.Policy.Expose = o.OnDrift, o.Expose
		}
	}
	lists := [4][]json.RawMessage{tools, cfg.Prompts, cfg.Resources, cfg.ResourceTemplates}
	for i, k := range lock.Kinds {
		var items []lock.Item
		for _, raw := range lists[i] {
			it, err := lock.NewItem(k, raw)
			if err != nil {
				t.Fatalf("lock item: %v", err)
			}
			items = append(items, it)
		}
		e.SetList(k, items)
	}
	if err := e.Seal(); err != nil {
		t.Fatal(err)
	}
	return e
}

func fakeEnv(name string) (string, bool) {
	if name == "MCPFORM_RUNTIME_FAKE" {
		return "1", true
	}
	return "", false
}

// session is one proxy run in-process, driven like a client would.
type session struct {
	t      testing.TB
	in     *io.PipeWriter
	lines  chan []byte
	got    []string
	stderr syncBuffer
	done   chan error
	audit  string
	log    string
	seen   map[string]bool // ids of responses received
	// auditLog is the run's open audit log.
	auditLog *audit.Log
}

// add records one output line.
func (s *session) add(l []byte) {
	s.got = append(s.got, string(l))
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(l, &m) == nil && m.Method == "" && m.ID != nil {
		s.seen[string(m.ID)] = true
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startSession writes cfg for the fake server and starts the proxy on it.
func startSession(t testing.TB, cfgJSON []byte, opts Options) *session {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "upstream.json")
	logPath := filepath.Join(dir, "upstream.log")
	cfg := writeUpstream(t, cfgJSON, cfgPath, logPath)
	s := &session{t: t, lines: make(chan []byte, 1024), done: make(chan error, 1), seen: map[string]bool{}, log: logPath, audit: filepath.Join(dir, "audit.jsonl")}
	audit, err := audit.Open(s.audit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { audit.Close() })
	s.auditLog = audit
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s.in = inW
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			s.lines <- bytes.Clone(sc.Bytes())
		}
		close(s.lines)
	}()
	opts.Name = "fake"
	if opts.Entry == nil {
		opts.Entry = lockFor(t, cfg, cfgPath)
	}
	opts.Stdin, opts.Stdout, opts.Stderr = inR, outW, &s.stderr
	opts.Audit = audit
	opts.Session = "test-session"
	var tokens atomic.Int64 // relay tokens the scripts can name
	opts.relayToken = func() string { return relayPrefix + "test-" + strconv.FormatInt(tokens.Add(1), 10) }
	if opts.LookupEnv == nil {
		opts.LookupEnv = fakeEnv
	}
	opts.ShutdownGrace = 500 * time.Millisecond
	go func() {
		err := Run(context.Background(), opts)
		outW.Close()
		s.done <- err
	}()
	t.Cleanup(func() { inW.Close() })
	return s
}

func (s *session) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("writing to the proxy: %v", err)
	}
}

// await collects output lines until the response with id arrives.
func (s *session) await(id string) {
	s.t.Helper()
	timeout := time.After(20 * time.Second)
	for !s.seen[id] {
		select {
		case l, ok := <-s.lines:
			if !ok {
				return
			}
			s.add(l)
		case <-timeout:
			s.t.Fatalf("no response with id %s; got so far:\n%s", id, strings.Join(s.got, "\n"))
		}
	}
}

// settle collects output lines for a moment.
func (s *session) settle(d time.Duration) {
	t := time.After(d)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				return
			}
			s.add(l)
		case <-t:
			return
		}
	}
}

// finish closes the client's input and waits for the proxy to end.
func (s *session) finish() error {
	s.in.Close()
	var err error
	select {
	case err = <-s.done:
	case <-time.After(30 * time.Second):
		s.t.Fatal("the proxy did not end after the client closed its input")
	}
	for l := range s.lines {
		s.add(l)
	}
	return err
}

func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/transcripts/*.txtar")
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runTranscript(t, file)
		})
	}
}

func runTranscript(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string][]byte{}
	for _, f := range ar.Files {
		sections[f.Name] = f.Data
	}
	var opts Options
	for _, l := range strings.Split(string(ar.Comment), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok {
			continue
		}
		d, _ := time.ParseDuration(strings.TrimSpace(v))
		switch k {
		case "request-timeout":
			opts.RequestTimeout = d
		case "write-timeout":
			opts.WriteTimeout = d
		case "start-timeout":
			opts.StartTimeout = d
		case "max-line":
			fmt.Sscan(strings.TrimSpace(v), &opts.MaxLineSize)
		}
	}
	s := startSession(t, sections["upstream"], opts)
	for _, line := range strings.Split(string(sections["client"]), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "async "):
			s.send(strings.TrimPrefix(line, "async "))
		case strings.HasPrefix(line, "await "):
			s.await(strings.TrimPrefix(line, "await "))
		case strings.HasPrefix(line, "sleep "):
			d, _ := time.ParseDuration(strings.TrimPrefix(line, "sleep "))
			s.settle(d)
		case strings.HasPrefix(line, "raw "):
			// Sent as is, even when it is not JSON.
			s.send(strings.TrimPrefix(line, "raw "))
			s.settle(150 * time.Millisecond)
		default:
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			s.send(line)
			if json.Unmarshal([]byte(line), &m) == nil && m.ID != nil && m.Method != "" {
				s.await(string(m.ID))
			} else {
				s.settle(150 * time.Millisecond)
			}
		}
	}
	runErr := s.finish()
	client := ""
	for _, l := range s.got {
		client += l + "\n"
	}
	if runErr != nil {
		for _, l := range strings.Split(runErr.Error(), "\n") {
			client += "# run: " + l + "\n"
		}
	} else {
		client += "# run: ok\n"
	}
	upstream, _ := os.ReadFile(s.log)
	got := map[string]string{
		"want-client":   client,
		"want-upstream": string(upstream),
		"want-stderr":   s.stderr.String(),
		"want-audit":    auditSummary(t, s.audit),
	}
	if *update {
		for i := range ar.Files {
			if g, ok := got[ar.Files[i].Name]; ok {
				ar.Files[i].Data = []byte(g)
				delete(got, ar.Files[i].Name)
			}
		}
		for _, name := range []string{"want-client", "want-upstream", "want-stderr", "want-audit"} {
			if g, ok := got[name]; ok {
				ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(g)})
			}
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, name := range []string{"want-client", "want-upstream", "want-stderr", "want-audit"} {
		want, ok := sections[name]
		if !ok {
			t.Errorf("missing section %s (run with -update)", name)
			continue
		}
		w, g := string(want), got[name]
		if name == "want-stderr" || name == "want-audit" {
			// Lines from concurrent sources (the server's stderr and the
			// proxy's; a re-verification and a response) may interleave
			// either way: compare them as sets of lines.
			w, g = sortedLines(w), sortedLines(g)
		}
		if d := cmp.Diff(w, g); d != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", name, d)
		}
	}
}

// auditSummary verifies the audit log and returns its records without the
// fields that change from run to run.
func auditSummary(t testing.TB, path string) string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := audit.Verify(f); err != nil {
		t.Errorf("audit log: %v", err)
	}
	data, _ := os.ReadFile(path)
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(l), &r) != nil {
			continue
		}
		var parts []string
		for _, k := range []string{"event", "method", "id", "item", "args", "outcome", "detail"} {
			v, ok := r[k]
			if !ok {
				continue
			}
			if k == "detail" && r["event"] == "start" {
				continue
			}
			if k == "args" {
				b, _ := json.Marshal(v)
				parts = append(parts, "args="+string(b))
				continue
			}
			parts = append(parts, fmt.Sprint(v))
		}
		b.WriteString(strings.Join(parts, " | ") + "\n")
	}
	return b.String()
}

func sortedLines(s string) string {
	l := strings.Split(s, "\n")
	slices.Sort(l)
	return strings.Join(l, "\n")
}

// Blank lines between messages are skipped, and a message followed by one
// in the same write is still answered: the reader does not wait with the
// message's effect held back.
func TestBlankLinesAfterARequest(t *testing.T) {
	s := startSession(t, []byte(`{"era": "legacy", `+echoTools+`}`), Options{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n\r\n")
	s.await("1")
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}` + "\n")
	s.await("2")
	if err := s.finish(); err != nil {
		t.Fatal(err)
	}
}
