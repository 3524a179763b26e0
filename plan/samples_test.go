package plan

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpform/mcpform/internal/npmtest"
	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/surface"
)

// samplePlan makes a plan of one server with samples against locked (nil
// for none), and returns its server plan and the lock apply would write
// (nil when the plan has errors).
func samplePlan(t *testing.T, s *lang.Server, locked *lock.File) (*Plan, *ServerPlan, *lock.File) {
	t.Helper()
	dir := t.TempDir()
	if len(s.Command) == 2 && strings.HasSuffix(s.Command[1], "spec.json") {
		// A fake's: it logs what it got beside its spec.
		dir = filepath.Dir(s.Command[1])
	}
	s.Name, s.Addr = "s", "server.s"
	if s.Protocol == "" {
		s.Protocol = "auto"
	}
	if s.Timeout == 0 {
		s.Timeout = 30 * time.Second
	}
	cfg := &lang.Config{Dir: dir, Lockfile: filepath.Join(dir, "mcp.lock"), Servers: []*lang.Server{s}}
	opts := Options{LookupEnv: func(n string) (string, bool) { return "1", n == "MCPFORM_FAKEMCP" }}
	p, err := Make(t.Context(), cfg, locked, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := Finish(p, locked, "mcpform test"); err != nil {
		t.Fatal(err)
	}
	sp := p.Servers[0]
	for _, c := range sp.Changes {
		seenRules[c.Rule] = true
	}
	if p.PlannedLock == nil {
		return p, sp, nil
	}
	lf, err := lock.Parse(p.PlannedLock)
	if err != nil {
		t.Fatalf("the planned lock does not load: %v", err)
	}
	return p, sp, lf
}

func sample(tool, args string) lang.Sample {
	return lang.Sample{Tool: tool, Arguments: json.RawMessage(args)}
}

// fakeServer is a server declared with fakemcp serving the spec file at
// path (rewritten by the tests between plans).
func fakeServer(t *testing.T, path string, samples ...lang.Sample) *lang.Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &lang.Server{Command: []string{exe, path}, Env: []string{"MCPFORM_FAKEMCP"}, Samples: samples}
}

func writeSpec(t *testing.T, path, spec string) {
	t.Helper()
	if !json.Valid([]byte(spec)) {
		t.Fatalf("spec is not JSON: %s", spec)
	}
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
}

func rulesOf(sp *ServerPlan) []string {
	var out []string
	for _, c := range sp.Changes {
		out = append(out, c.Rule+" "+strings.TrimPrefix(c.Addr, "server.s.")+" "+c.Grade.String())
	}
	return out
}

