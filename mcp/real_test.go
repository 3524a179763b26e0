package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpform/mcpform/internal/npmtest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawLegacy is an independent client for cross-checking probes: it spawns
// argv itself, writes hand-made JSON lines and reads answers with
// encoding/json, none of package mcp's code.
type rawLegacy struct {
	t    *testing.T
	cmd  *exec.Cmd
	in   *json.Encoder
	out  *bufio.Scanner
	next int
}

func startRaw(t *testing.T, argv []string, env []string) *rawLegacy {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	r := &rawLegacy{t: t, cmd: cmd, in: json.NewEncoder(stdin), out: sc}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	r.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "0"}})
	if err := r.in.Encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rawLegacy) call(method string, params any) map[string]json.RawMessage {
	r.t.Helper()
	r.next++
	id := r.next
	if err := r.in.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		r.t.Fatal(err)
	}
	for r.out.Scan() {
		var m struct {
			ID     *int
			Result map[string]json.RawMessage
			Error  json.RawMessage
		}
		if err := json.Unmarshal(r.out.Bytes(), &m); err != nil {
			r.t.Fatalf("raw client: %v: %s", err, r.out.Bytes())
		}
		if m.ID == nil || *m.ID != id {
			continue // a notification
		}
		if m.Error != nil {
			r.t.Fatalf("raw client: %s: %s", method, m.Error)
		}
		return m.Result
	}
	r.t.Fatalf("raw client: no answer to %s: %v", method, r.out.Err())
	return nil
}

// list returns every item of a list method, compacted, following cursors.
func (r *rawLegacy) list(method, field string) []string {
	r.t.Helper()
	items := []string{}
	params := map[string]any{}
	for page := 0; page < 100; page++ {
		res := r.call(method, params)
		var got []json.RawMessage
		if err := json.Unmarshal(res[field], &got); err != nil {
			r.t.Fatalf("raw client: %s: %v", method, err)
		}
		for _, it := range got {
			items = append(items, compact(r.t, it))
		}
		var next string
		json.Unmarshal(res["nextCursor"], &next)
		if next == "" {
			return items
		}
		params = map[string]any{"cursor": next}
	}
	r.t.Fatalf("raw client: %s: over 100 pages", method)
	return nil
}

func compact(t *testing.T, raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func compactAll(t *testing.T, items []json.RawMessage) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, compact(t, it))
	}
	return out
}

