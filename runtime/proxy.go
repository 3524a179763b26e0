package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/jsonscan"
	"github.com/mcpform/mcpform/internal/mutation"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/pins"
	"github.com/mcpform/mcpform/runtime/audit"
	"github.com/mcpform/mcpform/runtime/enforce"
	"github.com/mcpform/mcpform/runtime/internal/pipe"
	"github.com/mcpform/mcpform/runtime/internal/upstream"
)

// Options configure one `mcpform run`: one server, one client.
type Options struct {
	// Name is the server's name in the lock; Entry its verified entry
	// (from lock.Load, which refuses a lock that fails verification).
	Name  string
	Entry *lock.Entry

	// Stdin and Stdout are the client's side; Stderr gets diagnostics and
	// the server's stderr, escaped. When Stdin is a non-blocking *os.File
	// (a pipe from Pollable), Run leaves a past read deadline on it when it
	// returns: that is how it stops reading the client.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	// Audit is the hash-chained audit log. Required: a run that cannot
	// record what it lets through does not start.
	Audit *audit.Log

	// Session names the client session (default SessionID()).
	Session string

	// Prepare, when set, may rewrite the server's command before it starts
	// (the sandbox does); cleanup runs after the server was shut down. A
	// server whose lock entry has a sandbox policy does not start without
	// it: failing closed beats running it unconfined.
	Prepare func(*exec.Cmd) (cleanup func(), err error)

	// Middlewares run after enforce and before the terminal handler (the
	// chain's order is in chain.go): the seam for the taint gate and any
	// other per-request policy that must see every request that will
	// reach the server, and only those.
	Middlewares []Middleware

	// LookupEnv supplies the values of the entry's envPassthrough names
	// (default os.LookupEnv); Dir is the server's working directory.
	LookupEnv func(string) (string, bool)
	Dir       string

	// OAuth gives the access tokens of a remote server locked with
	// OAuth (mcpform's own, from its login: never the client's).
	OAuth mcp.OAuthHandler

	// PinCache spares re-hashing pinned files that have not changed since
	// the last start (package pins); nil hashes them on every start.
	PinCache *pins.Cache

	// Refuse, when set, is why the caller found the server's pinned code
	// unfit to start before Run (an npm tree whose cache entry does not
	// match its manifest, or cannot be installed): nothing is started, and
	// the client gets the reason for each request, as for a changed pin,
	// with a start-failed record in the audit log.
	Refuse error

	// RequestTimeout bounds each forwarded request (default 10 minutes:
	// tools may be slow, but a stalled server must not hold a client's
	// request forever). StartTimeout bounds the start-up handshake and
	// listing, and each re-verification (default the entry's mcpform
	// timeout, else 30s). WriteTimeout is how long a message may wait for
	// a server that does not read its input (default 30s). DrainTimeout is
	// how long requests in flight may finish after the client closed its
	// input (default 5s).
	RequestTimeout time.Duration
	StartTimeout   time.Duration
	WriteTimeout   time.Duration
	DrainTimeout   time.Duration
	ShutdownGrace  time.Duration

	// MaxLineSize caps one message either way (default mcp.DefaultMaxLineSize);
	// MaxInFlight caps the client's concurrent requests (default 256).
	MaxLineSize int
	MaxInFlight int

	// relayToken makes the requestState tokens of relay.go (default:
	// random); tests name them.
	relayToken func() string

	// Spin is how long a reader that found its pipe empty polls the run's
	// pipes before it parks (default DefaultSpin, at most MaxSpin;
	// negative: never). See spinner: it spares a wake-up per message while
	// messages flow, for at most Spin of CPU per message.
	Spin time.Duration
}

// DefaultSpin is Options.Spin's default: a little longer than a fast
// server takes to answer, so that its answer is read without a wake-up.
const DefaultSpin = 100 * time.Microsecond

// MaxSpin is the longest Options.Spin: a longer spin would only burn CPU
// while a Close or shutdown waits for the reader to come back.
const MaxSpin = pipe.MaxSpin

