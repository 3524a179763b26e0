package fakemcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	TTLMs             int                      `json:"ttlMs"`
	AnswerCalls       bool                     `json:"answerCalls"`
	Stderr            string                   `json:"stderr"`
	Log               string                   `json:"log"`
	PIDFile           string                   `json:"pidFile"`
	ChildPIDFile      string                   `json:"childPidFile"`
	StartDelayMs      int                      `json:"startDelayMs"`
	On                map[string]Misbehaviours `json:"on"`
}

// Misbehaviours is one entry of "on": a misbehaviour, or a list of them
// tried in order.
type Misbehaviours []*Misbehaviour

// UnmarshalJSON reads one misbehaviour (an object) or a list of them.
func (l *Misbehaviours) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, (*[]*Misbehaviour)(l))
	}
	var m Misbehaviour
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*l = Misbehaviours{&m}
	return nil
}

// Misbehaviour is one misbehaviour of an "on" entry.
type Misbehaviour struct {
	Do      string            `json:"do"`
	Name    string            `json:"name"`
	Skip    int               `json:"skip"`
	Times   int               `json:"times"`
	Status  int               `json:"status"`
	Text    string            `json:"text"`
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Result  json.RawMessage   `json:"result"`
	Send    []json.RawMessage `json:"send"`
	Size    int               `json:"size"`
	Ms      int               `json:"ms"`
	File    string            `json:"file"`
	Then    *Lists            `json:"then"`

	seen int
}

