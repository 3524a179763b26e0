package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/mutation"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/audit"
	"github.com/mcpform/mcpform/runtime/internal/upstream"
	"github.com/mcpform/mcpform/surface"
)

// setQuarantine records the drift, tells stderr, and refuses every later
// request.
func (p *proxy) setQuarantine(why string) {
	if mutation.Off("quarantine") {
		return
	}
	msg := fmt.Sprintf("mcpform quarantined server %q: %s. Run `mcpform plan` to review the change (and `mcpform apply` to accept it)", escape.String(p.name), why)
	if p.state.quarantined.CompareAndSwap(nil, &msg) {
		p.logf("%s", msg)
		p.listsChanged()
		if err := p.record(&audit.Record{Event: "quarantine", Detail: msg}); err != nil {
			p.logf("%v", err)
		}
	}
}

// call returns the Caller for the proxy's own requests upstream.
func (p *proxy) caller() mcp.Caller {
	return p.up.Caller(p.wrapUp, p.opts.StartTimeout)
}

// verifyStart does the handshake in the locked era, lists the live surface
// and compares it with the lock. Requests wait for it (the gate).
// startDone is closed once it knows whether the server started.
func (p *proxy) verifyStart(ctx context.Context) {
	defer close(p.startDone)
	p.verifyHandshake(ctx)
	// A list_changed that came during the start-up listing is checked
	// before the gate opens.
	p.verifyMu.Lock()
	defer p.verifyMu.Unlock()
	if p.dirty != [4]bool{} && p.live != nil && !p.state.isQuarantined() && !p.verifying {
		p.verifying = true
		go p.relistLoop()
		return
	}
	if !p.verifying {
		p.state.openGate()
	}
}

func (p *proxy) verifyHandshake(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, p.opts.StartTimeout)
	defer cancel()
	call := p.caller()
	var s *mcp.Surface
	var err error
	if p.modernUp {
		var res json.RawMessage
		res, err = call(ctx, "server/discover", nil)
		if err == nil {
			s, err = mcp.SurfaceFromDiscover(res)
		}
	} else {
		params, perr := mcp.InitializeParams(p.entry.ProtocolVersion, p.lockClientCaps())
		if perr != nil {
			err = perr
		} else {
			var res json.RawMessage
			res, err = call(ctx, "initialize", params)
			if err == nil {
				s, err = mcp.SurfaceFromInitialize(res)
			}
			if err == nil {
				err = p.up.Notify("notifications/initialized", nil)
			}
		}
	}
	stage := "initialize"
	if p.modernUp {
		stage = "server/discover"
	}
	if err != nil {
		// A server that exits or stays silent before it answers did not
		// start: that is not drift, and not a quarantine.
		switch {
		case p.auditFailed() || ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
			return // run reports it
		case p.serverGone():
			p.failStart(stage, true)
			return
		case isTimeout(err):
			p.failStart(stage, false)
			return
		case p.entry.Remote != nil && mcp.AsTransportError(err) != nil:
			// Not the server's answer (it is down, or refused mcpform's
			// credentials): nothing to compare with the lock.
			p.reportStartFailure(&mcp.StartError{Server: p.name, Stage: stage, Err: mcp.AsTransportError(err), Unreachable: true})
			return
		}
		era := "the initialize handshake (legacy)"
		if p.modernUp {
			era = "server/discover (" + mcp.ModernVersion + ")"
		}
		p.setQuarantine(fmt.Sprintf("it no longer answers %s as it was locked: %v", era, err))
		return
	}
	err = mcp.ListSurface(ctx, call, s, nil)
	p.asProbed(s)
	if err != nil {
		switch {
		case p.auditFailed():
		case p.serverGone():
			// It answered the handshake and exited while being listed:
			// still during start-up, and still not drift.
			p.failStart("its start-up listing", true)
		default:
			p.setQuarantine(fmt.Sprintf("its surface could not be listed to check it against mcp.lock: %v", err))
		}
		return
	}
	p.verifyMu.Lock()
	p.live = s
	p.verifyMu.Unlock()
	p.compare(s, "at start")
	if p.modernUp {
		p.listenForChanges()
	}
}