// ServerExitError is a server that exited (or closed its output) while the
// client was still connected. Its message carries the server's stderr tail,
// escaped.
type ServerExitError struct {
	Server string
	Status error
	Reason error  // why the connection ended, when it was not just the exit
	Stderr string // unescaped
}

func (e *ServerExitError) Error() string {
	var b strings.Builder
	status := "exited with status 0"
	if e.Status != nil {
		status = "ended with " + e.Status.Error()
	}
	fmt.Fprintf(&b, "server %q %s while the client was connected", escape.String(e.Server), status)
	if e.Reason != nil {
		fmt.Fprintf(&b, " (%v)", e.Reason)
	}
	if tail := strings.TrimSpace(e.Stderr); tail != "" {
		lines := strings.Split(tail, "\n")
		if len(lines) > 20 {
			lines = lines[len(lines)-20:]
		}
		b.WriteString("\nserver stderr (last lines):")
		for _, l := range lines {
			b.WriteString("\n  | ")
			b.WriteString(escape.String(l))
		}
	}
	return b.String()
}

type proxy struct {
	opts     Options
	name     string
	entry    *lock.Entry
	modernUp bool
	upEnv    []byte // the envelope members a 2026-07-28 server gets in _meta
	handler  Handler
	audit    *audit.Log
	session  string

	in  io.Reader // the client's input
	out *pipe.Writer

	up   serverConn
	proc *mcp.Process

	// view is the entry as the client may see it (ondrift.go): expose
	// applied. served and checker are built from it; verification
	// compares the whole entry with the live surface.
	view   *lock.Entry
	served *served
	// blockedLists replaces served's lists once items drifted under
	// on_drift = "block-changed" (ondrift.go); blockMu orders its writers.
	blockedLists atomic.Pointer[[4][2][]byte]
	blockMu      sync.Mutex
	// tasks are the tasks this run's calls created (chain_tasks.go).
	tasks taskTable
	// relays carry a legacy server's requests to a 2026-07-28 client
	// (relay.go); clientModern is set once the client spoke 2026-07-28.
	relays       relays
	clientModern atomic.Bool
	// listeners are the client's subscriptions/listen streams (listen.go).
	listeners listeners
	// clientLevel is a legacy client's last logging/setLevel, for a
	// 2026-07-28 server's envelope; upLevel is the last level mcpform set
	// on a legacy server for a 2026-07-28 client (levelFor).
	clientLevel, upLevel atomic.Pointer[[]byte]
	// checker holds the enforce link's compiled schemas; serverside.go
	// asks it what the lock allows of the server's notifications.
	checker *enforce.Checker

	// state is what verification found (gate, quarantine, start failure);
	// startDone is closed once the start-up check knows whether the
	// server started. ending is set before the run stops the server, whose
	// end is then no start failure.
	state     serverState
	startDone chan struct{}
	ending    atomic.Bool
	lastInfo  atomic.Pointer[string] // the informational drift last reported
	lastDef   atomic.Pointer[string] // the definitional drift insecure-warn last reported
	verifyMu  sync.Mutex
	verifying bool
	dirty     [4]bool
	live      *mcp.Surface

	mu         sync.Mutex
	inflight   map[mcp.ID]*upstream.Call
	clientCaps json.RawMessage // what the client declared it supports
	srvNext    int64
	srvReqs    map[mcp.ID]*serverRequest // by the id the client sees
	srvByUp    map[mcp.ID]mcp.ID         // upstream id → client-facing id
	srvTokens  map[string]bool           // progress tokens of forwarded server requests
	srvSem     chan struct{}

	wg      sync.WaitGroup
	closing bool // under mu: no request starts once the run is ending
	stderr  stderrLimit
}

// Run serves the client on opts.Stdin/Stdout until it closes its input (nil),
// the server exits (a *ServerExitError) or ctx ends.
func Run(ctx context.Context, opts Options) error {
	p, err := newProxy(opts)
	if err != nil {
		return err
	}
	return p.run(ctx)
}

