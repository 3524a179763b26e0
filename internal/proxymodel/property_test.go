package proxymodel_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpform/mcpform/internal/hostile"
	pm "github.com/mcpform/mcpform/internal/proxymodel"
	"github.com/mcpform/mcpform/runtime"
	"github.com/mcpform/mcpform/runtime/audit"
	"github.com/mcpform/mcpform/runtime/taint"
)

var (
	sessions = flag.Int("sessions", 10000, "random adversarial sessions per run of TestProxyMatchesModel")
	seed     = flag.Int64("seed", 0, "random seed (0: from the clock; the seed is logged)")
)

// Session is one random adversarial session: the client's era and
// capabilities, each server's locked era, and the steps. It is what a
// regression seed under testdata/sessions holds.
type Session struct {
	Modern bool     `json:"modern"`
	Caps   []string `json:"caps"`
	Alpha  string   `json:"alpha"` // alpha's era: legacy or modern
	Beta   string   `json:"beta"`  // "" when the session has one server
	Steps  []Step   `json:"steps"`
}

// Step is one client message, what the server does if it is forwarded,
// and the user's answer if the proxy asks.
type Step struct {
	Msg    pm.Msg    `json:"msg"`
	Act    pm.Act    `json:"act,omitempty"`
	Answer pm.Answer `json:"answer,omitempty"`
}

func (s *Session) caps() map[string]bool {
	m := map[string]bool{}
	for _, c := range s.Caps {
		m[c] = true
	}
	return m
}

func (s *Session) model() *pm.Model {
	alpha, beta := models()
	alpha.Modern, beta.Modern = s.Alpha == "modern", s.Beta == "modern"
	if s.Beta == "" {
		return pm.New(s.Modern, s.caps(), alpha)
	}
	return pm.New(s.Modern, s.caps(), alpha, beta)
}

// TestProxyMatchesModel drives runtime.Run with -sessions random
// adversarial sessions (two servers of one client session, both eras) and
// compares every step with the reference model. A failing session is
// shrunk and written to testdata/sessions, which TestProxySeeds replays.
func TestProxyMatchesModel(t *testing.T) {
	n := *sessions
	if v, err := strconv.Atoi(os.Getenv("MCPFORM_PROP_SESSIONS")); err == nil && v > 0 {
		n = v // scripts/mutation.sh
	}
	if testing.Short() {
		n = min(n, 1000)
	}
	s0 := *seed
	if s0 == 0 {
		s0 = time.Now().UnixNano()
	}
	t.Logf("seed %d, %d sessions", s0, n)
	// A session makes ~20 short-lived goroutines and pipes; garbage
	// collection is most of what is left.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	workers := 6
	var next atomic.Int64
	var failed atomic.Int32
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			e := newEnv(t, w)
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || failed.Load() >= 3 {
					return
				}
				r := rand.New(rand.NewSource(s0 + i))
				sess := generate(r)
				if err := e.run(fmt.Sprintf("prop-%d-%d", s0, i), sess); err != nil {
					if failed.Add(1) > 3 {
						return
					}
					if os.Getenv("MCPFORM_MUTATION") != "" {
						// scripts/mutation.sh: a failure is the point;
						// it is no regression to keep.
						t.Errorf("session %d (seed %d) differs from the model: %v", i, s0+i, err)
						continue
					}
					small, serr := shrink(e, sess, err)
					path := saveSeed(t, small, serr)
					t.Errorf("session %d (seed %d) differs from the model: %v\nshrunk to %d steps, saved as %s:\n%s", i, s0+i, serr, len(small.Steps), path, describe(small))
				}
			}
		}(w)
	}
	wg.Wait()
	t.Logf("%d sessions in %v", n, time.Since(start).Round(time.Millisecond))
}

// TestProxySeeds replays every regression seed.
func TestProxySeeds(t *testing.T) {
	files, _ := filepath.Glob("testdata/sessions/*.json")
	e := newEnv(t, 0)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s Session
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := e.run("seed-"+filepath.Base(f), &s); err != nil {
			t.Errorf("%s: %v\n%s", f, err, describe(&s))
		}
	}
}

type harness struct {
	t     testing.TB
	dir   string
	store *taint.Store
	n     int
}

func newEnv(t testing.TB, w int) *harness {
	// Every session writes two audit logs and a taint state: on tmpfs when
	// there is one, that costs no disk round trips.
	dir := t.TempDir()
	if d, err := os.MkdirTemp("/dev/shm", "mcpform-prop-"); err == nil {
		dir = d
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	store, err := taint.Open(filepath.Join(dir, "taint"))
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, dir: dir, store: store}
}