func shapeText(t *testing.T, s *lock.ResultShape) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSamplesEverything: against the official reference server, plan calls
// the read-only tools its samples name and records each result's shape,
// skips (and says so) a tool not marked read-only, and a second plan
// against the lock it wrote shows no change; another call's values (New
// York's weather, then Chicago's) are no change either.
func TestSamplesEverything(t *testing.T) {
	bin := npmtest.Bin(t, "mcp-server-everything")
	srv := func(samples ...lang.Sample) *lang.Server {
		return &lang.Server{Command: []string{bin, "stdio"}, Env: []string{"PATH", "HOME"}, Samples: samples}
	}
	samples := []lang.Sample{
		sample("get-structured-content", `{"location":"New York"}`),
		sample("get-sum", `{"a":2,"b":3}`),
		sample("toggle-simulated-logging", `{}`),
	}
	p, sp, lf := samplePlan(t, srv(samples...), nil)
	if sp.Error != "" || lf == nil {
		t.Fatalf("plan error: %s", sp.Error)
	}
	got := lf.Servers["s"].Mcpform.Samples
	if want := `{"content":["text"]}`; shapeText(t, got["get-sum"].Shape) != want {
		t.Errorf("get-sum's shape %s, want %s", shapeText(t, got["get-sum"].Shape), want)
	}
	if want := `{"content":["text"],"structuredContent":{"type":"object","properties":{"conditions":{"type":"string"},"humidity":{"type":"number"},"temperature":{"type":"number"}}}}`; shapeText(t, got["get-structured-content"].Shape) != want {
		t.Errorf("get-structured-content's shape %s, want %s", shapeText(t, got["get-structured-content"].Shape), want)
	}
	if s := got["toggle-simulated-logging"]; s.Shape != nil || string(s.Arguments) != "{}" {
		t.Errorf("the tool not marked read-only was called: %+v", s)
	}
	if notes := strings.Join(p.Notes, "\n"); !strings.Contains(notes, `sample "toggle-simulated-logging" was not called: the tool's annotations do not say readOnlyHint = true`) {
		t.Errorf("the plan does not say why the sample was skipped: %q", notes)
	}

	_, sp, _ = samplePlan(t, srv(samples...), lf)
	if sp.Action != NoOp || len(sp.Changes) != 0 || sp.Error != "" {
		t.Errorf("a second plan: action %v, changes %v, error %q; want nothing", sp.Action, rulesOf(sp), sp.Error)
	}

	// The lock's call is Chicago's: the same plan calls New York's, whose
	// values differ and whose shape does not.
	chicago := lf.Servers["s"]
	smp := chicago.Mcpform.Samples["get-structured-content"]
	smp.Arguments = json.RawMessage(`{"location":"Chicago"}`)
	chicago.Mcpform.Samples["get-structured-content"] = smp
	samples[0] = sample("get-structured-content", `{"location":"Chicago"}`)
	_, sp, _ = samplePlan(t, srv(samples...), lf)
	if sp.Action != NoOp || len(sp.Changes) != 0 || sp.Error != "" {
		t.Errorf("other values: changes %v, error %q; want nothing", rulesOf(sp), sp.Error)
	}

	// Other arguments are another call: recorded afresh, not compared.
	samples[0] = sample("get-structured-content", `{"location":"Los Angeles"}`)
	_, sp, _ = samplePlan(t, srv(samples...), lf)
	if got := strings.Join(rulesOf(sp), "; "); got != "CFG-SAMPLE-CHANGED tool.get-structured-content.sample none" {
		t.Errorf("other arguments: %s", got)
	}
}

// TestSamplesArgumentsChecked: arguments the tool's input schema refuses
// and a tool the server does not list are the plan's errors, and nothing
// is called (the reference server's get-sum wants numbers a and b).
func TestSamplesArgumentsChecked(t *testing.T) {
	bin := npmtest.Bin(t, "mcp-server-everything")
	s := &lang.Server{Command: []string{bin, "stdio"}, Env: []string{"PATH", "HOME"},
		Samples: []lang.Sample{sample("get-sum", `{"a":"two","b":3}`), sample("get-summ", `{}`), sample("echo", `{"message":"hi","extra":1}`)}}
	_, sp, lf := samplePlan(t, s, nil)
	if lf != nil {
		t.Fatal("a plan with bad samples has a lock to apply")
	}
	for _, want := range []string{
		`sample "get-sum": not called: mcpform refused the call to "get-sum": the arguments do not match the locked input schema`,
		`sample "get-summ" names a tool the server does not list; did you mean "get-sum"?`,
		`sample "echo": not called: mcpform refused the call to "echo"`,
	} {
		if !strings.Contains(sp.Error, want) {
			t.Errorf("error %q\nwants %q", sp.Error, want)
		}
	}
}

// TestSamplesNotesBothEras: the Go SDK notes server, in each era, gives
// search_notes' structured result a shape, and plans again see no change.
func TestSamplesNotesBothEras(t *testing.T) {
	notes := filepath.Join(t.TempDir(), "notes")
	if out, err := exec.Command("go", "build", "-o", notes, "../examples/servers/notes").CombinedOutput(); err != nil {
		t.Fatalf("building the notes server: %v\n%s", err, out)
	}
	for _, era := range []string{"legacy", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			srv := func() *lang.Server {
				return &lang.Server{Command: []string{notes}, Protocol: era, Samples: []lang.Sample{sample("search_notes", `{"query":"x"}`)}}
			}
			_, sp, lf := samplePlan(t, srv(), nil)
			if sp.Error != "" || lf == nil {
				t.Fatalf("plan error: %s", sp.Error)
			}
			e := lf.Servers["s"]
			if era == "2026-07-28" != e.Modern() {
				t.Fatalf("locked in the wrong era: %s", e.ProtocolVersion)
			}
			if got, want := shapeText(t, e.Mcpform.Samples["search_notes"].Shape), `{"content":["text"],"structuredContent":{"type":"object","properties":{"titles":{"type":"array"}}}}`; got != want {
				t.Errorf("shape %s, want %s", got, want)
			}
			_, sp, _ = samplePlan(t, srv(), lf)
			if sp.Action != NoOp || sp.Error != "" {
				t.Errorf("a second plan: %v %q", rulesOf(sp), sp.Error)
			}
		})
	}
}

