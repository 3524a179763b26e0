package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestProbeCalls: the calls ServerSpec.Calls asks for are made after the
// lists, in the same session, in both eras; whatever is not a plain
// complete result is that call's error, never the probe's, and the calls
// after it are still made.
func TestProbeCalls(t *testing.T) {
	big := strings.Repeat("x", 5000)
	on := `"on":{"tools/call":[
		{"name":"hang","do":"silent"},
		{"name":"boom","do":"error","code":-32603,"message":"internal"},
		{"name":"task","do":"result","result":{"resultType":"task","task":{"taskId":"t1","status":"working"}}},
		{"name":"ask","do":"result","result":{"resultType":"input_required","inputRequests":{}}},
		{"name":"big","do":"result","result":{"content":[{"type":"text","text":"` + big + `"}]}},
		{"name":"legacytask","do":"result","result":{"task":{"taskId":"t1","status":"working"}}},
		{"name":"toolerr","do":"result","result":{"content":[{"type":"text","text":"no"}],"isError":true}}
	]}`
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			spec := fake(t, `{"era":"`+era+`","answerCalls":true,"tools":[`+echoTool+`],`+on+`}`)
			spec.RequestTimeout = 500 * time.Millisecond
			spec.Timeout = 20 * time.Second
			spec.MaxCallResult = 4096
			var sawTools int
			spec.Calls = func(s *Surface) []ToolCall {
				sawTools = len(s.Tools)
				return []ToolCall{
					{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)},
					{Name: "hang"}, {Name: "boom"}, {Name: "task"}, {Name: "ask"}, {Name: "big"}, {Name: "legacytask"}, {Name: "toolerr"},
					{Name: "echo", Arguments: json.RawMessage(`{"text":"after"}`)},
				}
			}
			s, err := Probe(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			if sawTools != 1 {
				t.Errorf("Calls saw %d tools, want the listed one", sawTools)
			}
			if len(s.Calls) != 9 {
				t.Fatalf("%d call results, want 9: %+v", len(s.Calls), s.Calls)
			}
			wantErr := map[int]string{
				1: "no answer to tools/call within 500ms",
				2: "internal",
				3: "did not answer with a complete result",
				4: "did not answer with a complete result",
				5: "more than the 4096 a sample call may return",
				6: "answered with a task",
			}
			for i, r := range s.Calls {
				if want, ok := wantErr[i]; ok {
					if r.Err == nil || !strings.Contains(r.Err.Error(), want) {
						t.Errorf("call %d (%s): error %v, want one containing %q", i, r.Name, r.Err, want)
					}
					if r.Result != nil {
						t.Errorf("call %d (%s): a result beside the error", i, r.Name)
					}
					continue
				}
				if r.Err != nil {
					t.Errorf("call %d (%s): %v", i, r.Name, r.Err)
				}
			}
			if got := string(s.Calls[0].Result); !strings.Contains(got, `\"text\":\"hi\"`) {
				t.Errorf("echo's result %s does not carry its arguments", got)
			}
			if got := string(s.Calls[8].Result); !strings.Contains(got, "after") {
				t.Errorf("the call after the failures got %s", got)
			}
			if got := string(s.Calls[7].Result); !strings.Contains(got, `"isError":true`) {
				t.Errorf("a tool error is a result: got %s", got)
			}
		})
	}
}

// TestProbeCallsTimeout: a call that hangs past the probe's own timeout
// ends the calls (the rest are not made) and the probe still returns the
// surface it read.
func TestProbeCallsTimeout(t *testing.T) {
	spec := fake(t, `{"answerCalls":true,"tools":[`+echoTool+`],"on":{"tools/call":{"name":"hang","do":"silent"}}}`)
	spec.Timeout = 3 * time.Second
	spec.Calls = func(*Surface) []ToolCall { return []ToolCall{{Name: "hang"}, {Name: "echo"}} }
	s, err := Probe(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools) != 1 || len(s.Calls) != 2 {
		t.Fatalf("tools %d, calls %+v", len(s.Tools), s.Calls)
	}
	if s.Calls[0].Err == nil || s.Calls[1].Err == nil || !strings.Contains(s.Calls[1].Err.Error(), "not called") {
		t.Errorf("calls: %v; %v", s.Calls[0].Err, s.Calls[1].Err)
	}
}

// TestProbeCallsGarbage: a server that answers a call with a line that is
// not JSON fails that call, and the probe keeps the surface it read.
func TestProbeCallsGarbage(t *testing.T) {
	spec := fake(t, `{"answerCalls":true,"tools":[`+echoTool+`],"on":{"tools/call":{"do":"garbage","text":"\u001b[31mnot json"}}}`)
	spec.RequestTimeout = time.Second
	spec.Calls = func(*Surface) []ToolCall { return []ToolCall{{Name: "echo"}} }
	s, err := Probe(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Calls) != 1 || s.Calls[0].Err == nil || s.Calls[0].Result != nil {
		t.Fatalf("calls: %+v", s.Calls)
	}
	if strings.Contains(s.Calls[0].Err.Error(), "\x1b") {
		t.Errorf("the error carries the server's escape raw: %q", s.Calls[0].Err)
	}
}

// TestProbeNoCalls: without Calls (or with none asked for) nothing is
// called and Surface.Calls is nil, as before samples.
func TestProbeNoCalls(t *testing.T) {
	spec := fake(t, `{"tools":[`+echoTool+`],"on":{"tools/call":{"do":"exit"}}}`)
	spec.Calls = func(*Surface) []ToolCall { return nil }
	s, err := Probe(context.Background(), spec)
	if err != nil || s.Calls != nil {
		t.Fatalf("%v, %+v", err, s)
	}
}