func newProxy(opts Options) (*proxy, error) {
	e := opts.Entry
	switch {
	case e == nil:
		return nil, errors.New("no lock entry to serve")
	case opts.Audit == nil:
		return nil, errors.New("no audit log: mcpform run records every request before it lets it through")
	case len(e.Command) == 0 && e.Remote == nil:
		return nil, fmt.Errorf("server %q has no command (nor remote) in the lock", escape.String(opts.Name))
	case e.Policy != nil && e.Policy.Sandbox != nil && opts.Prepare == nil:
		return nil, fmt.Errorf("server %q has a sandbox policy, and this mcpform cannot apply it: refusing to start it unconfined", escape.String(opts.Name))
	}
	if opts.Session == "" {
		opts.Session = SessionID()
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 10 * time.Minute
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
		if e.Mcpform != nil && e.Mcpform.Timeout != "" {
			if d, err := time.ParseDuration(e.Mcpform.Timeout); err == nil && d > 0 {
				opts.StartTimeout = d
			}
		}
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 30 * time.Second
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 5 * time.Second
	}
	if opts.MaxLineSize <= 0 {
		opts.MaxLineSize = mcp.DefaultMaxLineSize
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 256
	}
	if opts.Spin == 0 {
		opts.Spin = DefaultSpin
	}
	opts.Spin = min(opts.Spin, MaxSpin)
	p := &proxy{
		opts:     opts,
		name:     opts.Name,
		entry:    e,
		modernUp: e.Modern(),
		audit:    opts.Audit,
		session:  opts.Session,

		inflight:  map[mcp.ID]*upstream.Call{},
		srvReqs:   map[mcp.ID]*serverRequest{},
		srvByUp:   map[mcp.ID]mcp.ID{},
		srvTokens: map[string]bool{},
		srvSem:    make(chan struct{}, 16),
		startDone: make(chan struct{}),
	}
	p.out = pipe.NewWriter(pipe.Raw(opts.Stdout), 4<<20, false, 0, p.clientWriteFailed)
	p.out.Before = p.flushAudit
	if p.modernUp {
		b := []byte(`"io.modelcontextprotocol/protocolVersion":`)
		b = mcp.AppendQuoted(b, mcp.ModernVersion)
		b = append(b, `,"io.modelcontextprotocol/clientCapabilities":`...)
		b = append(b, p.lockClientCaps()...)
		b = append(b, `,"io.modelcontextprotocol/clientInfo":`...)
		p.upEnv = append(b, mcp.ClientInfo()...)
	}
	p.view = exposedEntry(e)
	p.served = newServed(p.view)
	p.checker = enforce.New(p.view)
	p.handler = p.chain(opts.Middlewares)
	return p, nil
}

// lockClientCaps returns the client capabilities the entry was locked with,
// compact ({} when none).
func (p *proxy) lockClientCaps() []byte {
	if p.entry.Mcpform == nil || len(p.entry.Mcpform.ClientCapabilities) == 0 {
		return []byte("{}")
	}
	return compact(p.entry.Mcpform.ClientCapabilities)
}

// connect sets up the connection to the server, which reads toServer.
func (p *proxy) connect(toServer io.Writer) {
	p.up = upstream.New(toServer, p.opts.WriteTimeout, upstream.Hooks{
		Before: p.flushAudit,
		Out:    p.out,
		// Under load, the outcomes of a burst of answers are appended by
		// the server's reader, beside the client's reader, which appends
		// the requests: the two share the log's work instead of one
		// doing it all.
		Idle:           func() { _ = p.audit.FlushBacklog(outcomeBurst) },
		OnNotification: p.upstreamNotification,
		OnRequest:      p.upstreamRequest,
		Warn:           p.warnf,
	})
}

// StartFailedError is a run whose server did not start (Unwrap gives the
// *mcp.StartError). The client got the whole account for each request and
// stderr got it as it happened, so its message is one line.
type StartFailedError struct {
	Err *mcp.StartError
}

func (e *StartFailedError) Error() string {
	return fmt.Sprintf("server %q did not start: %s (the details are above)", escape.String(e.Err.Server), e.Err.Reason())
}

func (e *StartFailedError) Unwrap() error { return e.Err }

// outcomeBurst is how many waiting records make the server's reader append
// them itself rather than leave them to the next request's append.
const outcomeBurst = 16

