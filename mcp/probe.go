package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/jsonscan"
)

// DefaultTimeout bounds a whole probe.
const DefaultTimeout = 30 * time.Second

// maxItems is the most items of one kind a probe accepts (and a lock holds).
const maxItems = 1000

// maxRelists bounds how often one kind is listed again after a
// list_changed notification arrived while it was being listed.
const maxRelists = 3

// ServerSpec says how to start a server and how to speak to it.
type ServerSpec struct {
	Name      string            // for error messages
	Command   []string          // argv, started directly (no shell); nil for a remote server
	URL       string            // a remote server's endpoint (Streamable HTTP or HTTP+SSE), instead of Command
	Transport string            // a remote server's: "" detects (sse.go), TransportStreamableHTTP or TransportSSE speak only that one
	Headers   map[string]string // fixed headers sent to a remote server
	BearerEnv string            // the variable holding a remote server's token ("" for none)
	OAuth     OAuthHandler      // a remote server's OAuth tokens, instead of BearerEnv; nil for none

	// ParamHeaders are, by tool, the parameters a remote server's
	// tools/call mirrors into Mcp-Param-* headers (ParamHeaders of the
	// locked input schemas).
	ParamHeaders map[string][]ParamHeader
	Env          []string                    // names passed through; nothing else of the environment
	LookupEnv    func(string) (string, bool) // value source, default os.LookupEnv
	Dir          string                      // working directory; "" is mcpform's
	Era          Era                         // EraAuto detects; the others force

	// ClientCapabilities are declared upstream (in initialize, or in every
	// 2026-07-28 request's _meta); nil means {}. The probe and the proxy
	// declare the same, so both see the same surface.
	ClientCapabilities json.RawMessage

	Timeout         time.Duration // overall probe timeout, default DefaultTimeout
	RequestTimeout  time.Duration // per request, default Timeout
	DiscoverTimeout time.Duration // unanswered server/discover means legacy; default min(RequestTimeout, Timeout/2)
	ShutdownGrace   time.Duration // each shutdown step, default defaultShutdownGrace
	MaxLineSize     int           // per message, default DefaultMaxLineSize

	// Stderr, when set, also receives the server's stderr as it comes (the
	// proxy passes it through); the Process keeps its tail either way.
	Stderr io.Writer

	// Prepare, when set, may rewrite cmd before it starts (the sandbox
	// does); cleanup runs after the server has been shut down.
	Prepare func(cmd *exec.Cmd) (cleanup func(), err error)

	// OnPhase, when set, hears of each phase as the probe enters it, on
	// the probing goroutine (so it must not block). A phase may come
	// again: the server is restarted for initialize when it closed on
	// server/discover.
	OnPhase func(Phase)

	// OnReject, when set, hears of each tool a remote server listed that
	// the probe left out: its x-mcp-header annotations are invalid.
	OnReject func(tool string, why error)

	// Calls, when set, is asked once the lists are read which tools/call
	// requests the probe makes next, in the same session (plan's sample
	// calls: which tools, and whether to call them at all, is the
	// caller's decision). Each waits at most RequestTimeout and never past
	// Timeout; the results are Surface.Calls. A failed call does not fail
	// the probe.
	Calls func(s *Surface) []ToolCall
	// MaxCallResult bounds each call's result in bytes, default
	// DefaultMaxCallResult (and never more than MaxLineSize).
	MaxCallResult int
}

// Phase is a step of a probe, for progress reports. How the probe ends
// (its Surface or its *ProbeError) is Probe's result, not a phase.
type Phase int

const (
	// PhaseStarting: the server's process has been started.
	PhaseStarting Phase = iota + 1
	// PhaseHandshake: server/discover or initialize has been sent and
	// not yet answered. A server run through `go run`, npx or uvx spends
	// its compiling or downloading here.
	PhaseHandshake
	// PhaseListing: the handshake was answered; the lists (tools,
	// prompts, resources, resource templates) are being read.
	PhaseListing
)