// listenForChanges opens mcpform's own subscriptions/listen stream to a
// 2026-07-28 server, for the list kinds whose locked capabilities announce
// list changes: such a server tells a session of its era of a changed list
// only on a stream that asked for it, and without one its list changes
// would never be re-verified.
func (p *proxy) listenForChanges() {
	var flags []string
	for i, kind := range []string{"tools", "prompts", "resources"} {
		if string(find(find(p.entry.Capabilities, kind), "listChanged")) == "true" {
			flags = append(flags, `"`+[]string{"toolsListChanged", "promptsListChanged", "resourcesListChanged"}[i]+`":true`)
		}
	}
	if len(flags) == 0 {
		return
	}
	params := []byte(`{"notifications":{` + strings.Join(flags, ",") + `}}`)
	p.up.Request(context.Background(), "subscriptions/listen", p.wrapUp(params), "", false, 0, func(m *mcp.Message, err error) {
		if err == nil && m.Error != nil {
			err = m.Error
		}
		if err != nil && !p.serverGone() && !p.ending.Load() {
			p.warnf("the server did not open a subscriptions/listen stream for mcpform (%v): its list changes are not re-verified while it runs", err)
		}
	})
}

// failStart records that the server did not start: every request waiting
// at the gate, and every later one, gets CodeStartFailed with what went
// wrong (its stderr tail, the environment names it got, the hint), which
// mcpform's stderr and the audit log get too. A server that never answered
// is stopped; the run goes on answering the client until it leaves.
// asProbed leaves out of a live surface what plan's probe leaves out of
// the lock (a remote server's tools with invalid x-mcp-header), so that
// run compares with the lock what plan locked: a tool left out there is
// not drift here, and is never served either.
func (p *proxy) asProbed(s *mcp.Surface) {
	if p.entry.Remote != nil {
		s.Tools = mcp.WithoutBadParamHeaders(s.Tools, nil)
	}
}

func (p *proxy) failStart(stage string, exited bool) {
	if p.ending.Load() {
		return // the run stopped it
	}
	// One account of each, whichever of the races the server lost (the
	// request's timer or the context's; a write that failed or the end
	// of its output), so the caller's own error is not used.
	var err error
	if exited {
		err = mcp.ErrServerClosed
	} else {
		err = &startTimeout{p.opts.StartTimeout}
	}
	se := p.proc.StartError(stage, exited, err)
	if p.ending.Load() {
		return
	}
	p.reportStartFailure(se)
	if !exited {
		p.proc.Close()
	}
}

// reportStartFailure tells stderr and the audit log, and answers every
// request from now on with the reason.
func (p *proxy) reportStartFailure(se *mcp.StartError) {
	if !p.state.startErr.CompareAndSwap(nil, se) {
		return
	}
	for _, l := range strings.Split(startMessage(se), "\n") {
		p.logLine(l)
	}
	if err := p.record(&audit.Record{Event: "start-failed", Outcome: outcomeOf(se), Detail: startDetail(se)}); err != nil {
		p.logf("%v", err)
	}
	p.state.openGate()
}

// startMessage is what each request, and stderr, get of a start failure.
func startMessage(se *mcp.StartError) string { return "mcpform: " + se.Error() }

// outcomeOf is the start-failed record's outcome.
func outcomeOf(se *mcp.StartError) string {
	switch {
	case se.Unreachable:
		return "unreachable"
	case se.Stage == "start":
		return "not run"
	case se.Exited:
		return "exited"
	}
	return "no answer"
}

// startDetail is the audit log's account of a start failure: the reason
// and the environment names, not the server's stderr (which may hold
// anything it printed).
func startDetail(se *mcp.StartError) string {
	return strings.ReplaceAll(se.Summary(), "\n", "; ")
}

// startTimeout is a handshake that was not answered within StartTimeout.
type startTimeout struct{ d time.Duration }

func (e *startTimeout) Error() string {
	return fmt.Sprintf("no answer within the start timeout of %v (raise it with timeout = \"…\" in the server's block of mcp.hcl, then plan and apply)", e.d)
}

func (e *startTimeout) Unwrap() error { return context.DeadlineExceeded }

func isTimeout(err error) bool {
	var te *upstream.TimeoutError
	return errors.As(err, &te) || errors.Is(err, context.DeadlineExceeded)
}

func (p *proxy) auditFailed() bool {
	var af *auditFailure
	return p.serverGone() && errors.As(p.up.Err(), &af)
}

func (p *proxy) serverGone() bool {
	select {
	case <-p.up.Done():
		return true
	default:
		return false
	}
}

