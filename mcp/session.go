package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/jsonscan"
	"github.com/mcpform/mcpform/internal/mutation"
)

// A legacy Streamable HTTP server may end a session whenever it likes: a
// 404 to a request that carries the session's Mcp-Session-Id says it did,
// and the spec has the client start a new session with a new initialize.
// The proxy made its handshake once, at start, and cannot make another
// (its client's session goes on), so httpLines makes it for the proxy:
// the proxy's own initialize again (without the old session id, the same
// params), then its notifications/initialized, and the request that found
// the session ended is sent once more, in the new one.
//
// A new session may be a new instance of the server, whose surface nobody
// has checked. After every re-establishment, whatever the new initialize
// answered, httpLines hands the proxy a tools, a prompts and a resources
// list_changed of its own: the proxy then lists the surface again and
// compares it with the lock exactly as for a server's own list_changed,
// quarantining on drift (docs/GUARANTEES.md, section 15). The new
// initialize's answer is not a line (the proxy's initialize was answered
// long ago, and a second answer to its id would be dropped as unknown);
// it is kept for the proxy's comparison of the handshake instead
// (Process.RemoteHandshake), since listing again does not look at it.
//
// The 2026-07-28 era has no sessions: a 404 there carries no session id
// and is an answer like any other.

// maxRenewals bounds the sessions started again in a row without a
// request that succeeded: a server that ends every new session at once
// would otherwise be sent an initialize for each request for ever.
const maxRenewals = 3

// renewal is what re-establishing a session needs.
type renewal struct {
	once sync.Mutex // one re-establishment at a time

	// Under httpLines.mu:
	initialize, initialized []byte             // the proxy's, as it sent them
	handshake               json.RawMessage    // the latest new session's InitializeResult
	renewals                int                // sessions started again since a request last succeeded
	stopListen              context.CancelFunc // ends the current session's GET stream
}

// remember keeps the proxy's initialize and notifications/initialized,
// which a new session repeats.
func (h *httpLines) remember(method string, body []byte) {
	if method != "initialize" && method != "notifications/initialized" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if method == "initialize" {
		h.renew.initialize = body
	} else {
		h.renew.initialized = body
	}
}

// sessionWorks notes a request of the session that succeeded.
func (h *httpLines) sessionWorks() {
	h.mu.Lock()
	h.renew.renewals = 0
	h.mu.Unlock()
}

// startListen opens the current session's GET stream (listen), ending the
// previous session's: a stream of a session that ended brings nothing
// more, and one left open would hold its connection.
func (h *httpLines) startListen() {
	ctx, cancel := context.WithCancel(h.ctx)
	h.mu.Lock()
	if h.renew.stopListen != nil {
		h.renew.stopListen()
	}
	h.renew.stopListen = cancel
	h.mu.Unlock()
	if !h.count() {
		cancel()
		return
	}
	go func() {
		defer h.wg.Done()
		defer cancel()
		h.listen(ctx)
	}()
}

// reestablish starts a new session in place of stale, the session id a
// request carried when the server answered it 404. Requests that found
// the same session ended wait for the one re-establishment and then use
// its session.
func (h *httpLines) reestablish(ctx context.Context, stale string) error {
	h.renew.once.Lock()
	defer h.renew.once.Unlock()
	h.mu.Lock()
	current, initialize, initialized, renewals := h.session, h.renew.initialize, h.renew.initialized, h.renew.renewals
	h.mu.Unlock()
	switch {
	case current != stale:
		return nil // another request started it again meanwhile
	case initialize == nil:
		return errors.New("HTTP 404 Not Found: the server ended the session, and there is no initialize of mcpform's to start a new one with")
	case renewals >= maxRenewals:
		return fmt.Errorf("the server keeps ending the session: it answered HTTP 404 in each of the %d new sessions mcpform started in a row; check the server, then start its client again (mcpform starts a new session at most %d times before a request succeeds)", maxRenewals, maxRenewals)
	}
	h.mu.Lock()
	h.renew.renewals++
	h.mu.Unlock()
	result, session, err := h.initializeAgain(ctx, initialize)
	if err != nil {
		return fmt.Errorf("the server ended the session (HTTP 404), and a new one could not be started: %w", err)
	}
	version, ok := jsonString(jsonscan.Find(result, "protocolVersion"))
	if !ok || !visibleASCII(version) {
		return errors.New("the server ended the session (HTTP 404), and its answer to a new initialize has no protocolVersion in visible ASCII")
	}
	h.mu.Lock()
	h.session, h.version, h.renew.handshake = session, version, result
	h.mu.Unlock()
	if initialized != nil {
		if err := h.notifyAgain(ctx, initialized); err != nil {
			return fmt.Errorf("the server ended the session (HTTP 404), and refused the new one's notifications/initialized: %w", err)
		}
	}
	h.startListen()
	if mutation.Off("sessionverify") {
		return nil
	}
	for _, kind := range []string{"tools", "prompts", "resources"} {
		h.emit([]byte(`{"jsonrpc":"2.0","method":"notifications/` + kind + `/list_changed"}`))
	}
	return nil
}