func (p Phase) String() string {
	switch p {
	case PhaseStarting:
		return "starting"
	case PhaseHandshake:
		return "handshake"
	case PhaseListing:
		return "listing"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

func (s ServerSpec) withDefaults() ServerSpec {
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.RequestTimeout <= 0 || s.RequestTimeout > s.Timeout {
		s.RequestTimeout = s.Timeout
	}
	if s.DiscoverTimeout <= 0 {
		// Half the probe's time: a server started through `go run` or npx
		// may take many seconds to read its first line, and a silent
		// server/discover must not be mistaken for a legacy server then.
		s.DiscoverTimeout = min(s.RequestTimeout, s.Timeout/2)
	}
	if s.Name == "" && len(s.Command) > 0 {
		s.Name = s.Command[0]
	}
	if s.Name == "" {
		s.Name = s.URL
	}
	return s
}

// Surface is what a server showed a probe. Items are exactly as the server
// sent them (all pages, in server order); volatile result fields
// (nextCursor, resultType, ttlMs, cacheScope, _meta) are not kept.
type Surface struct {
	Era               Era
	Transport         string // a remote server's, as it was reached: TransportStreamableHTTP or TransportSSE; "" for a local one
	ProtocolVersion   string
	SupportedVersions []string // 2026-07-28 only: the versions server/discover listed
	ServerInfo        json.RawMessage
	Instructions      *string
	Capabilities      json.RawMessage
	Tools             []json.RawMessage
	Prompts           []json.RawMessage
	Resources         []json.RawMessage
	ResourceTemplates []json.RawMessage
	// Calls are the results of ServerSpec.Calls' calls, in their order.
	Calls []CallResult
}

// ProbeError is a server that could not be started or probed. The CLI maps
// it to exit code 3.
type ProbeError struct {
	Server string
	Remote bool   // reached over the network: there is no stderr to show
	Stage  string // "start", "server/discover", "initialize", "tools/list", …
	Err    error
	Stderr string // the tail of the server's stderr, unescaped
}

// stderrLines is how much of the stderr tail Error shows.
const stderrLines, stderrBytes = 20, 4000

func (e *ProbeError) Error() string {
	var b strings.Builder
	var se *StartError
	if errors.As(e.Err, &se) {
		fmt.Fprintf(&b, "probing server %q: %s: the server did not start: %s", escape.String(e.Server), e.Stage, se.Reason())
		b.WriteString(se.Details())
		return b.String()
	}
	fmt.Fprintf(&b, "probing server %q: %s: %v", escape.String(e.Server), e.Stage, e.Err)
	if tail := lastLines(e.Stderr, stderrLines, stderrBytes); tail != "" {
		b.WriteString("\nserver stderr (last lines):")
		for _, l := range strings.Split(tail, "\n") {
			b.WriteString("\n  | ")
			b.WriteString(escape.String(l))
		}
	} else if !e.Remote {
		b.WriteString(" (nothing on stderr)")
	}
	return b.String()
}

func (e *ProbeError) Unwrap() error { return e.Err }

func exitStatus(err error) string {
	if err == nil {
		return "it exited with status 0"
	}
	return "it ended with " + err.Error()
}

func lastLines(s string, n, maxBytes int) string {
	s = strings.TrimRight(s, "\r\n \t")
	if len(s) > maxBytes {
		s = s[len(s)-maxBytes:]
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Probe starts the server, finds its era (or uses the forced one), reads
// its whole surface and shuts it down. Era detection follows the way the
// MCP spec asks a client that supports both eras on stdio to do it
// (backward compatibility): server/discover first; a DiscoverResult listing
// 2026-07-28 is modern; -32021/-32022, or a DiscoverResult without
// 2026-07-28, without serverInfo in _meta or not "complete", is an error
// (no fallback); any other error, an exit or no answer is legacy, spoken
// with initialize (restarting the server if it exited). Every failure is a
// *ProbeError.
func Probe(ctx context.Context, spec ServerSpec) (*Surface, error) {
	spec = spec.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	p := &prober{spec: spec, stage: "start"}
	s, err := p.run(ctx)
	if p.proc != nil {
		p.proc.Close()
	}
	if p.remote != nil {
		p.remote.Close()
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			// Say which setting ran out rather than repeat the context's
			// words; the wrapped error keeps errors.Is working.
			err = &timeoutError{timeout: spec.Timeout, err: err}
		}
		// A server that could not be run, or exited or fell silent before
		// it answered the handshake, did not start: say so, with what it
		// was given.
		var se *StartError
		handshake := p.stage == "server/discover" || p.stage == "initialize"
		switch {
		case errors.As(err, &se):
		case handshake && p.proc != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			// The probe's time ran out, and the server was stopped for
			// it: its end is not an exit of its own.
			if !errors.Is(err, context.DeadlineExceeded) {
				err = &timeoutError{timeout: spec.Timeout, err: context.DeadlineExceeded}
			}
			se = p.proc.StartError(p.stage, false, err)
		case handshake && p.proc != nil && errors.Is(err, ErrServerClosed):
			se = p.proc.StartError(p.stage, true, err)
		case handshake && p.proc != nil && errors.Is(err, context.DeadlineExceeded):
			se = p.proc.StartError(p.stage, false, err)
		}
		if se != nil {
			return nil, &ProbeError{Server: spec.Name, Stage: p.stage, Err: se, Stderr: se.Stderr}
		}
		if errors.Is(err, ErrServerClosed) && p.proc != nil {
			err = fmt.Errorf("%w (%s)", err, exitStatus(p.proc.Wait()))
		}
		pe := &ProbeError{Server: spec.Name, Stage: p.stage, Err: err, Remote: spec.URL != ""}
		if p.proc != nil {
			pe.Stderr = p.proc.StderrTail()
		}
		return nil, pe
	}
	return s, nil
}

type prober struct {
	spec    ServerSpec
	stage   string
	proc    *Process
	remote  *httpLines // a remote server's stream, instead of proc
	conn    *rpcConn
	changed [4]atomic.Int64 // list_changed notifications seen, by kind
	modern  bool
}

// kinds of list, in listing order.
type kind struct {
	cap, method, field, key, noun string
	changed                       int // index into prober.changed
}

var kinds = []kind{
	{"tools", "tools/list", "tools", "name", "tool", 0},
	{"prompts", "prompts/list", "prompts", "name", "prompt", 1},
	{"resources", "resources/list", "resources", "uri", "resource", 2},
	{"resources", "resources/templates/list", "resourceTemplates", "uriTemplate", "resource template", 3},
}

func (p *prober) start(ctx context.Context) error {
	if p.proc != nil {
		p.proc.Close()
	}
	p.stage = "start"
	if p.spec.URL != "" {
		return p.dial()
	}
	proc, err := Start(ctx, p.spec)
	if err != nil {
		return err
	}
	p.proc = proc
	p.enter(PhaseStarting)
	p.conn = newRPCConn(proc.Stdout, proc.Stdin, rpcConnOptions{
		MaxLineSize:    p.spec.MaxLineSize,
		RequestTimeout: p.spec.RequestTimeout,
		OnNotification: p.notified,
		OnRequest:      denyRequests,
	})
	return nil
}

// dial sets up the connection to a remote server (a new session each
// time, as a restarted process is a new one).
func (p *prober) dial() error {
	if p.remote != nil {
		p.remote.Close()
	}
	h, err := dialHTTP(p.spec)
	if err != nil {
		return err
	}
	p.remote = h
	// No PhaseStarting: nothing is started, and the connection is made
	// by the handshake's request.
	p.conn = newRPCConn(h, h, rpcConnOptions{
		MaxLineSize:    p.spec.MaxLineSize,
		RequestTimeout: p.spec.RequestTimeout,
		OnNotification: p.notified,
		OnRequest:      denyRequests,
	})
	return nil
}

func (p *prober) enter(ph Phase) {
	if p.spec.OnPhase != nil {
		p.spec.OnPhase(ph)
	}
}

func (p *prober) notified(m *Message) {
	switch m.Method {
	case "notifications/tools/list_changed":
		p.changed[0].Add(1)
	case "notifications/prompts/list_changed":
		p.changed[1].Add(1)
	case "notifications/resources/list_changed":
		p.changed[2].Add(1)
		p.changed[3].Add(1)
	}
}

// denyRequests answers a ping (which the spec says to answer promptly) and
// refuses every other server→client request: a probe declares no client
// capabilities it could serve.
func denyRequests(_ context.Context, req *Message) (json.RawMessage, *RPCError) {
	if req.Method == "ping" {
		return json.RawMessage("{}"), nil
	}
	return nil, &RPCError{Code: CodeMethodNotFound, Message: "mcpform's probe does not serve " + req.Method}
}

func (p *prober) run(ctx context.Context) (*Surface, error) {
	if err := p.start(ctx); err != nil {
		return nil, err
	}
	var s *Surface
	var err error
	switch p.spec.Era {
	case EraModern:
		s, err = p.discover(ctx, p.spec.RequestTimeout)
	case EraLegacy:
		s, err = p.initialize(ctx)
	default:
		s, err = p.discover(ctx, p.spec.DiscoverTimeout)
		var rpcErr *RPCError
		switch {
		case err == nil:
		case errors.As(err, &rpcErr) && (rpcErr.Code == codeMissingRequiredClientCapability || rpcErr.Code == CodeUnsupportedProtocolVersion):
			err = fmt.Errorf("%w (a 2026-07-28 error: the server is modern but will not speak %s with mcpform; no fallback to initialize)", err, ModernVersion)
		case errors.As(err, &rpcErr), errors.As(err, new(*legacyOnlyError)):
			s, err = p.initialize(ctx)
		case ctx.Err() != nil:
			// The probe's own time is up: no time left for a fallback.
		case errors.Is(err, context.DeadlineExceeded):
			s, err = p.initialize(ctx)
		case errors.Is(err, ErrServerClosed):
			if p.proc != nil {
				p.proc.Close()
			}
			if err = p.start(ctx); err == nil {
				s, err = p.initialize(ctx)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if err := p.list(ctx, s); err != nil {
		return nil, err
	}
	if p.remote != nil {
		s.Transport = p.remote.transport()
	}
	if p.spec.Calls != nil {
		s.Calls = p.callTools(ctx, s, p.spec.Calls(s))
	}
	return s, nil
}

// call sends one request, in the 2026-07-28 envelope when modern, and
// waits at most timeout for its result.
func (p *prober) call(ctx context.Context, timeout time.Duration, method string, params json.RawMessage) (json.RawMessage, error) {
	if p.modern {
		var err error
		params, err = envelope{ProtocolVersion: ModernVersion, ClientCapabilities: p.spec.ClientCapabilities, ClientInfo: ClientInfo()}.Apply(params)
		if err != nil {
			return nil, err
		}
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	raw, err := p.conn.Call(cctx, method, params)
	var rpcErr *RPCError
	if p.remote != nil && errors.As(err, &rpcErr) && rpcErr.Code == codeTransport {
		// Not the server's answer: no era fallback, and no JSON-RPC code.
		err = &TransportError{Msg: rpcErr.Message}
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("no answer to %s within %v: %w", method, timeout, context.DeadlineExceeded)
		}
		return nil, err
	}
	return raw, nil
}

// caller is call with the per-request timeout, for listWith.
func (p *prober) caller(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return p.call(ctx, p.spec.RequestTimeout, method, params)
}

func (p *prober) discover(ctx context.Context, timeout time.Duration) (*Surface, error) {
	p.stage = "server/discover"
	p.modern = true
	p.enter(PhaseHandshake)
	raw, err := p.call(ctx, timeout, "server/discover", nil)
	if err != nil {
		p.modern = false
		return nil, err
	}
	return SurfaceFromDiscover(raw)
}

func (p *prober) initialize(ctx context.Context) (*Surface, error) {
	p.stage = "initialize"
	p.modern = false
	params, err := InitializeParams(LatestLegacyVersion, p.spec.ClientCapabilities)
	if err != nil {
		return nil, fmt.Errorf("client capabilities: %w", err)
	}
	p.enter(PhaseHandshake)
	raw, err := p.call(ctx, p.spec.RequestTimeout, "initialize", params)
	if err != nil {
		return nil, err
	}
	s, err := SurfaceFromInitialize(raw)
	if err != nil {
		return nil, err
	}
	if err := p.conn.Notify("notifications/initialized", nil); err != nil {
		return nil, err
	}
	return s, nil
}

// common reads what both handshakes share: capabilities and instructions.
func (s *Surface) common(res map[string]json.RawMessage, what string) error {
	caps, ok := res["capabilities"]
	if !ok || !isObject(caps) {
		return fmt.Errorf("%s has no capabilities object", what)
	}
	s.Capabilities = caps
	if raw, ok := res["instructions"]; ok && string(raw) != "null" {
		var in string
		if err := json.Unmarshal(raw, &in); err != nil {
			return fmt.Errorf("%s: instructions must be a string", what)
		}
		s.Instructions = &in
	}
	return nil
}

func resultComplete(res map[string]json.RawMessage) error {
	raw, ok := res["resultType"]
	if !ok {
		return nil // "the client MUST treat the absent field as complete"
	}
	var rt string
	if json.Unmarshal(raw, &rt) != nil || rt != "complete" {
		return fmt.Errorf("resultType is %s, not \"complete\"", clip(raw))
	}
	return nil
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// list reads every kind the server declared.
func (p *prober) list(ctx context.Context, s *Surface) error {
	var caps map[string]json.RawMessage
	if err := json.Unmarshal(s.Capabilities, &caps); err != nil {
		return err
	}
	p.enter(PhaseListing)
	out := []*[]json.RawMessage{&s.Tools, &s.Prompts, &s.Resources, &s.ResourceTemplates}
	for i, k := range kinds {
		*out[i] = []json.RawMessage{}
		if c, ok := caps[k.cap]; !ok || string(c) == "null" {
			continue
		}
		p.stage = k.method
		for attempt := 0; ; attempt++ {
			before := p.changed[k.changed].Load()
			items, err := listWith(ctx, p.caller, k)
			if err != nil {
				return err
			}
			if p.changed[k.changed].Load() == before {
				if i == 0 && p.spec.URL != "" {
					items = p.withoutBadHeaders(items)
				}
				*out[i] = items
				break
			}
			if attempt == maxRelists {
				return fmt.Errorf("the %s list changed while it was being listed, %d times in a row (notifications/%s/list_changed)", k.noun, maxRelists+1, k.cap)
			}
		}
	}
	return nil
}

// withoutBadHeaders is WithoutBadParamHeaders telling OnReject.
func (p *prober) withoutBadHeaders(tools []json.RawMessage) []json.RawMessage {
	return WithoutBadParamHeaders(tools, p.spec.OnReject)
}

// WithoutBadParamHeaders leaves out of a remote server's tools those
// whose x-mcp-header annotations are invalid, as the HTTP transport says
// a client must, and tells reject (when set) of each. The probe and run's
// checks of the live surface both do, so that run sees what plan locked.
func WithoutBadParamHeaders(tools []json.RawMessage, reject func(tool string, why error)) []json.RawMessage {
	kept := tools[:0:0]
	for _, t := range tools {
		if _, err := ParamHeaders(jsonscan.Find(t, "inputSchema")); err != nil {
			if reject != nil {
				name, _ := jsonString(jsonscan.Find(t, "name"))
				reject(name, err)
			}
			continue
		}
		kept = append(kept, t)
	}
	return kept
}

func nextCursor(res map[string]json.RawMessage) (string, error) {
	raw, ok := res["nextCursor"]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var c string
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", fmt.Errorf("nextCursor must be a string, not %s", clip(raw))
	}
	return c, nil
}

// timeoutError is a probe that ran out of its timeout.
type timeoutError struct {
	timeout time.Duration
	err     error
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("no answer within the probe timeout of %v (raise it with timeout = \"…\" in the server's block of mcp.hcl)", e.timeout)
}

func (e *timeoutError) Unwrap() error { return e.err }
