package runtime

import (
	"fmt"
	"strconv"
	"time"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/audit"
	"github.com/mcpform/mcpform/runtime/internal/pipe"
)

// upstreamNotification handles a notification from the server. It runs on
// the upstream reader, in stream order.
func (p *proxy) upstreamNotification(m *mcp.Message) {
	switch m.Method {
	case "notifications/tools/list_changed":
		p.listChanged([4]bool{true, false, false, false})
	case "notifications/prompts/list_changed":
		p.listChanged([4]bool{false, true, false, false})
	case "notifications/resources/list_changed":
		p.listChanged([4]bool{false, false, true, true})
	case "notifications/progress":
		// Only for a request of the client's still in flight: a server
		// cannot inject progress into anything else.
		if p.up.ProgressTarget(find(m.Params, "progressToken")) {
			p.notifyClient(m.Method, m.Params)
		}
	case "notifications/tasks/status":
		// Only for a task this run's calls created.
		if p.tasks.known(find(m.Params, "taskId")) && !p.state.isQuarantined() {
			p.notifyClient(m.Method, m.Params)
		}
	case "notifications/message":
		if p.checker.Capability("logging", "") && !p.state.isQuarantined() {
			p.notifyClient(m.Method, m.Params)
		}
	case "notifications/resources/updated":
		uri, ok := stringValue(find(m.Params, "uri"))
		if ok && p.checker.Capability("resources", "subscribe") && p.checker.ResourceAllowed(uri) && !p.state.isQuarantined() {
			// To the listen streams subscribed to it; a legacy client
			// subscribed with resources/subscribe gets it as it is.
			if !p.resourceUpdated(uri, m.Params) && !p.clientModern.Load() {
				p.notifyClient(m.Method, m.Params)
			}
		}
	case "notifications/cancelled":
		// The server gave up on a request it sent the client.
		upID, ok := mcp.ParseID(find(m.Params, "requestId"))
		if !ok {
			return
		}
		p.mu.Lock()
		clientID, ok := p.srvByUp[upID]
		p.mu.Unlock()
		if ok {
			params := append([]byte(`{"requestId":`), clientID.String()...)
			if r := find(m.Params, "reason"); r != nil {
				params = append(append(params, `,"reason":`...), r...)
			}
			p.notifyClient(m.Method, append(params, '}'))
		}
	default:
		// Nothing else a server says unasked reaches the client.
	}
}

// notifyClient writes a notification to the client, without the envelope
// keys a 2026-07-28 server put in _meta.
func (p *proxy) notifyClient(method string, params []byte) {
	if params != nil {
		params = oneLine(params)
		if m := find(params, "_meta"); m != nil {
			params = rewriteObject(nil, params, isMeta, metaWithout(params))
		}
	}
	b := pipe.GetLine()
	*b = mcp.AppendRequest(*b, "", method, params)
	p.write(*b)
	pipe.PutLine(b)
}

// serverRequest is a server→client request passed on to the client.
type serverRequest struct {
	ch chan *mcp.Message
}

// requestCapability maps a server→client request to the client capability
// it needs: in the lock's clientCapabilities (what was reviewed) and in
// what the client declared (what it can do).
var requestCapability = map[string]string{
	"sampling/createMessage": "sampling",
	"elicitation/create":     "elicitation",
	"roots/list":             "roots",
}

// mayAskClient is the one rule for what a server may ask the client, as a
// legacy request (upstreamRequest) or in a 2026-07-28 input_required result
// (checkInputRequests): only what the lock's client capabilities allow
// (what was reviewed) and the client declared (what it can do), never while
// quarantined. It returns why not, or "".
func (p *proxy) mayAskClient(method string) string {
	capName, known := requestCapability[method]
	switch {
	case !known:
		return "mcpform does not pass this request on"
	case find(p.lockClientCaps(), capName) == nil:
		return "the lock's client capabilities do not allow " + capName
	case p.state.isQuarantined():
		return "the server is quarantined"
	case !p.Declared(capName):
		return "the client did not declare " + capName
	}
	return ""
}

