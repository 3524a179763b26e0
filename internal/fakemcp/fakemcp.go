package fakemcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Spec is the file format described in the package documentation.
type Spec struct {
	Era               string                   `json:"era"`
	ProtocolVersion   string                   `json:"protocolVersion"`
	SupportedVersions []string                 `json:"supportedVersions"`
	ServerInfo        json.RawMessage          `json:"serverInfo"`
	Instructions      *string                  `json:"instructions"`
	Capabilities      json.RawMessage          `json:"capabilities"`
	Tools             []json.RawMessage        `json:"tools"`
	Prompts           []json.RawMessage        `json:"prompts"`
	Resources         []json.RawMessage        `json:"resources"`
	ResourceTemplates []json.RawMessage        `json:"resourceTemplates"`
	GenerateTools     int                      `json:"generateTools"`
	PageSize          int                      `json:"pageSize"`
	Stderr            string                   `json:"stderr"`
	Log               string                   `json:"log"`
	StartDelayMs      int                      `json:"startDelayMs"`
	On                map[string]*Misbehaviour `json:"on"`
}

// Misbehaviour is one entry of "on".
type Misbehaviour struct {
	Do      string          `json:"do"`
	Times   int             `json:"times"`
	Status  int             `json:"status"`
	Text    string          `json:"text"`
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Result  json.RawMessage `json:"result"`

	seen int
}

// Main runs the server with the spec file named by the first argument and
// exits.
func Main() {
	os.Exit(Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Run serves the spec file args[0] on stdin/stdout until stdin ends and
// returns the exit status.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: fakemcp SPEC.json")
		return 2
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintln(stderr, "fakemcp:", err)
		return 2
	}
	var spec Spec
	if err := json.Unmarshal(data, &spec); err != nil {
		fmt.Fprintf(stderr, "fakemcp: %s: %v\n", args[0], err)
		return 2
	}
	s, err := newServer(&spec, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "fakemcp:", err)
		return 2
	}
	// A slow start, as a server launched through npx or go run has.
	time.Sleep(time.Duration(spec.StartDelayMs) * time.Millisecond)
	return s.serve(stdin)
}

type server struct {
	spec   *Spec
	out    *bufio.Writer
	stderr io.Writer
	log    *os.File
	caps   json.RawMessage
	lists  map[string][]json.RawMessage // by method
}

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

var listFields = map[string]string{
	"tools/list":               "tools",
	"prompts/list":             "prompts",
	"resources/list":           "resources",
	"resources/templates/list": "resourceTemplates",
}

var listCaps = map[string]string{
	"tools/list":               "tools",
	"prompts/list":             "prompts",
	"resources/list":           "resources",
	"resources/templates/list": "resources",
}

func newServer(spec *Spec, stdout, stderr io.Writer) (*server, error) {
	s := &server{spec: spec, out: bufio.NewWriter(stdout), stderr: stderr, lists: map[string][]json.RawMessage{}}
	switch spec.Era {
	case "":
		spec.Era = "legacy"
	case "legacy", "modern", "both":
	default:
		return nil, fmt.Errorf("era %q: want legacy, modern or both", spec.Era)
	}
	if spec.ServerInfo == nil {
		spec.ServerInfo = json.RawMessage(`{"name":"fakemcp","version":"1.0.0"}`)
	}
	if spec.SupportedVersions == nil {
		spec.SupportedVersions = []string{"2026-07-28"}
	}
	tools := spec.Tools
	for i := 1; i <= spec.GenerateTools; i++ {
		tools = append(tools, json.RawMessage(fmt.Sprintf(`{"name":"tool-%04d","description":"generated tool %d","inputSchema":{"type":"object"}}`, i, i)))
	}
	s.lists["tools/list"] = tools
	s.lists["prompts/list"] = spec.Prompts
	s.lists["resources/list"] = spec.Resources
	s.lists["resources/templates/list"] = spec.ResourceTemplates
	s.caps = spec.Capabilities
	if s.caps == nil {
		caps := map[string]any{}
		if tools != nil {
			caps["tools"] = map[string]bool{"listChanged": true}
		}
		if spec.Prompts != nil {
			caps["prompts"] = map[string]bool{"listChanged": true}
		}
		if spec.Resources != nil || spec.ResourceTemplates != nil {
			caps["resources"] = map[string]bool{"listChanged": true}
		}
		s.caps, _ = json.Marshal(caps)
	}
	if spec.Log != "" {
		f, err := os.OpenFile(spec.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		s.log = f
	}
	return s, nil
}

func (s *server) serve(stdin io.Reader) int {
	if s.spec.Stderr != "" {
		io.WriteString(s.stderr, s.spec.Stderr)
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if s.log != nil {
			s.log.Write(append(append([]byte(nil), line...), '\n'))
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			s.send(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32700, "message": "parse error"}})
			continue
		}
		if m.Method == "" {
			continue // a response to a request we never send
		}
		if code, done := s.handle(&m); done {
			return code
		}
	}
	return 0
}

