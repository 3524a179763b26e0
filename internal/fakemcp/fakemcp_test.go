package fakemcp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run serves spec to the given request lines and returns stdout's lines,
// stderr and the exit status.
func run(t *testing.T, spec string, requests ...string) ([]string, string, int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := Run([]string{path}, strings.NewReader(strings.Join(requests, "\n")+"\n"), &out, &errOut)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if out.Len() == 0 {
		lines = nil
	}
	return lines, errOut.String(), code
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func TestLegacyPaginated(t *testing.T) {
	out, _, code := run(t, `{"tools":[{"name":"a"},{"name":"b"},{"name":"c"}],"pageSize":2}`,
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+modernMeta+`}}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"page-2"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"prompts/list"}`,
	)
	want := []string{
		`{"error":{"code":-32601,"message":"Method not found"},"id":1,"jsonrpc":"2.0"}`,
		`{"id":2,"jsonrpc":"2.0","result":{"capabilities":{"tools":{"listChanged":true}},"protocolVersion":"2025-06-18","serverInfo":{"name":"fakemcp","version":"1.0.0"}}}`,
		`{"id":3,"jsonrpc":"2.0","result":{"nextCursor":"page-2","tools":[{"name":"a"},{"name":"b"}]}}`,
		`{"id":4,"jsonrpc":"2.0","result":{"tools":[{"name":"c"}]}}`,
		`{"error":{"code":-32601,"message":"Method not found"},"id":5,"jsonrpc":"2.0"}`,
	}
	if code != 0 || strings.Join(out, "\n") != strings.Join(want, "\n") {
		t.Errorf("status %d, output:\n%s\nwant:\n%s", code, strings.Join(out, "\n"), strings.Join(want, "\n"))
	}
}

func TestModern(t *testing.T) {
	out, _, _ := run(t, `{"era":"modern","instructions":"hi","prompts":[]}`,
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+modernMeta+`}}`,
		`{"jsonrpc":"2.0","id":2,"method":"prompts/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"prompts/list","params":{`+modernMeta+`}}`,
	)
	want := []string{
		`{"id":1,"jsonrpc":"2.0","result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fakemcp","version":"1.0.0"}},"cacheScope":"public","capabilities":{"prompts":{"listChanged":true}},"instructions":"hi","resultType":"complete","supportedVersions":["2026-07-28"],"ttlMs":0}}`,
		`{"error":{"code":-32602,"message":"missing _meta io.modelcontextprotocol/protocolVersion"},"id":2,"jsonrpc":"2.0"}`,
		`{"id":3,"jsonrpc":"2.0","result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fakemcp","version":"1.0.0"}},"cacheScope":"public","prompts":[],"resultType":"complete","ttlMs":0}}`,
	}
	if strings.Join(out, "\n") != strings.Join(want, "\n") {
		t.Errorf("output:\n%s\nwant:\n%s", strings.Join(out, "\n"), strings.Join(want, "\n"))
	}
}

func TestMisbehaviour(t *testing.T) {
	out, stderr, code := run(t, `{"stderr":"hello\n","generateTools":2,"on":{"tools/list":{"do":"list-changed","times":1},"ping":{"do":"wrong-id"},"initialize":{"do":"exit","status":4,"text":"bye"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":4,"method":"initialize"}`,
		`{"jsonrpc":"2.0","id":5,"method":"ping"}`,
	)
	if code != 4 || stderr != "hello\nbye\n" {
		t.Errorf("status %d stderr %q", code, stderr)
	}
	if len(out) != 4 || out[0] != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` || !strings.Contains(out[3], `"id":424242`) {
		t.Errorf("output:\n%s", strings.Join(out, "\n"))
	}
	var res struct {
		Result struct{ Tools []json.RawMessage }
	}
	json.Unmarshal([]byte(out[1]), &res)
	if len(res.Result.Tools) != 2 {
		t.Errorf("generated tools: %s", out[1])
	}
}

func TestBadSpec(t *testing.T) {
	if _, stderr, code := run(t, `{"era":"future"}`); code != 2 || !strings.Contains(stderr, "era") {
		t.Errorf("status %d stderr %q", code, stderr)
	}
}

// An "on" entry may be a list: a call gets the first entry that applies
// (by tool name, past "skip", within "times"); "send" writes its lines
// first, a string as its text; answerCalls answers tools/call.
func TestMisbehaviourList(t *testing.T) {
	out, _, code := run(t, `{"answerCalls":true,"tools":[{"name":"echo"}],"on":{"tools/call":[
		{"name":"other","do":"silent"},
		{"name":"echo","do":"send","send":["not json",{"jsonrpc":"2.0","method":"x"}],"times":1},
		{"name":"echo","do":"repeat-id","skip":1,"times":1},
		{"name":"echo","do":"list-changed","then":{"tools":[{"name":"new"}]}}
	]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"other"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/list"}`,
	)
	echo := func(id, text string) string {
		return `{"id":` + id + `,"jsonrpc":"2.0","result":{"content":[{"type":"text","text":` + text + `}]}}`
	}
	want := []string{
		`not json`,
		`{"jsonrpc":"2.0","method":"x"}`,
		echo("2", `"{\"a\":1}"`),
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, // repeat-id skips its first match
		echo("3", `"{}"`),
		echo("4", `"{}"`),
		echo("4", `"{}"`),
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		echo("5", `"{}"`),
		`{"id":6,"jsonrpc":"2.0","result":{"tools":[{"name":"new"}]}}`,
	}
	if code != 0 || strings.Join(out, "\n") != strings.Join(want, "\n") {
		t.Errorf("status %d, output:\n%s\nwant:\n%s", code, strings.Join(out, "\n"), strings.Join(want, "\n"))
	}
}

// Without answerCalls a call is not implemented.
func TestCallsNotAnswered(t *testing.T) {
	out, _, _ := run(t, `{"tools":[{"name":"echo"}]}`, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`)
	if len(out) != 1 || !strings.Contains(out[0], "-32601") {
		t.Errorf("output:\n%s", strings.Join(out, "\n"))
	}
}

func TestUnknownMisbehaviour(t *testing.T) {
	if _, stderr, code := run(t, `{"on":{"ping":[{"do":"explode"}]}}`); code != 2 || !strings.Contains(stderr, `"explode"`) {
		t.Errorf("status %d stderr %q", code, stderr)
	}
}
