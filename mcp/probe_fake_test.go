package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const echoTool = `{"name":"echo","description":"Echo the input.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`

// TestProbeBadInput: each misbehaving server gives a *ProbeError that names
// the server and the stage, carries the stderr tail, and yields no surface.
func TestProbeBadInput(t *testing.T) {
	tests := []struct {
		name  string
		spec  string
		era   Era
		stage string
		want  []string // substrings of the error
	}{{
		name:  "exits during the handshake",
		spec:  `{"stderr":"fake: loading config\n","tools":[],"on":{"initialize":{"do":"exit","status":3,"text":"fatal: cannot open /data/db"}}}`,
		stage: "initialize",
		want:  []string{"server closed the connection", "exit status 3", "| fatal: cannot open /data/db", "| fake: loading config"},
	}, {
		name:  "prints non-JSON",
		spec:  `{"stderr":"fake: started\n","tools":[],"on":{"tools/list":{"do":"garbage","text":"Listening on port 8080"}}}`,
		stage: "tools/list",
		want:  []string{"non-JSON", "Listening on port 8080", "| fake: started"},
	}, {
		name:  "never answers",
		spec:  `{"stderr":"fake: stuck\n","tools":[],"on":{"tools/list":{"do":"silent"}}}`,
		stage: "tools/list",
		want:  []string{"no answer to tools/list", "| fake: stuck"},
	}, {
		name:  "answers with the wrong id",
		spec:  `{"stderr":"fake: confused\n","tools":[],"on":{"initialize":{"do":"wrong-id"}}}`,
		stage: "initialize",
		want:  []string{"id 424242, which was never sent", "| fake: confused"},
	}, {
		name:  "lists 1,001 tools",
		spec:  `{"stderr":"fake: big\n","generateTools":1001,"pageSize":100}`,
		stage: "tools/list",
		want:  []string{"more than 1000 tools", "| fake: big"},
	}, {
		name:  "repeats a cursor",
		spec:  `{"stderr":"fake: loop\n","tools":[],"on":{"tools/list":{"do":"repeat-cursor"}}}`,
		stage: "tools/list",
		want:  []string{`repeated the cursor "again"`, "| fake: loop"},
	}, {
		name:  "lists two tools with one name",
		spec:  `{"stderr":"fake: dup\n","tools":[` + echoTool + `,{"name":"echo","inputSchema":{"type":"object"}}]}`,
		stage: "tools/list",
		want:  []string{`two tools with name "echo"`, "| fake: dup"},
	}, {
		name:  "answers server/discover with -32022",
		spec:  `{"era":"both","stderr":"fake: modern\n","tools":[],"on":{"server/discover":{"do":"error","code":-32022,"message":"Unsupported protocol version"}}}`,
		stage: "server/discover",
		want:  []string{"error -32022: Unsupported protocol version", "no fallback to initialize", "| fake: modern"},
	}, {
		name:  "answers server/discover with -32021",
		spec:  `{"era":"both","tools":[],"on":{"server/discover":{"do":"error","code":-32021,"message":"Missing required client capability"}}}`,
		stage: "server/discover",
		want:  []string{"error -32021", "no fallback", "(nothing on stderr)"},
	}, {
		name:  "DiscoverResult without 2026-07-28",
		spec:  `{"era":"both","tools":[],"on":{"server/discover":{"do":"result","result":{"resultType":"complete","supportedVersions":["2026-12-01"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"}}}}}}`,
		stage: "server/discover",
		want:  []string{"DiscoverResult lists 2026-12-01, not 2026-07-28"},
	}, {
		name:  "DiscoverResult without serverInfo",
		spec:  `{"era":"both","tools":[],"on":{"server/discover":{"do":"result","result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{}}}}}`,
		stage: "server/discover",
		want:  []string{"no serverInfo in _meta"},
	}, {
		name:  "DiscoverResult not complete",
		spec:  `{"era":"both","tools":[],"on":{"server/discover":{"do":"result","result":{"resultType":"input_required","supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"}}}}}}`,
		stage: "server/discover",
		want:  []string{`resultType is "input_required", not "complete"`},
	}, {
		name:  "the tool list keeps changing",
		spec:  `{"tools":[` + echoTool + `],"on":{"tools/list":{"do":"list-changed"}}}`,
		stage: "tools/list",
		want:  []string{"changed while it was being listed, 4 times in a row"},
	}, {
		name:  "answers initialize with an unknown version",
		spec:  `{"protocolVersion":"2099-01-01","tools":[]}`,
		stage: "initialize",
		want:  []string{`protocol version "2099-01-01"`},
	}, {
		name:  "a legacy server forced modern",
		spec:  `{"tools":[]}`,
		era:   EraModern,
		stage: "server/discover",
		want:  []string{"error -32601"},
	}, {
		name:  "hides escape sequences in stderr",
		spec:  "{\"stderr\":\"\\u001b[2J\\u001b[31mfake\\u202e: evil\\n\",\"tools\":[],\"on\":{\"initialize\":{\"do\":\"exit\"}}}",
		stage: "initialize",
		want:  []string{`| \u001b[2J\u001b[31mfake\u202e: evil`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := fake(t, tt.spec)
			spec.Era = tt.era
			spec.Timeout = 10 * time.Second
			spec.RequestTimeout = time.Second
			spec.ShutdownGrace = 500 * time.Millisecond
			s, err := Probe(context.Background(), spec)
			if err == nil {
				t.Fatalf("Probe succeeded with %+v; want an error", s)
			}
			var pe *ProbeError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ProbeError: %v", err, err)
			}
			if pe.Stage != tt.stage {
				t.Errorf("stage %q, want %q (error: %v)", pe.Stage, tt.stage, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, `probing server "fake": `+tt.stage+": ") {
				t.Errorf("error does not start with the server and stage:\n%s", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
			if strings.ContainsAny(msg, "\x1b\u202e") {
				t.Errorf("error holds raw control characters: %q", msg)
			}
		})
	}
}

func TestProbeFakeSurface(t *testing.T) {
	const prompt = `{"name":"greet","arguments":[{"name":"who","required":true}]}`
	const resource = `{"uri":"notes://index","name":"index"}`
	const template = `{"uriTemplate":"notes://{id}","name":"note"}`
	tools := []string{echoTool}
	for i := 1; i <= 4; i++ {
		tools = append(tools, fmt.Sprintf(`{"name":"t%d","inputSchema":{"type":"object"},"x-unknown":{"kept":[1,2.50,3e2]}}`, i))
	}
	body := `"instructions":"Use echo.","tools":[` + strings.Join(tools, ",") + `],"prompts":[` + prompt + `],"resources":[` + resource + `],"resourceTemplates":[` + template + `],"pageSize":2`
	tests := []struct {
		name     string
		spec     string
		era      Era
		wantEra  Era
		version  string
		versions []string
	}{
		{"legacy auto", `{` + body + `}`, EraAuto, EraLegacy, "2025-11-25", nil},
		{"legacy old version", `{"protocolVersion":"2024-11-05",` + body + `}`, EraAuto, EraLegacy, "2024-11-05", nil},
		{"modern auto", `{"era":"modern","supportedVersions":["2026-07-28","2027-01-01"],` + body + `}`, EraAuto, EraModern, "2026-07-28", []string{"2026-07-28", "2027-01-01"}},
		{"both auto is modern", `{"era":"both",` + body + `}`, EraAuto, EraModern, "2026-07-28", []string{"2026-07-28"}},
		{"both forced legacy", `{"era":"both",` + body + `}`, EraLegacy, EraLegacy, "2025-11-25", nil},
		{"both forced modern", `{"era":"both",` + body + `}`, EraModern, EraModern, "2026-07-28", []string{"2026-07-28"}},
		{"discover unanswered is legacy", `{"on":{"server/discover":{"do":"silent"}},` + body + `}`, EraAuto, EraLegacy, "2025-11-25", nil},
		{"exit on discover: restart, legacy", `{"on":{"server/discover":{"do":"exit"}},` + body + `}`, EraAuto, EraLegacy, "2025-11-25", nil},
		{"list_changed once: listed again", `{"on":{"tools/list":{"do":"list-changed","times":1}},` + body + `}`, EraAuto, EraLegacy, "2025-11-25", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := fake(t, tt.spec)
			spec.Era = tt.era
			spec.DiscoverTimeout = 500 * time.Millisecond
			s, err := Probe(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			instr := "Use echo."
			want := &Surface{
				Era:               tt.wantEra,
				ProtocolVersion:   tt.version,
				SupportedVersions: tt.versions,
				ServerInfo:        json.RawMessage(`{"name":"fakemcp","version":"1.0.0"}`),
				Instructions:      &instr,
				Capabilities:      json.RawMessage(`{"prompts":{"listChanged":true},"resources":{"listChanged":true},"tools":{"listChanged":true}}`),
				Tools:             raws(tools...),
				Prompts:           raws(prompt),
				Resources:         raws(resource),
				ResourceTemplates: raws(template),
			}
			if d := cmp.Diff(want, s, cmp.Comparer(jsonEqual)); d != "" {
				t.Errorf("surface (-want +got):\n%s", d)
			}
			// Items come back byte for byte (numbers as sent).
			if got := string(s.Tools[1]); got != tools[1] {
				t.Errorf("tool t1 = %s, want exactly %s", got, tools[1])
			}
		})
	}
}

// TestProbeModernEnvelope checks what a modern probe sends: the _meta
// envelope on every request, mcpform's clientInfo, the declared client
// capabilities, and never initialize.
func TestProbeModernEnvelope(t *testing.T) {
	log := filepath.Join(t.TempDir(), "received.jsonl")
	spec := fake(t, `{"era":"modern","log":`+quote(log)+`,"tools":[`+echoTool+`],"prompts":[],"pageSize":1}`)
	spec.ClientCapabilities = json.RawMessage(`{"elicitation":{}}`)
	old := clientVersion
	clientVersion = "1.2.3"
	defer func() { clientVersion = old }()
	if _, err := Probe(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m struct {
			Method string
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			}
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		methods = append(methods, m.Method)
		want := map[string]json.RawMessage{
			MetaProtocolVersion:    json.RawMessage(`"2026-07-28"`),
			MetaClientCapabilities: json.RawMessage(`{"elicitation":{}}`),
			metaClientInfo:         json.RawMessage(`{"name":"mcpform","version":"1.2.3"}`),
		}
		if d := cmp.Diff(want, m.Params.Meta, cmp.Comparer(jsonEqual)); d != "" {
			t.Errorf("%s: _meta (-want +got):\n%s", m.Method, d)
		}
	}
	if d := cmp.Diff([]string{"server/discover", "tools/list", "prompts/list"}, methods); d != "" {
		t.Errorf("methods sent (-want +got):\n%s", d)
	}
}

// TestProbeLegacyHandshake checks the legacy handshake on the wire.
func TestProbeLegacyHandshake(t *testing.T) {
	log := filepath.Join(t.TempDir(), "received.jsonl")
	spec := fake(t, `{"log":`+quote(log)+`,"tools":[]}`)
	if _, err := Probe(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	want := []string{
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpform","version":"devel"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"mcpform","version":"devel"},"protocolVersion":"2025-11-25"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
	}
	if d := cmp.Diff(want, lines); d != "" {
		t.Errorf("lines sent (-want +got):\n%s", d)
	}
}

func TestProbeTimeout(t *testing.T) {
	spec := fake(t, `{"tools":[],"on":{"initialize":{"do":"silent"}}}`)
	spec.Timeout = 700 * time.Millisecond
	start := time.Now()
	_, err := Probe(context.Background(), spec)
	if err == nil || !strings.Contains(err.Error(), "probe timeout of 700ms") {
		t.Fatalf("err = %v, want the probe timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Probe took %v", d)
	}
}

func TestProbeStartFails(t *testing.T) {
	_, err := Probe(context.Background(), ServerSpec{Name: "nope", Command: []string{"/nonexistent/server"}})
	var pe *ProbeError
	if !errors.As(err, &pe) || pe.Stage != "start" || !strings.Contains(err.Error(), `probing server "nope": start:`) {
		t.Fatalf("err = %v", err)
	}
}

func raws(items ...string) []json.RawMessage {
	out := []json.RawMessage{}
	for _, it := range items {
		out = append(out, json.RawMessage(it))
	}
	return out
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