// Lists are the lists a list-changed misbehaviour's "then" replaces.
type Lists struct {
	Tools             []json.RawMessage `json:"tools"`
	Prompts           []json.RawMessage `json:"prompts"`
	Resources         []json.RawMessage `json:"resources"`
	ResourceTemplates []json.RawMessage `json:"resourceTemplates"`
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
	if spec.PIDFile != "" {
		os.WriteFile(spec.PIDFile, []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	if spec.ChildPIDFile != "" {
		// A long-lived child in the server's process group. The server may
		// get no PATH (mcpform passes only named variables): an absolute path.
		child := exec.Command("/bin/sleep", "3600")
		if err := child.Start(); err == nil {
			os.WriteFile(spec.ChildPIDFile, []byte(strconv.Itoa(child.Process.Pid)), 0o644)
		}
	}
	// A slow start, as a server launched through npx or go run has.
	time.Sleep(time.Duration(spec.StartDelayMs) * time.Millisecond)
	return s.serve(stdin)
}

type server struct {
	spec   *Spec
	stderr io.Writer
	log    *os.File
	caps   json.RawMessage

	outMu sync.Mutex // out: answers may be written from several goroutines
	out   *bufio.Writer

	mu      sync.Mutex
	lists   map[string][]json.RawMessage    // by method; "then" replaces them
	waiting map[string]chan json.RawMessage // answers to our requests, by id
}

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
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
	s := &server{spec: spec, out: bufio.NewWriterSize(stdout, 64<<10), stderr: stderr, lists: map[string][]json.RawMessage{}, waiting: map[string]chan json.RawMessage{}}
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
	s.setLists(&Lists{Tools: tools, Prompts: spec.Prompts, Resources: spec.Resources, ResourceTemplates: spec.ResourceTemplates})
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
	for method, l := range spec.On {
		for _, mb := range l {
			if mb == nil {
				return nil, fmt.Errorf("on %q: null", method)
			}
			if !slices.Contains(misbehaviours, mb.Do) {
				return nil, fmt.Errorf("on %q: unknown misbehaviour %q", method, mb.Do)
			}
		}
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

var misbehaviours = []string{"exit", "garbage", "silent", "stop-reading", "wrong-id", "repeat-id", "error", "result",
	"repeat-cursor", "list-changed", "send", "huge", "progress", "request", "sleep", "wait-file"}

// setLists replaces the lists l has.
func (s *server) setLists(l *Lists) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for method, items := range map[string][]json.RawMessage{"tools/list": l.Tools, "prompts/list": l.Prompts, "resources/list": l.Resources, "resources/templates/list": l.ResourceTemplates} {
		if items != nil {
			s.lists[method] = items
		}
	}
}

func (s *server) serve(stdin io.Reader) int {
	if s.spec.Stderr != "" {
		io.WriteString(s.stderr, s.spec.Stderr)
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
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
			s.answered(&m)
			continue
		}
		if code, done := s.handle(&m); done {
			return code
		}
	}
	return 0
}

// answered hands the client's answer to a request of ours to whoever waits
// for it.
func (s *server) answered(m *message) {
	s.mu.Lock()
	ch := s.waiting[compact(m.ID)]
	s.mu.Unlock()
	if ch == nil {
		return
	}
	if m.Error != nil {
		ch <- m.Error
	} else {
		ch <- m.Result
	}
}

// misbehaviour is the first of the "on" entry for m's method that applies
// to m: its "name" (if any) is the params' name, and m is past the first
// "skip" of the messages it matches and within "times" after them.
func (s *server) misbehaviour(m *message) *Misbehaviour {
	l := s.spec.On[m.Method]
	if l == nil {
		return nil
	}
	var p struct {
		Name string `json:"name"`
	}
	json.Unmarshal(m.Params, &p)
	for _, mb := range l {
		if mb.Name != "" && mb.Name != p.Name {
			continue
		}
		mb.seen++
		if mb.seen <= mb.Skip || (mb.Times > 0 && mb.seen > mb.Skip+mb.Times) {
			continue
		}
		return mb
	}
	return nil
}

// handle answers one message; done reports that the server must exit.
func (s *server) handle(m *message) (code int, done bool) {
	mb := s.misbehaviour(m)
	id := m.ID
	if mb != nil {
		if mb.Do != "request" {
			for _, l := range mb.Send {
				s.writeLine(line(l))
			}
		}
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
			s.writeLine([]byte(text))
			return 0, false
		case "silent":
			return 0, false
		case "stop-reading":
			time.Sleep(time.Hour)
			return 0, true
		case "wrong-id":
			id = json.RawMessage("424242")
		case "repeat-id":
			if len(id) > 0 {
				s.answer(m, id, nil)
			}
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
			if mb.Then != nil {
				s.setLists(mb.Then)
			}
			kind, ok := listCaps[m.Method]
			if !ok {
				kind = "tools"
			}
			s.writeLine([]byte(`{"jsonrpc":"2.0","method":"notifications/` + kind + `/list_changed"}`))
		case "huge":
			s.writeLine([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", mb.Size) + `"}}`))
		case "progress":
			var p struct {
				Meta struct {
					Token json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			json.Unmarshal(m.Params, &p)
			if p.Meta.Token != nil {
				s.writeLine([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + string(p.Meta.Token) + `,"progress":1,"total":2}}`))
			}
			s.writeLine([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"bogus","progress":1}}`))
		case "request":
			go s.request(mb, id)
			return 0, false
		case "sleep":
			go func() {
				time.Sleep(time.Duration(mb.Ms) * time.Millisecond)
				s.answer(m, id, nil)
			}()
			return 0, false
		case "wait-file":
			go func() {
				for {
					if _, err := os.Stat(mb.File); err == nil {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				s.answer(m, id, nil)
			}()
			return 0, false
		}
	}
	if len(id) == 0 {
		return 0, false // notifications need no answer
	}
	s.answer(m, id, mb)
	return 0, false
}

// request sends mb's "send" (requests to the client), waits up to 5 seconds
// for the client's answer to the first and answers the call id with it as
// text.
func (s *server) request(mb *Misbehaviour, id json.RawMessage) {
	ch := make(chan json.RawMessage, 1)
	if len(mb.Send) > 0 {
		var first message
		json.Unmarshal(mb.Send[0], &first)
		s.mu.Lock()
		s.waiting[compact(first.ID)] = ch
		s.mu.Unlock()
	}
	for _, l := range mb.Send {
		s.writeLine(line(l))
	}
	var answer json.RawMessage
	select {
	case answer = <-ch:
	case <-time.After(5 * time.Second):
		answer = json.RawMessage(`"no answer"`)
	}
	text, _ := json.Marshal(string(answer))
	s.reply(id, json.RawMessage(`{"content":[{"type":"text","text":`+string(text)+`}]}`), nil)
}

