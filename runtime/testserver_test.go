package runtime

import (
	"bufio"
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

// The test server is this test binary re-executed (no helper binary to
// build; docs/ARCHITECTURE.md, "How the code is tested") with
// MCPFORM_RUNTIME_FAKE=1: a scriptable, optionally hostile MCP server. Its
// configuration is one JSON file:
//
//	{
//	  "era": "legacy" | "modern",
//	  "serverInfo": {…}, "instructions": "…", "capabilities": {…},
//	  "tools": […], "prompts": […], "resources": […], "resourceTemplates": […],
//	  "lock": {…},   // what differs in the lock the test generates (see lockFor)
//	  "rules": [ {"on": "tools/call", "name": "echo", "skip": 0, "times": 1, "do": "…", …} ]
//	}
//
// Without a rule, tools/call echoes its arguments as text, and the other
// forwarded methods get small fixed answers. A rule's "do" is one of:
//
//	result / error   answer with "result" / "error" as written
//	exit             write "text" to stderr and exit with "status"
//	garbage          write "text" as a line first, then answer
//	huge             write a line of "size" bytes first, then answer
//	wrong-id         answer with id 424242 instead
//	repeat-id        answer twice
//	silent           never answer
//	stop-reading     never read stdin again
//	list-changed     replace the lists with "then" and send list_changed first
//	request          send "send" (a server→client request, id "s1"), wait for the
//	                 client's answer and return it as the tool's text
//	progress         send progress for the request's token and for a bogus one
//	sleep            wait "ms" milliseconds, then answer (others are answered meanwhile)
//	send             write each line of "send" first, then answer
//	wait-file        answer once the file "text" exists (others are answered meanwhile)
//
// Every received line is appended to the log file (the second argument).

type fakeConfig struct {
	Era               string            `json:"era"`
	ServerInfo        json.RawMessage   `json:"serverInfo"`
	Instructions      *string           `json:"instructions"`
	Capabilities      json.RawMessage   `json:"capabilities"`
	Tools             []json.RawMessage `json:"tools"`
	Prompts           []json.RawMessage `json:"prompts"`
	Resources         []json.RawMessage `json:"resources"`
	ResourceTemplates []json.RawMessage `json:"resourceTemplates"`
	Lock              *lockOverrides    `json:"lock"`
	Rules             []*fakeRule       `json:"rules"`
	// ChildPIDFile: start a long-lived child in the server's process group
	// and write its pid here (the proxy must end the whole group).
	ChildPIDFile string `json:"childPidFile"`
	// PIDFile: write the server's own pid here.
	PIDFile string `json:"pidFile"`
}

type lockOverrides struct {
	Tools              []json.RawMessage `json:"tools"`
	ClientCapabilities json.RawMessage   `json:"clientCapabilities"`
	Instructions       *string           `json:"instructions"`
	ServerInfo         json.RawMessage   `json:"serverInfo"`
	Era                string            `json:"era"`
	Sandbox            bool              `json:"sandbox"`
}

type fakeRule struct {
	On     string            `json:"on"`
	Name   string            `json:"name"`
	Skip   int               `json:"skip"`
	Times  int               `json:"times"`
	Do     string            `json:"do"`
	Result json.RawMessage   `json:"result"`
	Error  json.RawMessage   `json:"error"`
	Text   string            `json:"text"`
	Status int               `json:"status"`
	Size   int               `json:"size"`
	Ms     int               `json:"ms"`
	Send   []json.RawMessage `json:"send"`
	Then   *struct {
		Tools []json.RawMessage `json:"tools"`
	} `json:"then"`
	seen int
}

type fakeServer struct {
	cfg     *fakeConfig
	mu      sync.Mutex
	out     *bufio.Writer
	log     *os.File
	waiting map[string]chan json.RawMessage // server→client requests by id
}

func fakeMain() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var cfg fakeConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	s := &fakeServer{cfg: &cfg, out: bufio.NewWriterSize(os.Stdout, 64<<10), waiting: map[string]chan json.RawMessage{}}
	if len(os.Args) > 2 && os.Args[2] != "" {
		s.log, _ = os.OpenFile(os.Args[2], os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	}
	if cfg.PIDFile != "" {
		os.WriteFile(cfg.PIDFile, []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	if cfg.ChildPIDFile != "" {
		// The server gets no PATH (only named variables pass): an absolute path.
		child := exec.Command("/bin/sleep", "3600")
		if err := child.Start(); err == nil {
			os.WriteFile(cfg.ChildPIDFile, []byte(strconv.Itoa(child.Process.Pid)), 0o644)
		}
	}
	fmt.Fprintln(os.Stderr, "fake server ready\x1b[31m")
	s.serve(os.Stdin)
	os.Exit(0)
}

type fakeMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

func (s *fakeServer) serve(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if s.log != nil {
			s.log.Write(append(slices.Clone(line), '\n'))
		}
		var m fakeMsg
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		if m.Method == "" {
			s.mu.Lock()
			ch := s.waiting[string(m.ID)]
			s.mu.Unlock()
			if ch != nil {
				if m.Error != nil {
					ch <- m.Error
				} else {
					ch <- m.Result
				}
			}
			continue
		}
		if len(m.ID) == 0 {
			continue
		}
		if s.handle(&m) {
			return
		}
	}
}

func (s *fakeServer) rule(m *fakeMsg) *fakeRule {
	var p struct {
		Name string `json:"name"`
	}
	json.Unmarshal(m.Params, &p)
	for _, r := range s.cfg.Rules {
		if r.On != m.Method || (r.Name != "" && r.Name != p.Name) {
			continue
		}
		r.seen++
		if r.seen <= r.Skip || (r.Times > 0 && r.seen > r.Skip+r.Times) {
			continue
		}
		return r
	}
	return nil
}

func (s *fakeServer) write(v any) {
	var b []byte
	switch v := v.(type) {
	case []byte:
		b = v
	case json.RawMessage:
		b = v
	default:
		b, _ = json.Marshal(v)
	}
	s.mu.Lock()
	s.out.Write(b)
	s.out.WriteByte('\n')
	s.out.Flush()
	s.mu.Unlock()
}

func (s *fakeServer) reply(id json.RawMessage, result json.RawMessage) {
	s.write(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// handle answers one request; true means stop serving.
func (s *fakeServer) handle(m *fakeMsg) bool {
	r := s.rule(m)
	id := m.ID
	if r != nil {
		for _, l := range r.Send {
			if r.Do != "request" {
				s.write(l)
			}
		}
		switch r.Do {
		case "result":
			s.reply(id, r.Result)
			return false
		case "error":
			s.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": r.Error})
			return false
		case "exit":
			fmt.Fprintln(os.Stderr, r.Text)
			os.Exit(r.Status)
		case "garbage":
			s.write([]byte(r.Text))
		case "huge":
			s.write([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", r.Size) + `"}}`))
		case "wrong-id":
			id = json.RawMessage("424242")
		case "repeat-id":
			s.answer(m, id)
		case "silent":
			return false
		case "stop-reading":
			time.Sleep(time.Hour)
		case "list-changed":
			if r.Then != nil {
				s.cfg.Tools = r.Then.Tools
			}
			s.write([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`))
		case "request":
			go func() {
				ch := make(chan json.RawMessage, 1)
				s.mu.Lock()
				s.waiting[`"s1"`] = ch
				s.mu.Unlock()
				for _, l := range r.Send {
					s.write(l)
				}
				var answer json.RawMessage
				select {
				case answer = <-ch:
				case <-time.After(5 * time.Second):
					answer = json.RawMessage(`"no answer"`)
				}
				text, _ := json.Marshal(string(answer))
				s.reply(id, json.RawMessage(`{"content":[{"type":"text","text":`+string(text)+`}]}`))
			}()
			return false
		case "progress":
			var p struct {
				Meta struct {
					Token json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			json.Unmarshal(m.Params, &p)
			if p.Meta.Token != nil {
				s.write([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + string(p.Meta.Token) + `,"progress":1,"total":2}}`))
			}
			s.write([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"bogus","progress":1}}`))
		case "wait-file":
			go func() {
				for {
					if _, err := os.Stat(r.Text); err == nil {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				s.answer(m, id)
			}()
			return false
		case "sleep":
			go func() {
				time.Sleep(time.Duration(r.Ms) * time.Millisecond)
				s.answer(m, id)
			}()
			return false
		}
	}
	s.answer(m, id)
	return false
}

func (s *fakeServer) answer(m *fakeMsg, id json.RawMessage) {
	modern := s.cfg.Era == "modern"
	var p map[string]json.RawMessage
	json.Unmarshal(m.Params, &p)
	res := map[string]any{}
	switch m.Method {
	case "initialize":
		if modern {
			s.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32601, "message": "Method not found"}})
			return
		}
		var v string
		json.Unmarshal(p["protocolVersion"], &v)
		res["protocolVersion"] = v
		res["capabilities"] = s.caps()
		res["serverInfo"] = s.info()
		if s.cfg.Instructions != nil {
			res["instructions"] = *s.cfg.Instructions
		}
	case "server/discover":
		if !modern {
			s.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32601, "message": "Method not found"}})
			return
		}
		res["supportedVersions"] = []string{"2026-07-28"}
		res["capabilities"] = s.caps()
		if s.cfg.Instructions != nil {
			res["instructions"] = *s.cfg.Instructions
		}
	case "tools/list":
		res["tools"] = nonNil(s.cfg.Tools)
	case "prompts/list":
		res["prompts"] = nonNil(s.cfg.Prompts)
	case "resources/list":
		res["resources"] = nonNil(s.cfg.Resources)
	case "resources/templates/list":
		res["resourceTemplates"] = nonNil(s.cfg.ResourceTemplates)
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
		res["contents"] = []any{map[string]any{"uri": json.RawMessage(p["uri"]), "text": "contents"}}
	case "completion/complete":
		res["completion"] = map[string]any{"values": []string{"a"}}
	case "resources/subscribe", "resources/unsubscribe", "logging/setLevel", "ping":
	default:
		s.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32601, "message": "Method not found"}})
		return
	}
	if modern {
		res["resultType"] = "complete"
		res["_meta"] = map[string]any{"io.modelcontextprotocol/serverInfo": s.info()}
		if strings.HasSuffix(m.Method, "/list") || m.Method == "server/discover" || m.Method == "resources/read" {
			res["ttlMs"] = 1000
			res["cacheScope"] = "public"
		}
	}
	b, _ := json.Marshal(res)
	s.reply(id, b)
}

func nonNil(l []json.RawMessage) []json.RawMessage {
	if l == nil {
		return []json.RawMessage{}
	}
	return l
}

func (s *fakeServer) info() json.RawMessage {
	if s.cfg.ServerInfo != nil {
		return s.cfg.ServerInfo
	}
	return json.RawMessage(`{"name":"fake","version":"1.0.0"}`)
}

func (s *fakeServer) caps() json.RawMessage {
	if s.cfg.Capabilities != nil {
		return s.cfg.Capabilities
	}
	return defaultCaps(s.cfg)
}

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