func describe(s *Session) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  client modern=%v caps=%v alpha=%s beta=%s\n", s.Modern, s.Caps, s.Alpha, s.Beta)
	for i, st := range s.Steps {
		m, _ := json.Marshal(st)
		fmt.Fprintf(&b, "  %d: %s\n", i, m)
	}
	return b.String()
}

func saveSeed(t testing.TB, s *Session, err error) string {
	data, _ := json.MarshalIndent(s, "", "  ")
	sum := sha256.Sum256(data)
	path := filepath.Join("testdata", "sessions", hex.EncodeToString(sum[:6])+".json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	if werr := os.WriteFile(path, append(data, '\n'), 0o644); werr != nil {
		t.Logf("could not save the seed: %v", werr)
	}
	return path
}

// shrink removes steps while the session still fails (delta debugging
// over the message list: halves, then quarters, ..., then single steps).
func shrink(e *harness, s *Session, err error) (*Session, error) {
	best, bestErr := s, err
	for chunk := len(best.Steps) / 2; chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk <= len(best.Steps); {
			try := *best
			try.Steps = append(append([]Step{}, best.Steps[:i]...), best.Steps[i+chunk:]...)
			if terr := e.run(fmt.Sprintf("shrink-%d", time.Now().UnixNano()), &try); terr != nil {
				best, bestErr = &try, terr
				continue
			}
			i += chunk
		}
	}
	if best.Beta != "" {
		try := *best
		try.Beta = ""
		var steps []Step
		for _, st := range best.Steps {
			if st.Msg.Server != "beta" {
				steps = append(steps, st)
			}
		}
		try.Steps = steps
		if terr := e.run(fmt.Sprintf("shrink-%d", time.Now().UnixNano()), &try); terr != nil {
			best, bestErr = &try, terr
		}
	}
	return best, bestErr
}

// ---- generation

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.Intn(len(xs))] }

func generate(r *rand.Rand) *Session {
	s := &Session{Modern: r.Intn(2) == 0, Alpha: pick(r, "legacy", "modern")}
	for _, c := range []string{"elicitation", "roots", "sampling"} {
		if r.Intn(10) < 6 {
			s.Caps = append(s.Caps, c)
		}
	}
	if r.Intn(10) < 6 {
		s.Beta = pick(r, "legacy", "modern")
	}
	n := 2 + r.Intn(7)
	for i := 0; i < n; i++ {
		s.Steps = append(s.Steps, genStep(r, s.Beta != ""))
	}
	return s
}

func genStep(r *rand.Rand, two bool) Step {
	server := "alpha"
	if two && r.Intn(2) == 0 {
		server = "beta"
	}
	st := Step{Msg: pm.Msg{Server: server}}
	m := &st.Msg
	tools := map[string][]string{"alpha": {"fetch", "echo", "count", "stats"}, "beta": {"send", "echo", "open"}}[server]
	switch k := r.Intn(100); {
	case k < 40:
		m.Method, m.Item = "tools/call", pick(r, tools...)
		// Sources and sinks often.
		if r.Intn(3) == 0 {
			m.Item = map[string]string{"alpha": "fetch", "beta": "send"}[server]
		}
		if r.Intn(2) == 0 {
			m.Args = pick(r, pm.ArgsAbsent, pm.ArgsBadType, pm.ArgsExtra, pm.ArgsMissing, pm.ArgsNotObject, pm.ArgsCaseTwin)
		}
		if r.Intn(8) == 0 {
			m.Params = pick(r, pm.ParamsNameWrongCase, pm.ParamsCaseSmuggle, pm.ParamsArgsWrongCase)
		}

	case k < 46:
		m.Method, m.Item = "tools/call", pick(r, "exfil", "Echo", "ECHO", "nope", "send ", "fetch\u0000")
	case k < 52:
		m.Method, m.Item = "prompts/get", pick(r, "greet", "greet", "Greet", "nope")
		if r.Intn(2) == 0 {
			m.Args = pick(r, pm.ArgsAbsent, pm.ArgsBadType, pm.ArgsExtra, pm.ArgsMissing, pm.ArgsNotObject, pm.ArgsCaseTwin)
		}
	case k < 60:
		m.Method, m.Item = "resources/read", pick(r, "file:///a.txt", "file:///docs/readme", "file:///docs/../../etc/passwd", "file:///docs/a/b", "file:///b.txt", "FILE:///a.txt")
	case k < 67:
		m.Method = pick(r, "tools/list", "prompts/list", "resources/list", "resources/templates/list")
	case k < 70:
		m.Method = pick(r, "ping", "initialize")
	case k < 77:
		m.Method = pick(r, "tools/execute", "sampling/createMessage", "Tools/call", "resources/subscribe", "completion/complete", "logging/setLevel", "elicitation/create", "roots/list")
	case k < 82:
		m.Notification = true
		m.Method = pick(r, "notifications/initialized", "notifications/cancelled", "notifications/roots/list_changed", "notifications/tools/list_changed", "notifications/bogus")
	default:
		m.Frame = pick(r, pm.FrameGarbage, pm.FrameHuge, pm.FrameBatch, pm.FrameDupKey, pm.FrameUnknownTop, pm.FrameNullID, pm.FrameStrayResponse)
	}
	switch k := r.Intn(100); {
	case k < 40:
		st.Act = pm.Act{Do: "ok"}
	case k < 43:
		st.Act = pm.Act{Do: "exit"}
	case k < 51:
		st.Act = pm.Act{Do: pick(r, "srvreq", "mrtr"), Method: pick(r, "sampling/createMessage", "elicitation/create", "roots/list", "roots/list", "tools/call")}
	default:
		st.Act = pm.Act{Do: pick(r, "garbage", "dupkeys", "casekeys", "wrongid", "repeat", "huge", "progress", "drift", "nodrift", "silentdrift", "inject",
			"structured", "structured", "badoutput", "badoutput", "toolerror")}
	}
	if r.Intn(10) < 4 {
		st.Answer = pm.AnswerDecline
	}
	return st
}