// answer answers request m with id as the server does without
// misbehaviour; mb is m's misbehaviour, if any.
func (s *server) answer(m *message, id json.RawMessage, mb *Misbehaviour) {
	modern, version := s.envelope(m.Params)
	switch {
	case m.Method == "server/discover":
		if s.spec.Era == "legacy" {
			s.reply(id, nil, map[string]any{"code": -32601, "message": "Method not found"})
			return
		}
	case m.Method == "initialize":
		if s.spec.Era == "modern" {
			s.reply(id, nil, map[string]any{"code": -32601, "message": "Method not found"})
			return
		}
	case s.spec.Era == "modern" && !modern:
		s.reply(id, nil, map[string]any{"code": -32602, "message": "missing _meta io.modelcontextprotocol/protocolVersion"})
		return
	}
	if modern && !slices.Contains(s.spec.SupportedVersions, version) {
		s.reply(id, nil, map[string]any{"code": -32022, "message": "unsupported protocol version", "data": map[string]any{"supported": s.spec.SupportedVersions, "requested": version}})
		return
	}
	var p map[string]json.RawMessage
	json.Unmarshal(m.Params, &p)
	if modern && m.Method == "subscriptions/listen" {
		// A 2026-07-28 stream: acknowledged, and answered only when it
		// ends (here never: the server ends with its input).
		s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
			"params": map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/subscriptionId": id}, "notifications": p["notifications"]}})
		return
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
		var requested string
		json.Unmarshal(p["protocolVersion"], &requested)
		v := s.spec.ProtocolVersion
		if v == "" {
			v = "2025-11-25"
			if slices.Contains([]string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}, requested) {
				v = requested
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
			return
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
		if !s.spec.AnswerCalls || !s.call(m.Method, p, res) {
			s.reply(id, nil, map[string]any{"code": -32601, "message": "Method not found"})
			return
		}
	}
	if modern {
		res["resultType"] = "complete"
		res["_meta"] = map[string]any{"io.modelcontextprotocol/serverInfo": s.spec.ServerInfo}
		if m.Method == "server/discover" || strings.HasSuffix(m.Method, "/list") || m.Method == "resources/read" {
			res["ttlMs"] = s.spec.TTLMs
			res["cacheScope"] = "public"
		}
	}
	raw, _ := json.Marshal(res)
	s.reply(id, raw, nil)
}

// call fills in res, the result of a call with "answerCalls", and reports
// whether it knows the method.
func (s *server) call(method string, p map[string]json.RawMessage, res map[string]any) bool {
	switch method {
	case "tools/call":
		args := p["arguments"]
		if args == nil {
			args = json.RawMessage("{}")
		}
		text, _ := json.Marshal(string(args))
		res["content"] = []json.RawMessage{json.RawMessage(`{"type":"text","text":` + string(text) + `}`)}
	case "prompts/get":
		res["messages"] = []any{}
	case "resources/read":
		res["contents"] = []any{map[string]any{"uri": p["uri"], "text": "contents"}}
	case "completion/complete":
		res["completion"] = map[string]any{"values": []string{"a"}}
	case "resources/subscribe", "resources/unsubscribe", "logging/setLevel":
	default:
		return false
	}
	return true
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
	s.mu.Lock()
	items := s.lists[m.Method]
	s.mu.Unlock()
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
	s.writeLine(b)
}

// writeLine writes b and a newline to stdout at once.
func (s *server) writeLine(b []byte) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.out.Write(b)
	s.out.WriteByte('\n')
	s.out.Flush()
}

// line is what a "send" element writes: a string's text, anything else as
// written.
func line(raw json.RawMessage) []byte {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []byte(text)
	}
	return raw
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