const sampleTool = `{"name":"t","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}},"annotations":{"readOnlyHint":true}}`

// fakeResult is a fakemcp spec whose tool t answers every call with result.
func fakeResult(tool, result string) string {
	return `{"log":"calls.jsonl","tools":[` + tool + `],"on":{"tools/call":{"name":"t","do":"result","result":` + result + `}}}`
}

// TestSamplesRugPull: what a real server cannot show. Under the same call
// the result changes shape: each kind of move is graded, by its address in
// the result, and the values are never compared.
func TestSamplesRugPull(t *testing.T) {
	base := `{"content":[{"type":"text","text":"12 results"}],"structuredContent":{"total":12,"items":[{"id":1,"title":"a"}],"next":null}}`
	tests := []struct{ name, result, want string }{
		{"values only", `{"content":[{"type":"text","text":"3 results"},{"type":"text","text":"more"}],"structuredContent":{"total":3.5,"items":[{"id":9,"title":"b"},{"id":10,"title":"c"}],"next":null}}`, ""},
		{"no elements this time", `{"content":[{"type":"text","text":"0 results"}],"structuredContent":{"total":0,"items":[],"next":null}}`, ""},
		{"a type changed", `{"content":[{"type":"text","text":"x"}],"structuredContent":{"total":"12","items":[{"id":1,"title":"a"}],"next":null}}`,
			"MCP-RESULT-SHAPE-CHANGED tool.t.result.structuredContent.total major"},
		{"a key removed deep", `{"content":[{"type":"text","text":"x"}],"structuredContent":{"total":1,"items":[{"id":1}],"next":null}}`,
			"MCP-RESULT-SHAPE-CHANGED tool.t.result.structuredContent.items[].title major"},
		{"a key added", `{"content":[{"type":"text","text":"x"}],"structuredContent":{"total":1,"items":[{"id":1,"title":"a"}],"next":null,"cursor.v2":"c"}}`,
			`MCP-RESULT-KEY-ADDED tool.t.result.structuredContent["cursor.v2"] minor`},
		{"another block type", `{"content":[{"type":"text","text":"x"},{"type":"resource_link","uri":"file:///etc/passwd","name":"p"}],"structuredContent":{"total":1,"items":[],"next":null}}`,
			"MCP-RESULT-SHAPE-CHANGED tool.t.result.content major"},
		{"a tool error now", `{"content":[{"type":"text","text":"x"}],"isError":true,"structuredContent":{"total":1,"items":[],"next":null}}`,
			"MCP-RESULT-SHAPE-CHANGED tool.t.result.isError major"},
		{"structuredContent gone", `{"content":[{"type":"text","text":"x"}]}`,
			"MCP-RESULT-SHAPE-CHANGED tool.t.result.structuredContent major"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spec.json")
			writeSpec(t, path, fakeResult(sampleTool, base))
			smp := sample("t", `{"q":"x"}`)
			_, sp, lf := samplePlan(t, fakeServer(t, path, smp), nil)
			if sp.Error != "" || lf == nil {
				t.Fatalf("plan error: %s", sp.Error)
			}
			writeSpec(t, path, fakeResult(sampleTool, tt.result))
			_, sp, next := samplePlan(t, fakeServer(t, path, smp), lf)
			got := strings.Join(rulesOf(sp), "; ")
			if got != tt.want {
				t.Fatalf("changes %q, want %q", got, tt.want)
			}
			if tt.want == "" {
				if sp.Action != NoOp {
					t.Errorf("action %v for a value-only change", sp.Action)
				}
				return
			}
			if want := sp.Changes[0].Grade; sp.RequiredBump != want {
				t.Errorf("required bump %v, want %v", sp.RequiredBump, want)
			}
			if sp.Changes[0].Item != "server.s.tool.t" || sp.Changes[0].Class != Definitional {
				t.Errorf("change %+v: want item server.s.tool.t, definitional", sp.Changes[0])
			}
			// apply records the new shape: the plan after it is quiet.
			_, sp, _ = samplePlan(t, fakeServer(t, path, smp), next)
			if len(sp.Changes) != 0 {
				t.Errorf("after apply: %v", rulesOf(sp))
			}
		})
	}
}