// ---- rendering

var argsTable = map[string]map[pm.Args]string{
	"fetch": {pm.ArgsGood: `{"url":"https://example.com/page"}`, pm.ArgsBadType: `{"url":5}`, pm.ArgsExtra: `{"url":"https://x","headers":"x"}`, pm.ArgsMissing: `{}`, pm.ArgsCaseTwin: `{"url":"https://x","URL":"https://evil"}`},
	"echo":  {pm.ArgsGood: `{"text":"hi"}`, pm.ArgsBadType: `{"text":true}`, pm.ArgsExtra: `{"text":"hi","cmd":"rm -rf /"}`, pm.ArgsMissing: `{}`, pm.ArgsCaseTwin: `{"text":"a","Text":"b"}`},
	"count": {pm.ArgsGood: `{"n":3}`, pm.ArgsBadType: `{"n":-1}`, pm.ArgsExtra: `{"n":3,"m":4}`, pm.ArgsMissing: `{}`, pm.ArgsCaseTwin: `{"n":3,"N":-5}`},
	"send":  {pm.ArgsGood: `{"to":"bob@example.com","body":"hello"}`, pm.ArgsBadType: `{"to":["a"]}`, pm.ArgsExtra: `{"to":"a","bcc":"evil@example.com"}`, pm.ArgsMissing: `{"body":"x"}`, pm.ArgsCaseTwin: `{"to":"bob@example.com","TO":"evil@example.com"}`},
	"open":  {pm.ArgsGood: `{"path":"/safe/notes"}`, pm.ArgsBadType: `{"path":"/etc/shadow"}`, pm.ArgsExtra: `{"path":"/safe/x","mode":"r"}`, pm.ArgsMissing: `{"mode":"r"}`, pm.ArgsCaseTwin: `{"path":"/safe/x","PATH":"/etc/shadow"}`},
	"stats": {pm.ArgsGood: `{"q":"a b"}`, pm.ArgsBadType: `{"q":7}`, pm.ArgsExtra: `{"q":"a","limit":3}`, pm.ArgsMissing: `{}`, pm.ArgsCaseTwin: `{"q":"a","Q":"b"}`},
	"greet": {pm.ArgsGood: `{"who":"bob"}`, pm.ArgsBadType: `{"who":5}`, pm.ArgsExtra: `{"who":"bob","x":"y"}`, pm.ArgsMissing: `{}`, pm.ArgsCaseTwin: `{"who":"bob","WHO":"eve"}`},
}