// handle answers one message; done reports that the server must exit.
func (s *server) handle(m *message) (code int, done bool) {
	mb := s.spec.On[m.Method]
	if mb != nil {
		mb.seen++
		if mb.Times > 0 && mb.seen > mb.Times {
			mb = nil
		}
	}
	id := m.ID
	if mb != nil {
		switch mb.Do {
		case "exit":
			text := mb.Text
			if text == "" {
				text = "fakemcp: exiting on " + m.Method
			}
			fmt.Fprintln(s.stderr, text)
			status := mb.Status
			if status == 0 {
				status = 1
			}
			return status, true
		case "garbage":
			text := mb.Text
			if text == "" {
				text = "this is not JSON"
			}
			s.out.WriteString(text + "\n")
			s.out.Flush()
			return 0, false
		case "silent":
			return 0, false
		case "wrong-id":
			id = json.RawMessage("424242")
		case "error":
			c := mb.Code
			if c == 0 {
				c = -32603
			}
			s.reply(id, nil, map[string]any{"code": c, "message": mb.Message})
			return 0, false
		case "result":
			s.reply(id, mb.Result, nil)
			return 0, false
		case "list-changed":
			if kind, ok := listCaps[m.Method]; ok {
				s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/" + kind + "/list_changed"})
			}
		case "repeat-cursor":
		default:
			fmt.Fprintf(s.stderr, "fakemcp: unknown misbehaviour %q\n", mb.Do)
			return 2, true
		}
	}
	if len(id) == 0 {
		return 0, false // notifications need no answer
	}
	modern, version := s.envelope(m.Params)
	switch {
	case m.Method == "server/discover":
		if s.spec.Era == "legacy" {
			s.reply(id, nil, map[string]any{"code": -32601, "message": "Method not found"})
			return 0, false
		}
	case m.Method == "initialize":
		if s.spec.Era == "modern" {
			s.reply(id, nil, map[string]any{"code": -32601, "message": "Method not found"})
			return 0, false
		}
	case s.spec.Era == "modern" && !modern:
		s.reply(id, nil, map[string]any{"code": -32602, "message": "missing _meta io.modelcontextprotocol/protocolVersion"})
		return 0, false
	}
	if modern && !slices.Contains(s.spec.SupportedVersions, version) {
		s.reply(id, nil, map[string]any{"code": -32022, "message": "unsupported protocol version", "data": map[string]any{"supported": s.spec.SupportedVersions, "requested": version}})
		return 0, false
	}
	res := map[string]any{}
	switch m.Method {
	case "server/discover":
		res["supportedVersions"] = s.spec.SupportedVersions
		res["capabilities"] = s.caps
		if s.spec.Instructions != nil {
			res["instructions"] = *s.spec.Instructions
		}
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(m.Params, &p)
		v := s.spec.ProtocolVersion
		if v == "" {
			v = "2025-11-25"
			if slices.Contains([]string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}, p.ProtocolVersion) {
				v = p.ProtocolVersion
			}
		}
		res["protocolVersion"] = v
		res["capabilities"] = s.caps
		res["serverInfo"] = s.spec.ServerInfo
		if s.spec.Instructions != nil {
			res["instructions"] = *s.spec.Instructions
		}
	case "ping":
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		var caps map[string]json.RawMessage
		json.Unmarshal(s.caps, &caps)
		if _, ok := caps[listCaps[m.Method]]; !ok {
			s.reply(id, nil, map[string]any{"code": -32601, "message": "Method not found"})
			return 0, false
		}
		items, next := s.page(m)
		if mb != nil && mb.Do == "repeat-cursor" {
			next = "again"
		}
		res[listFields[m.Method]] = items
		if next != "" {
			res["nextCursor"] = next
		}
	default:
		s.reply(id, nil, map[string]any{"code": -32601, "message": "Method not found"})
		return 0, false
	}
	if modern {
		res["resultType"] = "complete"
		res["_meta"] = map[string]any{"io.modelcontextprotocol/serverInfo": s.spec.ServerInfo}
		if m.Method == "server/discover" || strings.HasSuffix(m.Method, "/list") {
			res["ttlMs"] = 0
			res["cacheScope"] = "public"
		}
	}
	raw, _ := json.Marshal(res)
	s.reply(id, raw, nil)
	return 0, false
}

// envelope reads the 2026-07-28 protocol version from a request's _meta.
func (s *server) envelope(params json.RawMessage) (modern bool, version string) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	json.Unmarshal(params, &p)
	raw, ok := p.Meta["io.modelcontextprotocol/protocolVersion"]
	if !ok {
		return false, ""
	}
	json.Unmarshal(raw, &version)
	return true, version
}

func (s *server) page(m *message) ([]json.RawMessage, string) {
	items := s.lists[m.Method]
	if items == nil {
		items = []json.RawMessage{}
	}
	if s.spec.PageSize <= 0 {
		return items, ""
	}
	var p struct {
		Cursor string `json:"cursor"`
	}
	json.Unmarshal(m.Params, &p)
	start := 0
	if n, ok := strings.CutPrefix(p.Cursor, "page-"); ok {
		start, _ = strconv.Atoi(n)
	}
	start = min(start, len(items))
	end := min(start+s.spec.PageSize, len(items))
	next := ""
	if end < len(items) {
		next = "page-" + strconv.Itoa(end)
	}
	return items[start:end], next
}

func (s *server) reply(id json.RawMessage, result json.RawMessage, rpcErr any) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rpcErr != nil {
		msg["error"] = rpcErr
	} else {
		msg["result"] = result
	}
	s.send(msg)
}

func (s *server) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintln(s.stderr, "fakemcp:", err)
		return
	}
	s.out.Write(b)
	s.out.WriteByte('\n')
	s.out.Flush()
}