// listChanged schedules a re-listing of the kinds a list_changed names. It
// runs on the upstream reader and only closes the gate and starts (or
// extends) the work.
func (p *proxy) listChanged(kinds [4]bool) {
	p.state.closeGate()
	p.verifyMu.Lock()
	defer p.verifyMu.Unlock()
	for i, k := range kinds {
		p.dirty[i] = p.dirty[i] || k
	}
	if p.verifying {
		return
	}
	p.verifying = true
	go p.relistLoop()
}

func (p *proxy) relistLoop() {
	for {
		p.verifyMu.Lock()
		kinds := p.dirty
		p.dirty = [4]bool{}
		live := p.live
		if live == nil {
			// Still starting: verifyStart picks the kinds up when done.
			p.dirty = kinds
			p.verifying = false
			p.verifyMu.Unlock()
			return
		}
		if kinds == [4]bool{} || p.state.isQuarantined() {
			p.verifying = false
			p.state.openGate()
			p.verifyMu.Unlock()
			return
		}
		p.verifyMu.Unlock()

		next := *live
		if err := p.sessionHandshake(&next); err != nil {
			p.setQuarantine(fmt.Sprintf("the server ended its session, and its new session's answer to initialize cannot be checked against mcp.lock: %v", err))
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), p.opts.StartTimeout)
		err := mcp.ListSurface(ctx, p.caller(), &next, &kinds)
		cancel()
		p.asProbed(&next)
		if err != nil {
			if !p.serverGone() {
				p.setQuarantine(fmt.Sprintf("after it announced a changed list, its surface could not be listed again: %v", err))
			}
			continue
		}
		p.verifyMu.Lock()
		p.live = &next
		p.verifyMu.Unlock()
		p.compare(&next, "after list_changed")
	}
}

// sessionHandshake gives s the handshake of the session a remote server's
// connection started in place of one the server ended (mcp/session.go),
// whose list_changed brought the re-listing: the server mcpform speaks to
// now is compared with the lock whole, its answer to initialize (the
// instructions, which quarantine when they changed, and what informational
// drift is told of) as well as its lists. Nothing for a server whose
// session never ended.
func (p *proxy) sessionHandshake(s *mcp.Surface) error {
	raw := p.proc.RemoteHandshake()
	if raw == nil {
		return nil
	}
	h, err := mcp.SurfaceFromInitialize(raw)
	if err != nil {
		return err
	}
	s.ProtocolVersion, s.ServerInfo, s.Instructions, s.Capabilities = h.ProtocolVersion, h.ServerInfo, h.Instructions, h.Capabilities
	return nil
}

// compare checks a live surface against the lock: definitional drift
// quarantines (or, as on_drift says, blocks the items that drifted or is
// only warned of: ondrift.go), informational drift is logged.
func (p *proxy) compare(s *mcp.Surface, when string) {
	live, err := surface.Entry(s)
	if err != nil {
		p.setQuarantine(fmt.Sprintf("its live surface (%s) cannot be checked against mcp.lock: %v", when, err))
		return
	}
	var def, info []string
	drifts := lock.Compare(p.entry, live)
	for _, d := range drifts {
		if d.Class == lock.Definitional {
			def = append(def, describe(d))
		} else {
			info = append(info, describe(d))
		}
	}
	if len(info) > 0 {
		// Said once for as long as it stays the same: a server that
		// announces list_changed in a loop must not flood stderr and the
		// audit log with the same account.
		what := strings.Join(info, ", ")
		if prev := p.lastInfo.Swap(&what); prev == nil || *prev != what {
			msg := fmt.Sprintf("informational drift %s (the client still sees the locked values): %s", when, what)
			p.warnf("%s", msg)
			_ = p.record(&audit.Record{Event: "drift", Outcome: "informational", Detail: msg})
		}
	}
	if len(def) > 0 {
		p.onDefinitional(drifts, def, when) // ondrift.go: quarantine, unless on_drift says otherwise
	}
}

func describe(d lock.Drift) string {
	if d.IsItem() {
		verb := map[rune]string{'+': "added", '-': "removed", '~': "changed"}[d.Action]
		return fmt.Sprintf("%s %q %s", d.Kind, escape.String(d.Key), verb)
	}
	switch d.Field {
	case "era":
		return "protocol era changed"
	case "instructions":
		return map[rune]string{'+': "instructions added", '-': "instructions removed", '~': "instructions changed"}[d.Action]
	}
	return d.Field + " changed"
}