func argsFor(m pm.Msg) (string, bool) {
	switch m.Args {
	case pm.ArgsAbsent:
		return "", false
	case pm.ArgsNotObject:
		return `[1,2]`, true
	}
	if t, ok := argsTable[m.Item]; ok {
		return t[m.Args], true
	}
	return map[pm.Args]string{pm.ArgsGood: `{}`, pm.ArgsBadType: `{"x":null}`, pm.ArgsExtra: `{"x":1}`, pm.ArgsMissing: `{}`, pm.ArgsCaseTwin: `{"x":1,"X":2}`}[m.Args], true
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// params renders the params members (without braces) of a request.
func params(m pm.Msg) string {
	var parts []string
	switch m.Method {
	case "tools/call", "prompts/get":
		key := "name"
		if m.Params == pm.ParamsNameWrongCase {
			key = "Name"
		}
		parts = append(parts, quote(key)+":"+quote(m.Item))
		if m.Params == pm.ParamsCaseSmuggle {
			other := map[string]string{"alpha": "fetch", "beta": "send"}[m.Server]
			parts = append(parts, `"NAME":`+quote(other))
		}
		a, ok := argsFor(m)
		if !ok && m.Params == pm.ParamsArgsWrongCase {
			a, ok = "{}", true // the wrong-case key must be there
		}
		if ok {
			akey := "arguments"
			if m.Params == pm.ParamsArgsWrongCase {
				akey = "Arguments"
			}
			parts = append(parts, quote(akey)+":"+a)
		}
	case "resources/read":
		key := "uri"
		if m.Params == pm.ParamsNameWrongCase {
			key = "URI"
		}
		parts = append(parts, quote(key)+":"+quote(m.Item))
		if m.Params == pm.ParamsCaseSmuggle {
			parts = append(parts, `"Uri":"file:///etc/passwd"`)
		}
	case "initialize":
		parts = append(parts, `"protocolVersion":"2025-11-25","capabilities":%CAPS%,"clientInfo":{"name":"prop","version":"1"}`)
	case "resources/subscribe":
		parts = append(parts, `"uri":"file:///a.txt"`)
	case "completion/complete":
		parts = append(parts, `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"b"}`)
	case "logging/setLevel":
		parts = append(parts, `"level":"debug"`)
	case "notifications/cancelled":
		parts = append(parts, `"requestId":999999,"reason":"x"`)
	}
	return strings.Join(parts, ",")
}

func (s *Session) capsJSON() string {
	var parts []string
	for _, c := range s.Caps {
		parts = append(parts, quote(c)+":{}")
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func (s *Session) meta() string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + s.capsJSON() + `,"io.modelcontextprotocol/clientInfo":{"name":"prop","version":"1"}}`
}

// render returns the line for m under id; extra are more params members.
func (s *Session) render(m pm.Msg, id int, extra ...string) string {
	idj := fmt.Sprint(id)
	switch m.Frame {
	case pm.FrameGarbage:
		return `this is not json {"jsonrpc":"2.0","id":` + idj
	case pm.FrameHuge:
		return `{"jsonrpc":"2.0","id":` + idj + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", maxLine) + `"}}}`
	case pm.FrameBatch:
		return `[{"jsonrpc":"2.0","id":` + idj + `,"method":"tools/call","params":{"name":"echo","arguments":{}}}]`
	case pm.FrameDupKey:
		return `{"jsonrpc":"2.0","id":` + idj + `,"method":"tools/call","params":{"name":"echo","name":"send","arguments":{}}}`
	case pm.FrameUnknownTop:
		return `{"jsonrpc":"2.0","id":` + idj + `,"Method":"tools/call","method":"ping"}`
	case pm.FrameNullID:
		return `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	case pm.FrameStrayResponse:
		return `{"jsonrpc":"2.0","id":"mcpform-1","result":{"action":"accept","content":{"approve":true}}}`
	}
	p := strings.Replace(params(m), "%CAPS%", s.capsJSON(), 1)
	if s.Modern && !m.Notification {
		if p != "" {
			p += ","
		}
		p += s.meta()
	}
	for _, e := range extra {
		if p != "" {
			p += ","
		}
		p += e
	}
	if m.Notification {
		return `{"jsonrpc":"2.0","method":` + quote(m.Method) + `,"params":{` + p + `}}`
	}
	return `{"jsonrpc":"2.0","id":` + idj + `,"method":` + quote(m.Method) + `,"params":{` + p + `}}`
}

// ---- running and comparing

// observed is what the client saw for one request.
type observed struct {
	class      pm.Class
	code       int
	asked      bool // the proxy's own elicitation/create came first
	passed     []string
	result     json.RawMessage
	text       string
	state      string // requestState of an input_required result
	relayed    int    // server requests carried in the call's result
	reasked    int    // approvals asked for the retries that answered them
	errMessage string
	lines      []string
}