// TestProbeNPMServers probes the pinned npm reference servers, which speak
// only the legacy era (server/discover gets -32601), and checks every list
// against an independent client's.
func TestProbeNPMServers(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name      string
		argv      []string
		minTools  int
		wantTools []string // a few tool names that must be there
		wantCaps  []string // capabilities that must be declared
	}{
		{"everything", []string{npmtest.Bin(t, "mcp-server-everything"), "stdio"}, 5, []string{"echo", "get-sum"}, []string{"tools", "prompts", "resources"}},
		{"filesystem", []string{npmtest.Bin(t, "mcp-server-filesystem"), dir}, 5, []string{"read_text_file", "list_directory"}, []string{"tools"}},
		{"memory", []string{npmtest.Bin(t, "mcp-server-memory")}, 5, []string{"create_entities", "read_graph"}, []string{"tools", "resources"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := []string{"PATH", "HOME"}
			spec := ServerSpec{Name: tt.name, Command: tt.argv, Env: env, Dir: dir, Timeout: 60 * time.Second}
			s, err := Probe(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			if s.Era != EraLegacy || s.ProtocolVersion != LatestLegacyVersion || s.SupportedVersions != nil {
				t.Errorf("era %v, version %q, supported %v; want legacy %s", s.Era, s.ProtocolVersion, s.SupportedVersions, LatestLegacyVersion)
			}
			var caps map[string]json.RawMessage
			if err := json.Unmarshal(s.Capabilities, &caps); err != nil {
				t.Fatal(err)
			}
			for _, c := range tt.wantCaps {
				if _, ok := caps[c]; !ok {
					t.Errorf("capabilities %s lack %q", s.Capabilities, c)
				}
			}
			if len(s.Tools) < tt.minTools {
				t.Errorf("%d tools, want at least %d", len(s.Tools), tt.minTools)
			}
			names := map[string]bool{}
			for _, tool := range s.Tools {
				var v struct{ Name string }
				json.Unmarshal(tool, &v)
				names[v.Name] = true
			}
			for _, n := range tt.wantTools {
				if !names[n] {
					t.Errorf("no tool %q among %v", n, names)
				}
			}

			raw := startRaw(t, tt.argv, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")})
			lists := []struct {
				cap, method, field string
				got                []json.RawMessage
			}{
				{"tools", "tools/list", "tools", s.Tools},
				{"prompts", "prompts/list", "prompts", s.Prompts},
				{"resources", "resources/list", "resources", s.Resources},
				{"resources", "resources/templates/list", "resourceTemplates", s.ResourceTemplates},
			}
			for _, l := range lists {
				if _, declared := caps[l.cap]; !declared {
					if len(l.got) != 0 {
						t.Errorf("%s listed although %q is not declared", l.method, l.cap)
					}
					continue
				}
				if d := cmp.Diff(raw.list(l.method, l.field), compactAll(t, l.got)); d != "" {
					t.Errorf("%s differs from an independent client's (-raw +probe):\n%s", l.method, d)
				}
			}
			t.Logf("%s: %d tools, %d prompts, %d resources, %d templates", tt.name, len(s.Tools), len(s.Prompts), len(s.Resources), len(s.ResourceTemplates))
		})
	}
}

// TestProbeGoSDKServer probes the Go SDK example server, which speaks both
// eras: auto finds 2026-07-28, forced legacy gets initialize. The go-sdk's
// own client is the independent check.
func TestProbeGoSDKServer(t *testing.T) {
	bin := notesServer(t)
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "check", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: exec.Command(bin)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var sdkTools []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		sdkTools = append(sdkTools, normalise(t, tool))
	}
	var sdkPrompts []string
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		sdkPrompts = append(sdkPrompts, normalise(t, p))
	}
	var sdkResources []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		sdkResources = append(sdkResources, normalise(t, r))
	}

	for _, tt := range []struct {
		era      Era
		wantEra  Era
		version  string
		versions bool
	}{
		{EraAuto, EraModern, ModernVersion, true},
		{EraModern, EraModern, ModernVersion, true},
		{EraLegacy, EraLegacy, LatestLegacyVersion, false},
	} {
		t.Run(tt.era.String(), func(t *testing.T) {
			s, err := Probe(ctx, ServerSpec{Name: "notes", Command: []string{bin}, Era: tt.era})
			if err != nil {
				t.Fatal(err)
			}
			if s.Era != tt.wantEra || s.ProtocolVersion != tt.version {
				t.Errorf("era %v version %q, want %v %q", s.Era, s.ProtocolVersion, tt.wantEra, tt.version)
			}
			if tt.versions && !contains(s.SupportedVersions, ModernVersion) {
				t.Errorf("supportedVersions %v lack %s", s.SupportedVersions, ModernVersion)
			}
			if !tt.versions && s.SupportedVersions != nil {
				t.Errorf("supportedVersions %v recorded for a legacy probe", s.SupportedVersions)
			}
			if !jsonEqual(s.ServerInfo, json.RawMessage(`{"name":"notes","version":"1.0.0"}`)) {
				t.Errorf("serverInfo %s", s.ServerInfo)
			}
			if s.Instructions == nil || *s.Instructions != "Keeps short notes for the current user." {
				t.Errorf("instructions %v", s.Instructions)
			}
			if d := cmp.Diff(sdkTools, normaliseAll(t, s.Tools)); d != "" {
				t.Errorf("tools differ from the go-sdk client's (-sdk +probe):\n%s", d)
			}
			if d := cmp.Diff(sdkPrompts, normaliseAll(t, s.Prompts)); d != "" {
				t.Errorf("prompts (-sdk +probe):\n%s", d)
			}
			if d := cmp.Diff(sdkResources, normaliseAll(t, s.Resources)); d != "" {
				t.Errorf("resources (-sdk +probe):\n%s", d)
			}
			if len(s.Tools) != 2 || len(s.Prompts) != 1 || len(s.Resources) != 1 || len(s.ResourceTemplates) != 0 {
				t.Errorf("counts %d/%d/%d/%d, want 2 tools, 1 prompt, 1 resource, 0 templates", len(s.Tools), len(s.Prompts), len(s.Resources), len(s.ResourceTemplates))
			}
		})
	}
}

// normalise turns an SDK value or a raw item into sorted-key compact JSON.
func normalise(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(x)
	return string(b)
}

func normaliseAll(t *testing.T, items []json.RawMessage) []string {
	var out []string
	for _, it := range items {
		out = append(out, normalise(t, it))
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