// auditFailure is an audit log that cannot be written: the run stops, since
// nothing may reach the server or the client unrecorded.
type auditFailure struct{ err error }

func (e *auditFailure) Error() string {
	return fmt.Sprintf("%v: mcpform run stops, as nothing may pass unrecorded", e.err)
}

func (e *auditFailure) Unwrap() error { return e.err }

// flushAudit writes the records that must precede what is about to leave;
// both streams call it before each write.
func (p *proxy) flushAudit() error {
	if err := p.audit.Commit(); err != nil {
		return &auditFailure{err}
	}
	return nil
}

// clientWriteFailed ends the run when the client's stream failed for want
// of an audit log (a client that is gone just stops getting answers).
func (p *proxy) clientWriteFailed(err error) {
	var af *auditFailure
	if errors.As(err, &af) && p.up != nil {
		p.up.Fail(af)
	}
}

func (p *proxy) record(r *audit.Record) error {
	r.Session = p.session
	r.Server = p.name
	return p.audit.Write(r)
}

func (p *proxy) run(ctx context.Context) error {
	if err := p.record(&audit.Record{Event: "start", Detail: "surface " + p.entry.Digests.Surface}); err != nil {
		return err
	}
	stderr := &lineEscaper{p: p}
	spec := mcp.ServerSpec{
		Name:          p.name,
		Command:       p.entry.Command,
		Env:           p.entry.EnvPassthrough,
		LookupEnv:     p.opts.LookupEnv,
		Dir:           p.opts.Dir,
		Stderr:        stderr,
		Prepare:       p.opts.Prepare,
		ShutdownGrace: p.opts.ShutdownGrace,
		MaxLineSize:   p.opts.MaxLineSize,
	}
	start := mcp.Start
	if r := p.entry.Remote; r != nil {
		// The same pipes, to a server over Streamable HTTP
		// (docs/ARCHITECTURE.md, section 6).
		spec.URL, spec.Headers = r.URL, r.Headers
		// Only the locked transport: a server locked over Streamable
		// HTTP that starts refusing it is not spoken to over HTTP+SSE
		// unreviewed, nor the other way round.
		spec.Transport = r.Transport
		if r.Auth != nil {
			spec.BearerEnv = r.Auth.BearerEnv
		}
		spec.OAuth = p.opts.OAuth
		spec.ParamHeaders = paramHeaders(p.entry)
		start = mcp.StartRemote
	}
	if err := p.checkPins(); err != nil {
		return p.serveStartFailure(ctx, err)
	}
	proc, err := start(ctx, spec)
	if err != nil {
		var se *mcp.StartError
		if errors.As(err, &se) {
			return p.serveStartFailure(ctx, se)
		}
		return fmt.Errorf("starting server %q: %w", escape.String(p.name), err)
	}
	p.proc = proc
	p.connect(pipe.Raw(proc.Stdin))
	var fromServer io.Reader
	spin := p.opts.Spin
	if p.entry.Remote != nil {
		// The server's pipe is fed by a goroutine of this process: a
		// reader spinning on it would keep that goroutine off the one
		// processor mcpform run uses.
		spin = 0
	}
	p.in, fromServer = pipe.Readers(spin, p.opts.Stdin, proc.Stdout)
	p.up.Listen(fromServer, p.opts.MaxLineSize)
	if !mutation.Off("watchexit") {
		go p.watchExit(proc)
	}

	p.state.closeGate()
	go p.verifyStart(ctx)

	clientDone := make(chan error, 1)
	go func() { clientDone <- p.readClient() }()
	defer p.closeClient()

	var result error
	select {
	case err := <-clientDone:
		// The client closed its input: let requests in flight finish
		// (briefly), then end the server's process group.
		p.drain()
		if err != nil {
			result = err
		}
		p.ending.Store(true)
		p.shutdown()
		stderr.flush()
	case <-p.up.Done():
		// The server is gone: every waiting request has been answered
		// with an error by now (upstream.fail).
		var af *auditFailure
		if errors.As(p.up.Err(), &af) {
			p.drain()
			p.shutdown()
			stderr.flush()
			return af
		}
		<-p.startDone
		if p.state.startErr.Load() != nil {
			// It did not start: the client keeps getting the reason
			// for each request until it leaves.
			select {
			case result = <-clientDone:
			case <-ctx.Done():
				result = ctx.Err()
			}
			p.drain()
			p.shutdown()
			stderr.flush()
			break
		}
		p.drain()
		status := proc.Close()
		stderr.flush()
		exitErr := &ServerExitError{Server: p.name, Status: status, Stderr: proc.StderrTail()}
		if err := p.up.Err(); err != nil && err != mcp.ErrServerClosed {
			exitErr.Reason = err
		}
		_ = p.record(&audit.Record{Event: "exit", Outcome: "server exited", Detail: fmt.Sprint(status)})
		_ = p.audit.Flush()
		return exitErr
	case <-ctx.Done():
		p.ending.Store(true)
		p.shutdown()
		p.drain() // quick: the server is gone, so every call is answered
		stderr.flush()
		result = ctx.Err()
	}
	_ = p.record(&audit.Record{Event: "exit", Outcome: "client closed"})
	_ = p.audit.Flush()
	if se := p.state.startErr.Load(); se != nil && result == nil {
		result = &StartFailedError{Err: se}
	}
	return result
}