var localMethods = map[string]bool{"initialize": true, "ping": true, "tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true}

// await reads frames until the response to id (nil: a null id).
func (s *Session) await(c *conn, id *int, answer pm.Answer, method string) (*observed, error) {
	o := &observed{}
	want := "null"
	if id != nil {
		want = fmt.Sprint(*id)
	}
	for {
		f, err := c.next(10 * time.Second)
		if err != nil {
			return nil, fmt.Errorf("waiting for the answer to id %s: %w (saw %q)", want, err, o.lines)
		}
		o.lines = append(o.lines, f.raw)
		if strings.Contains(f.raw, hostile.Marker) {
			return nil, fmt.Errorf("smuggled server output reached the client: %.300s", f.raw)
		}
		switch {
		case f.Method != "" && f.ID != nil:
			// A request to the client: the proxy's approval, or a server
			// request it passed on.
			if f.Method == "elicitation/create" && strings.Contains(string(f.Params), "mcpform: approve this call") {
				o.asked = true
				res := `{"action":"accept","content":{"approve":true}}`
				if answer == pm.AnswerDecline {
					res = `{"action":"decline"}`
				}
				if err := c.send(`{"jsonrpc":"2.0","id":` + string(f.ID) + `,"result":` + res + `}`); err != nil {
					return nil, err
				}
				continue
			}
			o.passed = append(o.passed, f.Method)
			res := `"result":{"roots":[]}`
			if f.Method != "roots/list" {
				res = `"error":{"code":-1,"message":"no"}`
			}
			if err := c.send(`{"jsonrpc":"2.0","id":` + string(f.ID) + `,` + res + `}`); err != nil {
				return nil, err
			}
		case f.Method != "":
			// A notification: nothing a server says unasked may reach the
			// client but progress for a request in flight (it sends none
			// with a valid token) and cancellations of requests it passed.
			if f.Method != "notifications/cancelled" {
				return nil, fmt.Errorf("the client got a notification it must not: %.300s", f.raw)
			}
		case string(f.ID) == want:
			if state := reapproval(f); state != "" && o.relayed > 0 {
				// The retry that answered a relayed request continues a
				// sink call in a tainted session: asked about again. Only
				// an approved (or ungated) call got this far.
				o.reasked++
				line, err := retryLine(c.last, map[string]json.RawMessage{"mcpform-taint-approval": json.RawMessage(`{"action":"accept","content":{"approve":true}}`)}, state)
				if err != nil {
					return nil, err
				}
				want = want + "0"
				if line, err = withID(line, want); err != nil {
					return nil, err
				}
				if err := c.send(line); err != nil {
					return nil, err
				}
				continue
			}
			if retry, key, asked := relayed(f); retry != "" {
				o.relayed++
				// A legacy server's request to this 2026-07-28 client,
				// carried by the call's input_required result: the client
				// answers it in a retry, whose answer is the call's.
				o.passed = append(o.passed, asked)
				answer := `{"roots":[]}`
				responses := map[string]json.RawMessage{}
				if asked == "roots/list" {
					responses[key] = json.RawMessage(answer)
				}
				line, err := retryLine(c.last, responses, retry)
				if err != nil {
					return nil, err
				}
				want = want + "0"
				if line, err = withID(line, want); err != nil {
					return nil, err
				}
				if err := c.send(line); err != nil {
					return nil, err
				}
				continue
			}
			o.classify(f, method)
			return o, nil
		default:
			return nil, fmt.Errorf("a response to id %s while waiting for %s: %.300s", f.ID, want, f.raw)
		}
	}
}

// relayed returns the requestState of an input_required result that
// carries a server request in mcpform's relay (mcpform-relay-…), the key
// and method of that request; "" for any other frame.
func relayed(f *frame) (state, key, method string) {
	var r struct {
		ResultType    string `json:"resultType"`
		RequestState  string `json:"requestState"`
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
	}
	if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || r.ResultType != "input_required" || !strings.HasPrefix(r.RequestState, "mcpform-relay-") || len(r.InputRequests) != 1 {
		return "", "", ""
	}
	for k, v := range r.InputRequests {
		key, method = k, v.Method
	}
	return r.RequestState, key, method
}

// reapproval returns the requestState of an input_required result that
// asks for the taint gate's approval of a continuing call; "" for any other
// frame.
func reapproval(f *frame) string {
	var r struct {
		ResultType    string                     `json:"resultType"`
		RequestState  string                     `json:"requestState"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
	}
	if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || r.ResultType != "input_required" || r.InputRequests["mcpform-taint-approval"] == nil {
		return ""
	}
	if !strings.Contains(string(r.InputRequests["mcpform-taint-approval"]), "It continues the call") {
		return ""
	}
	return r.RequestState
}

// retryLine is line (a request) with inputResponses and requestState set.
func retryLine(line string, responses map[string]json.RawMessage, state string) (string, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return "", err
	}
	params, _ := m["params"].(map[string]any)
	if params == nil {
		params = map[string]any{}
	}
	params["inputResponses"] = responses
	params["requestState"] = state
	m["params"] = params
	b, err := json.Marshal(m)
	return string(b), err
}

// withID is line (a request) under the id id.
func withID(line, id string) (string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return "", err
	}
	m["id"] = json.RawMessage(id)
	b, err := json.Marshal(m)
	return string(b), err
}

func (o *observed) classify(f *frame, method string) {
	if f.Error != nil {
		o.code = f.Error.Code
		o.errMessage = f.Error.Message
		switch {
		case o.code == pm.CodeQuarantined:
			o.class = pm.Quarantined
		case o.code == pm.CodeInternal && (strings.Contains(o.errMessage, "exited before it answered") ||
			strings.Contains(o.errMessage, "it exited, and its output stayed open")):
			// The second: the server exited and its output did not end
			// within the proxy's grace (a loaded machine's slow reap),
			// so the proxy ended the connection itself; gone all the same.
			o.class = pm.Gone
		default:
			o.class = pm.Refuse
		}
		return
	}
	o.result = f.Result
	var r struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
		IsError      bool   `json:"isError"`
		Content      []struct {
			Text string `json:"text"`
		} `json:"content"`
		Contents []struct {
			Text string `json:"text"`
		} `json:"contents"`
		Messages []struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(f.Result, &r)
	for _, c := range r.Content {
		o.text += c.Text
	}
	for _, c := range r.Contents {
		o.text += c.Text
	}
	for _, m := range r.Messages {
		o.text += m.Content.Text
	}
	switch {
	case r.ResultType == "input_required" && strings.HasPrefix(r.RequestState, "mcpform-taint"):
		o.class, o.state = pm.Ask, r.RequestState
	case r.IsError && strings.HasPrefix(o.text, "mcpform withheld the result"):
		o.class = pm.Withheld
	case r.IsError && strings.HasPrefix(o.text, "mcpform"):
		o.class = pm.ToolRefuse
	case localMethods[method]:
		o.class = pm.Local
	default:
		o.class = pm.Forward
	}
}

func same(v pm.Verdict, o *observed) bool {
	if v.Class != o.class {
		return false
	}
	return v.Class != pm.Refuse || v.Code == o.code
}

func calls(l *hostile.Log) []hostile.Received {
	var out []hostile.Received
	for _, r := range l.All() {
		switch r.Method {
		case "tools/call", "prompts/get", "resources/read":
			out = append(out, r)
		}
	}
	return out
}

// run runs one session against runtime.Run and compares it with the model.
func (h *harness) run(sessionID string, s *Session) (err error) {
	h.n++
	dir := filepath.Join(h.dir, fmt.Sprintf("s%d", h.n))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	e := &env{dir: dir, store: h.store}

	// The model decides which steps reach each server, and so which of
	// the server's actions answers which call.
	queues := map[string][]hostile.Action{}
	sim := s.model()
	for _, st := range s.Steps {
		if sim.State.Exited[st.Msg.Server] || sim.Servers[st.Msg.Server] == nil {
			continue
		}
		v := effective(sim, st)
		if v.Class == pm.Forward {
			queues[st.Msg.Server] = append(queues[st.Msg.Server], hostile.Action{Do: st.Act.Do, Method: st.Act.Method})
			sv := sim.Server(st.Msg, st.Act)
			if sv.Call != pm.Forward {
				v = pm.Verdict{Class: sv.Call, Code: sv.Code}
			}
			if sv.Input {
				continue // nothing of a source reached the client
			}
		}
		sim.Answered(st.Msg, v)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conns := map[string]*conn{}
	audits := map[string]*audit.Log{}
	servers := map[string]string{"alpha": s.Alpha, "beta": s.Beta}
	for _, name := range []string{"alpha", "beta"} {
		if servers[name] == "" {
			continue
		}
		c, a, err := startConn(ctx, e, sessionID, name, servers[name], queues[name])
		if err != nil {
			return err
		}
		conns[name], audits[name] = c, a
		defer a.Close()
	}
	defer func() {
		for _, c := range conns {
			if eerr := c.end(); eerr != nil && err == nil {
				err = eerr
			}
		}
		if err != nil {
			return
		}
		for n, a := range audits {
			a.Close()
			f, ferr := os.Open(a.Path())
			if ferr != nil {
				err = ferr
				return
			}
			_, verr := audit.Verify(f)
			f.Close()
			if verr != nil {
				err = fmt.Errorf("%s's audit log does not verify: %w", n, verr)
			}
		}
	}()
	ids := 0
	newID := func() int { ids++; return ids }
	if !s.Modern {
		for _, name := range []string{"alpha", "beta"} {
			c := conns[name]
			if c == nil {
				continue
			}
			id := newID()
			if err := c.send(`{"jsonrpc":"2.0","id":` + fmt.Sprint(id) + `,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + s.capsJSON() + `,"clientInfo":{"name":"prop","version":"1"}}}`); err != nil {
				return err
			}
			if _, err := s.await(c, &id, 0, "initialize"); err != nil {
				return err
			}
		}
	}

	m := s.model()
	for i, st := range s.Steps {
		c := conns[st.Msg.Server]
		if c == nil || m.State.Exited[st.Msg.Server] {
			continue
		}
		if err := h.step(s, m, c, i, st, newID); err != nil {
			return fmt.Errorf("step %d (%s %s on %s): %w", i, st.Msg.Method, st.Msg.Item, st.Msg.Server, err)
		}
	}
	return nil
}