// initializeAgain posts the initialize body without a session id and
// returns its result and the new session's id.
func (h *httpLines) initializeAgain(ctx context.Context, body []byte) (json.RawMessage, string, error) {
	id := jsonscan.Find(body, "id")
	resp, err := h.do(ctx, func() (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.endpoint.String(), bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			h.setHeaders(req, "", "initialize", "")
			// A new session: neither the old one's id nor its version.
			req.Header.Del("Mcp-Session-Id")
			req.Header.Del("MCP-Protocol-Version")
		}
		return req, err
	})
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, "", fmt.Errorf("initialize: HTTP %d %s%s", resp.StatusCode, http.StatusText(resp.StatusCode), bodyExcerpt(h.redact(b)))
	}
	session := resp.Header.Get("Mcp-Session-Id")
	if !visibleASCII(session) {
		return nil, "", errors.New("the new Mcp-Session-Id holds characters outside visible ASCII: refused")
	}
	var answer []byte
	why := "no answer to initialize"
	switch ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct {
	case "application/json":
		b, err := io.ReadAll(io.LimitReader(resp.Body, int64(h.maxLine)+1))
		switch {
		case err != nil:
			why = "reading the answer to initialize: " + err.Error()
		case len(b) > h.maxLine:
			why = fmt.Sprintf("the answer to initialize is longer than %d bytes", h.maxLine)
		case answers(b, id):
			answer = b
		}
	case "text/event-stream":
		h.readStreamWith(resp.Body, id, func(msg []byte) {
			if answers(msg, id) {
				answer = msg
			} else {
				h.emit(msg) // the server's own messages on the stream, as for any request
			}
		}, func(w string) { why = w })
	default:
		why = fmt.Sprintf("the server answered initialize with Content-Type %q, not application/json or text/event-stream", escape.String(resp.Header.Get("Content-Type")))
	}
	if answer == nil {
		return nil, "", errors.New(why)
	}
	result := jsonscan.Find(answer, "result")
	if result == nil {
		return nil, "", fmt.Errorf("initialize was refused%s", bodyExcerpt(h.redact(answer)))
	}
	return bytes.Clone(result), session, nil
}

// notifyAgain posts the notification body in the new session.
func (h *httpLines) notifyAgain(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, h.inline)
	defer cancel()
	resp, err := h.do(ctx, func() (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.endpoint.String(), bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			h.setHeaders(req, "", "notifications/initialized", "")
		}
		return req, err
	})
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return nil
}

// RemoteHandshake is the InitializeResult of the latest session a remote
// server's connection started again after the server had ended one: nil
// when none was (and for a local server). The proxy compares it, as the
// handshake of the server it now speaks to, with the lock when it lists
// the surface again (the list_changed each new session brings).
func (p *Process) RemoteHandshake() json.RawMessage {
	if p.remote == nil {
		return nil
	}
	return p.remote.renewHandshake()
}

func (h *httpLines) renewHandshake() json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.renew.handshake
}