// checkPins refuses to start a server the caller refused (Options.Refuse),
// and a command server whose pinned executable or script is not the file
// the lock pins (changed, missing, or another one a
// symlink or PATH now leads to): nothing of it is run. Checked just before
// the start, from the lock's directory, as mcp.Start resolves the command.
func (p *proxy) checkPins() *mcp.StartError {
	e := p.entry
	if p.opts.Refuse != nil && !mutation.Off("pins") {
		return &mcp.StartError{Server: p.name, Stage: "start", Err: p.opts.Refuse, Command: e.Command, Refused: true}
	}
	if e.Remote != nil || e.Mcpform == nil || e.Mcpform.Pins == nil || mutation.Off("pins") {
		return nil
	}
	if err := pins.Check(e.Mcpform.Pins, e.Command, p.opts.Dir, p.opts.PinCache); err != nil {
		return &mcp.StartError{Server: p.name, Stage: "start", Err: err, Command: e.Command, Refused: true}
	}
	return nil
}

// serveStartFailure is the run of a server that could not be run at all:
// the client gets the reason for each request until it leaves.
func (p *proxy) serveStartFailure(ctx context.Context, se *mcp.StartError) error {
	p.connect(io.Discard)
	p.in = pipe.Raw(p.opts.Stdin)
	p.reportStartFailure(se)
	close(p.startDone)
	clientDone := make(chan error, 1)
	go func() { clientDone <- p.readClient() }()
	defer p.closeClient()
	var result error
	select {
	case result = <-clientDone:
	case <-ctx.Done():
		result = ctx.Err()
	}
	p.drain()
	_ = p.record(&audit.Record{Event: "exit", Outcome: "client closed"})
	_ = p.audit.Flush()
	if result == nil {
		result = &StartFailedError{Err: se}
	}
	return result
}

// watchExit watches the server process itself, not only its output: a
// descendant it left behind could hold its stdout open, and its calls in
// flight would wait for that descendant. mcp.Process kills what the server
// left behind once it exits, which ends the output; should the output still
// be open after exitGrace (held by a process outside the server's tree, or
// by a descendant where there is no child subreaper), the connection ends
// anyway, and every call in flight is answered.
func (p *proxy) watchExit(proc *mcp.Process) {
	select {
	case <-proc.Exited():
	case <-p.up.Done():
		return
	}
	t := time.NewTimer(exitGrace)
	defer t.Stop()
	select {
	case <-p.up.Done():
	case <-t.C:
		p.up.Fail(fmt.Errorf("%w: it exited, and its output stayed open", mcp.ErrServerClosed))
	}
}

// exitGrace is how long the server's output may stay open after it exited.
const exitGrace = time.Second

// shutdown ends the server. What was handed to its stream goes first (at
// most exitGrace): an answer to one of its requests, written just before
// the client left, must not be cut off by closing its input.
func (p *proxy) shutdown() {
	p.up.Flushed(exitGrace)
	p.proc.Close()
}