// effective is the model's verdict once approvals were answered: a legacy
// Ask becomes what follows the answer; a modern Ask is retried with the
// requestState and the answer.
func effective(m *pm.Model, st Step) pm.Verdict {
	v := m.Client(st.Msg, st.Answer)
	if v.Class == pm.Ask {
		if v.After != nil {
			return *v.After
		}
		retry := st.Msg
		retry.Retry, retry.Answer = true, st.Answer
		return m.Client(retry, st.Answer)
	}
	return v
}

func (h *harness) step(s *Session, m *pm.Model, c *conn, i int, st Step, newID func() int) error {
	v := m.Client(st.Msg, st.Answer)
	before := len(calls(c.log))
	id := newID()
	line := s.render(st.Msg, id)
	if err := c.send(line); err != nil {
		return err
	}
	var o *observed
	var err error
	switch {
	case v.Class == pm.None:
		// Nothing comes back; a ping after it shows the proxy is past it.
		pid := newID()
		if err := c.send(`{"jsonrpc":"2.0","id":` + fmt.Sprint(pid) + `,"method":"ping"}`); err != nil {
			return err
		}
		o, err = s.await(c, &pid, st.Answer, "ping")
		if err == nil && o.class != pm.Local {
			err = fmt.Errorf("ping after a notification: %s", o.class)
		}
		if err == nil && len(o.lines) > 1 {
			err = fmt.Errorf("a notification was answered: %q", o.lines)
		}
		if err != nil {
			return err
		}
		if n := len(calls(c.log)); n != before {
			return fmt.Errorf("a notification reached the server as a call")
		}
		return nil
	case st.Msg.Frame == pm.FrameGarbage || st.Msg.Frame == pm.FrameHuge || st.Msg.Frame == pm.FrameBatch || st.Msg.Frame == pm.FrameDupKey || st.Msg.Frame == pm.FrameNullID:
		o, err = s.await(c, nil, st.Answer, "")
	default:
		o, err = s.await(c, &id, st.Answer, st.Msg.Method)
	}
	if err != nil {
		return err
	}
	got := o.class
	want := v
	if v.Class == pm.Ask && v.After != nil {
		// Legacy: asked, then what follows the answer.
		if !o.asked {
			return fmt.Errorf("model: ask for approval; proxy did not ask and answered %s %d %.200s", o.class, o.code, o.lines)
		}
		want = *v.After
	} else if o.asked {
		return fmt.Errorf("model: %s; the proxy asked for approval", v.Class)
	}
	if v.Class == pm.Ask && v.After == nil {
		// Modern: input_required, then the retry.
		if got != pm.Ask {
			return fmt.Errorf("model: input_required; proxy: %s %d %.300s", got, o.code, o.lines)
		}
		if len(calls(c.log)) != before {
			return fmt.Errorf("a call held for approval reached the server")
		}
		retry := st.Msg
		retry.Retry, retry.Answer = true, st.Answer
		want = m.Client(retry, st.Answer)
		answer := `{"action":"accept","content":{"approve":true}}`
		if st.Answer == pm.AnswerDecline {
			answer = `{"action":"decline"}`
		}
		rid := newID()
		if err := c.send(s.render(st.Msg, rid, `"requestState":`+quote(o.state), `"inputResponses":{"mcpform-taint-approval":`+answer+`}`)); err != nil {
			return err
		}
		if o, err = s.await(c, &rid, st.Answer, st.Msg.Method); err != nil {
			return err
		}
	}
	// What the server did, if the call reached it.
	var sv pm.ServerVerdict
	reached := want.Class == pm.Forward // the server gets the call, whatever it does then
	if reached {
		sv = m.Server(st.Msg, st.Act)
		if sv.Call != pm.Forward {
			want = pm.Verdict{Class: sv.Call, Code: sv.Code}
		}
	}
	if !same(want, o) {
		return fmt.Errorf("model: %s %d; proxy: %s %d (%s)\nline: %.400s\nclient saw: %.600q", want.Class, want.Code, o.class, o.code, o.errMessage, line, o.lines)
	}
	if o.relayed > 0 && (o.reasked > 0) != m.ContinuationAsked(st.Msg) {
		return fmt.Errorf("model: the answer to the relayed request asked about again: %v; proxy: %d times\nclient saw: %.600q", m.ContinuationAsked(st.Msg), o.reasked, o.lines)
	}
	if !sv.Input {
		m.Answered(st.Msg, want)
	}
	after := calls(c.log)
	if sv.Input {
		if !strings.Contains(string(o.result), `"input_required"`) || !strings.Contains(string(o.result), "server-state-1") {
			return fmt.Errorf("the client did not get the server's input_required result: %.300s", o.lines)
		}
	}
	switch {
	case reached || want.Class == pm.Gone:
		if calls := 1 + sv.Retries; len(after) != before+calls {
			return fmt.Errorf("model: forwarded %d times; the server got %d calls", calls, len(after)-before)
		}
		r := after[before]
		if r.Method != st.Msg.Method {
			return fmt.Errorf("the server got %s, not %s", r.Method, st.Msg.Method)
		}
		if err := sameCall(st.Msg, r.Params); err != nil {
			return err
		}
		if want.Class == pm.Forward && !sv.Input && !strings.Contains(o.text, hostile.Text(&r)) {
			return fmt.Errorf("the client did not get the server's answer: %.300s", o.lines)
		}
	default:
		if len(after) != before {
			return fmt.Errorf("model: %s; but the server got the call: %.300s", want.Class, after[len(after)-1].Line)
		}
	}
	if want.Class == pm.Local {
		if err := checkLocal(s, m, st.Msg, o.result); err != nil {
			return err
		}
	}
	if sv.Request {
		if sv.Passed != (len(o.passed) > 0) {
			return fmt.Errorf("model: server request %s passed=%v; the client saw %q", st.Act.Method, sv.Passed, o.passed)
		}
		if !sv.Passed && st.Act.Do == "srvreq" {
			denied := false
			for _, r := range c.log.All() {
				if string(r.ID) == `"srv-1"` && r.Error != nil {
					denied = true
				}
			}
			if !denied {
				return fmt.Errorf("the proxy did not answer the server's %s with an error", st.Act.Method)
			}
		}
	} else if len(o.passed) > 0 {
		return fmt.Errorf("the client got a server request: %q", o.passed)
	}
	if want.Class == pm.Gone {
		select {
		case err := <-c.done:
			c.ended, c.err = true, err
			var exit *runtime.ServerExitError
			if !errors.As(err, &exit) {
				return fmt.Errorf("the run ended with %v, not a server exit", err)
			}
		case <-time.After(10 * time.Second):
			return fmt.Errorf("the run did not end when the server exited")
		}
	}
	return nil
}