// calledTools are the tools/call requests the fake logged.
func calledTools(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "calls.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(data), `"method":"tools/call"`)
}

// TestSamplesGate: a tool is called only while it is marked read-only live
// and in the lock. A server that flips the hint off loses the check
// (MCP-RESULT-UNCHECKED, besides the annotation change) and gets no call;
// one that flips it on for a tool locked as not read-only gets no call
// before the flip is applied; a hint spelt in another case is no hint;
// allow_side_effects calls it anyway, with a warning.
func TestSamplesGate(t *testing.T) {
	const ok = `{"content":[{"type":"text","text":"done"}]}`
	notRO := `{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true}}`
	smp := sample("t", `{}`)

	t.Run("flipped off", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "spec.json")
		writeSpec(t, path, fakeResult(`{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`, ok))
		srv := fakeServer(t, path, smp)
		_, sp, lf := samplePlan(t, srv, nil)
		if sp.Error != "" || lf.Servers["s"].Mcpform.Samples["t"].Shape == nil {
			t.Fatalf("first plan: %q %+v", sp.Error, lf)
		}
		before := calledTools(t, dir)
		if before != 1 {
			t.Fatalf("the read-only tool was called %d times by the first plan, want once", before)
		}
		writeSpec(t, path, fakeResult(notRO, ok))
		p, sp, _ := samplePlan(t, srv, lf)
		if n := calledTools(t, dir); n != before {
			t.Errorf("the tool was called %d more times after its hint was flipped off", n-before)
		}
		if got := strings.Join(rulesOf(sp), "; "); !strings.Contains(got, "MCP-RESULT-UNCHECKED tool.t.result none") {
			t.Errorf("changes %s: want MCP-RESULT-UNCHECKED", got)
		}
		if !strings.Contains(strings.Join(p.Notes, "\n"), `sample "t" was not called`) {
			t.Errorf("notes %q", p.Notes)
		}
	})
	t.Run("flipped on", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "spec.json")
		writeSpec(t, path, fakeResult(notRO, ok))
		srv := fakeServer(t, path, smp)
		_, _, lf := samplePlan(t, srv, nil)
		if lf.Servers["s"].Mcpform.Samples["t"].Shape != nil || calledTools(t, dir) != 0 {
			t.Fatal("a tool not marked read-only was called")
		}
		writeSpec(t, path, fakeResult(`{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"destructiveHint":true}}`, ok))
		p, _, next := samplePlan(t, srv, lf)
		if calledTools(t, dir) != 0 {
			t.Error("a tool locked as not read-only was called because the live hint says it is")
		}
		if !strings.Contains(strings.Join(p.Notes, "\n"), "the locked tool's annotations do not say readOnlyHint = true") {
			t.Errorf("notes %q", p.Notes)
		}
		// Once the annotation change is applied, the tool is called and
		// its shape recorded.
		_, sp, _ := samplePlan(t, srv, next)
		if calledTools(t, dir) != 1 || strings.Join(rulesOf(sp), "; ") != "MCP-RESULT-SHAPE-ADDED tool.t.result none" {
			t.Errorf("after apply: %d calls, changes %v", calledTools(t, dir), rulesOf(sp))
		}
	})
	t.Run("another case", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "spec.json")
		writeSpec(t, path, fakeResult(`{"name":"t","inputSchema":{"type":"object"},"annotations":{"ReadOnlyHint":true,"readonlyhint":true}}`, ok))
		samplePlan(t, fakeServer(t, path, smp), nil)
		if calledTools(t, dir) != 0 {
			t.Error("a hint in another case unlocked the call")
		}
	})
	t.Run("allow_side_effects", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "spec.json")
		writeSpec(t, path, fakeResult(notRO, ok))
		allowed := smp
		allowed.AllowSideEffects = true
		p, sp, lf := samplePlan(t, fakeServer(t, path, allowed), nil)
		if sp.Error != "" || calledTools(t, dir) != 1 || lf.Servers["s"].Mcpform.Samples["t"].Shape == nil || !lf.Servers["s"].Mcpform.Samples["t"].AllowSideEffects {
			t.Fatalf("allow_side_effects: %q, %d calls", sp.Error, calledTools(t, dir))
		}
		if !strings.Contains(strings.Join(p.Notes, "\n"), `Warning: server "s": sample "t" says allow_side_effects = true`) {
			t.Errorf("no warning in %q", p.Notes)
		}
	})
}