// drain stops new requests and waits for those in flight, at most
// DrainTimeout; then it cancels them (and waits as long again), so that
// none outlives the run and its audit log. Answers already written to the
// client's stream are left to closeClient.
func (p *proxy) drain() {
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
	p.closeListeners() // streams end with the run, gracefully
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(p.opts.DrainTimeout):
	}
	// Cancelled outside mu: a cancelled request is answered (finish)
	// on this goroutine, and finish takes mu.
	p.mu.Lock()
	inflight := make([]*upstream.Call, 0, len(p.inflight))
	for _, ctx := range p.inflight {
		inflight = append(inflight, ctx)
	}
	p.mu.Unlock()
	for _, ctx := range inflight {
		ctx.Cancel() // a cancelled request gets no answer (finish)
	}
	select {
	case <-done:
	case <-time.After(p.opts.DrainTimeout):
		p.mu.Lock()
		n := len(p.inflight)
		p.mu.Unlock()
		p.logf("%d requests did not end in time", n)
	}
}

// closeClient ends the run's side of the client: what was handed to the
// client's stream is written (at most DrainTimeout: a client that reads
// slowly still gets the whole of a large last answer before the process
// exits), then nothing more is, and the client's reader stops.
func (p *proxy) closeClient() {
	if !p.out.Flushed(p.opts.DrainTimeout) {
		p.logf("the client did not read the last answers within %v", p.opts.DrainTimeout)
	}
	p.out.Abort(errors.New("the run has ended"))
	if d, ok := p.in.(interface{ SetReadDeadline(time.Time) error }); ok {
		_ = d.SetReadDeadline(time.Now())
	}
}

// readClient reads the client's messages until its input ends.
//
// It holds the server's stream while it handles a burst of messages that
// are already read, so that 64 requests cost one write upstream, and
// releases it before it would wait for more.
func (p *proxy) readClient() error {
	rd := mcp.NewReader(p.in, p.opts.MaxLineSize)
	defer p.up.Release()
	for {
		if !rd.Buffered() {
			_ = p.up.Release()
		}
		line, err := rd.ReadLine()
		p.up.Hold()
		if err != nil {
			var tooLong *mcp.LineTooLongError
			if errors.As(err, &tooLong) {
				p.writeError("", mcp.CodeInvalidRequest, "message refused: "+err.Error(), nil)
				continue
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading from the client: %w", err)
		}
		p.clientLine(line)
	}
}

// newRequest reads what the chain needs from a request: its era (the
// 2026-07-28 envelope, whose version must be the one mcpform speaks), the
// client's capabilities, and the item it is about.
func (p *proxy) newRequest(msg *mcp.Message) (*Request, *mcp.RPCError) {
	req := &Request{ID: msg.ID, Call: enforce.Call{Method: msg.Method, Params: msg.Params}, Session: p.session, Server: p.name, client: p}
	req.meta = find(msg.Params, "_meta")
	if meta := req.meta; meta != nil {
		if v := find(meta, mcp.MetaProtocolVersion); v != nil {
			if version, _ := stringValue(v); version != mcp.ModernVersion {
				data := []byte(`{"supported":["` + mcp.ModernVersion + `"],"requested":`)
				data = append(append(data, oneLine(v)...), '}')
				return nil, &mcp.RPCError{Code: mcp.CodeUnsupportedProtocolVersion, Message: "unsupported protocol version", Data: data}
			}
			req.Modern = true
			if !p.clientModern.Load() {
				p.clientModern.Store(true)
			}
			if lv := find(meta, mcp.MetaLogLevel); lv != nil {
				if !mcp.IsLogLevel(lv) {
					return nil, &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: "_meta " + mcp.MetaLogLevel + " must be one of the logging levels (debug … emergency)"}
				}
				req.logLevel = lv
			}
			if caps := find(meta, mcp.MetaClientCapabilities); caps != nil && caps[0] == '{' {
				p.mu.Lock()
				if !bytes.Equal(p.clientCaps, caps) {
					p.clientCaps = bytes.Clone(caps)
				}
				p.mu.Unlock()
			}
		}
	}
	if !p.modernUp && relayable[msg.Method] {
		if rs, ok := stringValue(find(msg.Params, "requestState")); ok && strings.HasPrefix(rs, relayPrefix) {
			req.relayToken = rs
		}
	}
	switch msg.Method {
	case "tools/call", "prompts/get":
		req.Kind = lock.Tools
		if msg.Method == "prompts/get" {
			req.Kind = lock.Prompts
		}
		req.Item, req.HasItem = stringValue(find(msg.Params, "name"))
		req.Arguments = find(msg.Params, "arguments")
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		req.Kind = lock.Resources
		req.Item, req.HasItem = stringValue(find(msg.Params, "uri"))
	case "initialize":
		if caps := find(msg.Params, "capabilities"); caps != nil && caps[0] == '{' {
			p.mu.Lock()
			p.clientCaps = bytes.Clone(caps)
			p.mu.Unlock()
		}
	}
	return req, nil
}