// sameCall checks that the server got the call as the client sent it: the
// same name or URI and the same arguments, byte for byte.
func sameCall(m pm.Msg, got json.RawMessage) error {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(got, &p); err != nil {
		return fmt.Errorf("the server got params that are not an object: %s", got)
	}
	key := "name"
	if m.Method == "resources/read" {
		key = "uri"
	}
	if string(p[key]) != quote(m.Item) {
		return fmt.Errorf("the server got %s %s, the client asked for %q", key, p[key], m.Item)
	}
	want, ok := argsFor(m)
	if m.Method == "resources/read" {
		ok = false
	}
	if a, has := p["arguments"]; has != ok || (ok && string(a) != want) {
		return fmt.Errorf("the server got arguments %s, the client sent %s", a, want)
	}
	return nil
}

// checkLocal checks what the proxy answered from the lock: always the
// locked lists, whatever the server lists now, without the tools the model
// says the client may not see (hidden by expose, blocked after drift).
func checkLocal(s *Session, model *pm.Model, m pm.Msg, res json.RawMessage) error {
	var r map[string]json.RawMessage
	json.Unmarshal(res, &r)
	want := map[string]map[string][]string{
		"alpha": {"tools/list": alphaTools, "prompts/list": alphaPrompts, "resources/list": alphaResources, "resources/templates/list": alphaTemplates},
		"beta":  {"tools/list": betaTools},
	}[m.Server]
	field := map[string]string{"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates"}[m.Method]
	if field == "" {
		if m.Method == "initialize" && !strings.Contains(string(r["serverInfo"]), `"hostile"`) {
			return fmt.Errorf("initialize did not carry the locked serverInfo: %s", res)
		}
		return nil
	}
	var items []json.RawMessage
	json.Unmarshal(r[field], &items)
	if m.Method == "tools/list" {
		var listed []string
		for _, t := range want[m.Method] {
			var it struct{ Name string }
			json.Unmarshal([]byte(t), &it)
			if model.Listed(m.Server, it.Name) {
				listed = append(listed, t)
			}
		}
		want = map[string][]string{m.Method: listed}
	}
	if !sameItems(items, want[m.Method]) {
		return fmt.Errorf("%s is not the locked list: %s", m.Method, res)
	}
	return nil
}