// TestSamplesBadResults: garbage, a hang, an oversized result, a task and a
// JSON-RPC error are the plan's errors (apply has no lock to write), never
// a crash, and the server's text in them is escaped.
func TestSamplesBadResults(t *testing.T) {
	tests := []struct{ name, on, want string }{
		{"garbage", `{"name":"t","do":"garbage","text":"\u001b[2Jnot json"}`, `sample "t": the call failed`},
		{"not a result", `{"name":"t","do":"result","result":{"content":"\u001b[2J"}}`, `sample "t": the result cannot be fingerprinted: the result's content is not an array of objects`},
		{"hang", `{"name":"t","do":"silent"}`, `sample "t": the call failed: no answer within the probe timeout of 2s`},
		{"oversized", `{"name":"t","do":"result","result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 2<<20) + `"}]}}`, `more than the 1048576 a sample call may return`},
		{"a task", `{"name":"t","do":"result","result":{"task":{"taskId":"1","status":"working"}}}`, `answered with a task`},
		{"an error", `{"name":"t","do":"error","code":-32603,"message":"\u001b]0;pwned\u0007"}`, `sample "t": the call failed: `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spec.json")
			writeSpec(t, path, `{"tools":[`+sampleTool+`],"on":{"tools/call":`+tt.on+`}}`)
			srv := fakeServer(t, path, sample("t", `{}`))
			srv.Timeout = 2 * time.Second
			_, sp, lf := samplePlan(t, srv, nil)
			if lf != nil {
				t.Fatal("the plan has a lock to apply")
			}
			if !strings.Contains(sp.Error, tt.want) {
				t.Errorf("error %q, want %q", sp.Error, tt.want)
			}
			if strings.ContainsAny(sp.Error, "\x1b\x07") {
				t.Errorf("the error carries the server's control characters raw: %q", sp.Error)
			}
		})
	}
}

// TestSampleChanges: the pure comparison, rule by rule, including what
// only verify meets (a locked call that fails now).
func TestSampleChanges(t *testing.T) {
	shape := func(r string) *lock.ResultShape {
		s, err := surface.Fingerprint([]byte(r))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	locked := withTools(t, "a", "b", "c", "d")
	locked.Mcpform = &lock.Settings{Samples: map[string]lock.Sample{
		"a": {Arguments: json.RawMessage(`{"x":1}`), Shape: shape(`{"content":[]}`)},
		"b": {Arguments: json.RawMessage(`{}`), Shape: shape(`{"content":[],"structuredContent":{"k":1}}`)},
		"c": {Arguments: json.RawMessage(`{}`)},
		"d": {Arguments: json.RawMessage(`{}`), Shape: shape(`{"content":[]}`)},
	}}
	live := []SampleResult{
		{SampleCall: SampleCall{Tool: "a", Arguments: json.RawMessage(`{"x": 1}`)}, Shape: shape(`{"content":[]}`)},
		{SampleCall: SampleCall{Tool: "b", Arguments: json.RawMessage(`{}`)}, Err: "the call failed: boom"},
		{SampleCall: SampleCall{Tool: "c", Arguments: json.RawMessage(`{}`), AllowSideEffects: true}},
		{SampleCall: SampleCall{Tool: "e", Arguments: json.RawMessage(`{}`)}, Shape: shape(`{"content":[]}`)},
	}
	cs := SampleChanges("server.s", locked, live)
	for _, c := range cs {
		seenRules[c.Rule] = true
	}
	want := []string{
		"~ tool.b.result MCP-RESULT-SAMPLE-FAILED major",
		"~ tool.c.sample CFG-SAMPLE-CHANGED none",
		"- tool.d.sample CFG-SAMPLE-REMOVED none",
		"+ tool.e.sample CFG-SAMPLE-ADDED none",
	}
	if got := summaries(cs); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if SampleChanges("server.s", nil, live) != nil {
		t.Error("a new server has sample changes")
	}
}