// clientLine handles one line from the client, on the reading goroutine,
// which also runs a request's chain (clientRequest): what must wait there
// takes a goroutine of its own.
func (p *proxy) clientLine(line []byte) {
	msg, err := mcp.DecodeMessage(line)
	if err != nil {
		var de *mcp.DecodeError
		if errors.As(err, &de) {
			p.writeError(de.ID, int64(de.Code), de.Error(), nil)
		} else {
			p.writeError("", mcp.CodeParseError, err.Error(), nil)
		}
		return
	}
	switch {
	case msg.IsRequest():
		p.clientRequest(msg)
	case msg.IsNotification():
		p.clientNotification(msg)
	default:
		p.clientResponse(msg)
	}
}

// clientRequest runs the chain on the reading goroutine: what the lock
// answers is answered here, what goes to the server is sent from here, and
// its answer is written by the goroutine that reads the server.
func (p *proxy) clientRequest(msg *mcp.Message) {
	req, rpcErr := p.newRequest(msg)
	if rpcErr != nil {
		p.writeError(msg.ID, rpcErr.Code, rpcErr.Message, rpcErr.Data)
		return
	}
	if msg.Method == "ping" {
		p.respond(req, &Response{Result: []byte("{}")}, false)
		return
	}
	ctx := &upstream.Call{}
	p.mu.Lock()
	var refusal string
	var code int64 = mcp.CodeInternalError
	switch _, dup := p.inflight[msg.ID]; {
	case p.closing:
		refusal = "mcpform run is ending"
	case dup:
		code, refusal = mcp.CodeInvalidRequest, "request id "+escape.String(msg.ID.String())+" is already in use by a request in flight"
	case len(p.inflight) >= p.opts.MaxInFlight:
		refusal = fmt.Sprintf("too many requests in flight (at most %d)", p.opts.MaxInFlight)
	default:
		p.inflight[msg.ID] = ctx
		p.wg.Add(1) // under mu, so never after drain's Wait began
	}
	p.mu.Unlock()
	if refusal != "" {
		p.writeError(msg.ID, code, refusal, nil)
		return
	}
	ctx.On.Store(upstream.OnClientReader)
	p.handler(ctx, req, func(resp *Response, err error) { p.finish(ctx, req, resp, err) })
	ctx.On.Store(0)
}

// finish ends a request: it is no longer in flight, and the client gets its
// answer, unless it cancelled the request ("the receiver of a cancellation
// SHOULD NOT send a response for the cancelled request").
func (p *proxy) finish(ctx *upstream.Call, req *Request, resp *Response, err error) {
	defer p.wg.Done()
	p.mu.Lock()
	delete(p.inflight, req.ID)
	p.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		resp = rpcError(mcp.CodeInternalError, err.Error())
	}
	p.respond(req, resp, ctx.On.Load() == upstream.OnServerReader)
}