// upstreamRequest handles a request from the server. Runs on the upstream
// reader; anything that waits gets a goroutine, at most 16 at once.
func (p *proxy) upstreamRequest(m *mcp.Message) {
	if m.Method == "ping" {
		_ = p.up.Respond(m.ID, []byte("{}"), nil)
		return
	}
	deny := func(why string) {
		_ = p.record(&audit.Record{Event: "deny", Method: m.Method, ID: m.ID.String(), Detail: why})
		p.warnf("denied the server's %s request: %s", m.Method, why)
		_ = p.up.Respond(m.ID, nil, &mcp.RPCError{Code: mcp.CodeMethodNotFound, Message: "mcpform denied " + m.Method + ": " + why})
	}
	if why := p.mayAskClient(m.Method); why != "" {
		deny(why)
		return
	}
	select {
	case p.srvSem <- struct{}{}:
	default:
		deny("too many requests from the server at once")
		return
	}
	go func() {
		defer func() { <-p.srvSem }()
		if p.clientModern.Load() {
			p.relayToModern(m)
			return
		}
		p.relayServerRequest(m)
	}()
}

func (p *proxy) relayServerRequest(m *mcp.Message) {
	if err := p.record(&audit.Record{Event: "server-request", Method: m.Method, ID: m.ID.String()}); err != nil {
		_ = p.up.Respond(m.ID, nil, &mcp.RPCError{Code: mcp.CodeInternalError, Message: "mcpform cannot write its audit log"})
		return
	}
	sr := &serverRequest{ch: make(chan *mcp.Message, 1)}
	token := ""
	if t := find(find(m.Params, "_meta"), "progressToken"); t != nil {
		token = string(t)
	}
	p.mu.Lock()
	p.srvNext++
	id := mcp.StringID("mcpform-" + strconv.FormatInt(p.srvNext, 10))
	p.srvReqs[id] = sr
	p.srvByUp[m.ID] = id
	if token != "" {
		p.srvTokens[token] = true
	}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.srvReqs, id)
		delete(p.srvByUp, m.ID)
		delete(p.srvTokens, token)
		p.mu.Unlock()
	}()
	b := pipe.GetLine()
	*b = mcp.AppendRequest(*b, id, m.Method, clientParams(m.Params))
	p.write(*b)
	pipe.PutLine(b)
	p.answerServer(m, sr.ch)
}

// answerServer answers the server's request m with the client's answer
// when it comes on ch, or with a timeout error after RequestTimeout.
func (p *proxy) answerServer(m *mcp.Message, ch <-chan *mcp.Message) {
	t := time.NewTimer(p.opts.RequestTimeout)
	defer t.Stop()
	select {
	case resp := <-ch:
		if resp.Error != nil {
			_ = p.up.Respond(m.ID, nil, resp.Error)
		} else {
			_ = p.up.Respond(m.ID, oneLine(resp.Result), nil)
		}
	case <-t.C:
		_ = p.up.Respond(m.ID, nil, &mcp.RPCError{Code: codeTimeout, Message: fmt.Sprintf("the client did not answer %s within %v", m.Method, p.opts.RequestTimeout)})
	case <-p.up.Done():
	}
}

// clientParams returns a server request's params as the client gets them:
// one line, without the envelope keys a server set in _meta.
func clientParams(params []byte) []byte {
	if params == nil {
		return nil
	}
	params = oneLine(params)
	if find(params, "_meta") != nil {
		params = rewriteObject(nil, params, isMeta, metaWithout(params))
	}
	return params
}

// clientResponse delivers the client's answer to a server request the
// proxy passed on; anything else is dropped.
func (p *proxy) clientResponse(m *mcp.Message) {
	p.mu.Lock()
	sr, ok := p.srvReqs[m.ID]
	if ok {
		delete(p.srvReqs, m.ID)
	}
	p.mu.Unlock()
	if !ok {
		p.warnf("dropped a response from the client to id %s, which no request is waiting for", escape.String(m.ID.String()))
		return
	}
	sr.ch <- m
}