// respond writes resp to the client, shaped for the request's era; queued
// when the caller is the server's reader (the client stream's batcher).
func (p *proxy) respond(req *Request, resp *Response, queued bool) {
	b := pipe.GetLine()
	defer pipe.PutLine(b)
	if resp.Error != nil {
		*b = mcp.AppendError(*b, req.ID, resp.Error.Code, resp.Error.Message, oneLineOrNil(resp.Error.Data))
	} else {
		var err *mcp.RPCError
		*b, err = p.shapeResponse(*b, req, resp)
		if err != nil {
			(*b) = (*b)[:0]
			*b = mcp.AppendError(*b, req.ID, err.Code, err.Message, nil)
		}
	}
	if queued {
		_ = p.out.QueueLine(*b)
		return
	}
	p.write(*b)
}

func oneLineOrNil(b []byte) []byte {
	if b == nil {
		return nil
	}
	return oneLine(b)
}

// write sends complete lines to the client. A client that stopped reading
// holds up whoever writes to it, the server's reader too, once 4 MiB wait
// (back-pressure: the server's output then backs up).
func (p *proxy) write(b []byte) {
	_ = p.out.WriteLine(b)
}

func (p *proxy) writeError(id mcp.ID, code int64, msg string, data []byte) {
	b := pipe.GetLine()
	*b = mcp.AppendError(*b, id, code, msg, data)
	p.write(*b)
	pipe.PutLine(b)
}

func (p *proxy) clientNotification(msg *mcp.Message) {
	switch msg.Method {
	case "notifications/initialized":
		// The proxy did its own handshake with the server.
	case "notifications/cancelled":
		id, ok := mcp.ParseID(find(msg.Params, "requestId"))
		if !ok {
			return
		}
		p.mu.Lock()
		ctx := p.inflight[id]
		p.mu.Unlock()
		if ctx != nil {
			ctx.Cancel() // the upstream handler tells the server, under its id
		}
	case "notifications/progress":
		// Progress on a server→client request the proxy passed on.
		token := find(msg.Params, "progressToken")
		p.mu.Lock()
		ok := token != nil && p.srvTokens[string(token)]
		p.mu.Unlock()
		if ok {
			_ = p.up.Notify(msg.Method, p.wrapUp(msg.Params))
		}
	case "notifications/roots/list_changed":
		if find(p.lockClientCaps(), "roots") != nil {
			_ = p.up.Notify(msg.Method, p.wrapUp(msg.Params))
		}
	}
}

// wrapUp returns params as the server must get them: for a 2026-07-28
// server with the lock's envelope in _meta, for a legacy one without any
// envelope keys the client sent. Everything else is copied byte for byte.
func (p *proxy) wrapUp(params []byte) []byte { return p.wrapUpLevel(params, nil) }

// wrapUpLevel is wrapUp with a log level (a JSON string, nil: none) for a
// 2026-07-28 server's envelope: the level that asks it for log messages
// about this request.
func (p *proxy) wrapUpLevel(params, level []byte) []byte {
	if params != nil {
		params = oneLine(params)
	}
	if p.modernUp {
		if params == nil {
			params = []byte("{}")
		}
		var lv []byte
		if level != nil {
			lv = append([]byte(`"`+mcp.MetaLogLevel+`":`), level...)
		}
		return rewriteObject(nil, params, isMeta, metaWithout(params, p.upEnv, lv))
	}
	if params == nil {
		return nil
	}
	if !bytes.Contains(params, []byte("io.modelcontextprotocol")) && !bytes.Contains(params, []byte(`\u`)) {
		return params
	}
	return rewriteObject(nil, params, isMeta, metaWithout(params))
}

// paramHeaders are, by tool, the parameters the locked input schemas
// mark with x-mcp-header, which each call to a remote server mirrors
// into its headers. A tool whose annotations are invalid is never in a
// lock (the probe leaves it out).
func paramHeaders(e *lock.Entry) map[string][]mcp.ParamHeader {
	var out map[string][]mcp.ParamHeader
	for _, t := range e.List(lock.Tools) {
		hs, err := mcp.ParamHeaders(jsonscan.Find(t.JSON, "inputSchema"))
		if err != nil || len(hs) == 0 {
			continue
		}
		if out == nil {
			out = map[string][]mcp.ParamHeader{}
		}
		out[t.Key] = hs
	}
	return out
}
