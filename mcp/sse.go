package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/jsonscan"
)

// An older remote server speaks the HTTP+SSE transport of 2024-11-05,
// which Streamable HTTP replaced: the client opens one SSE stream with a
// GET to the server's url; its first event, "endpoint", names the URI
// every message is POSTed to, and everything the server sends, answers
// included, comes as "message" events on that one stream. A POST's own
// response (202) carries nothing. httpLines speaks it behind the same
// lines as Streamable HTTP: a line written is a POST to the endpoint, an
// event read is a line.
//
// mcpform falls back to it only by the spec's backwards-compatibility
// rule: initialize's POST to the url fails with 400, 404 or 405 (never
// 401 or 403, which are about credentials), unless the lock says the
// server speaks Streamable HTTP; a server locked over HTTP+SSE is spoken
// to over it from the start. What mcpform refuses of such a server,
// besides what http.go refuses: an endpoint of another origin than the
// url (the POSTs carry the headers and the token, and would carry them
// there), an endpoint with characters outside visible ASCII or with
// userinfo, a stream that names no endpoint within the request timeout
// or sends a message before it, an event past the line limit and a
// stream past maxStreamBytes.

// Transports a remote server is spoken to over (ServerSpec.Transport,
// Surface.Transport), named as the lock names them.
const (
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
)

// sseSession is an httpLines' HTTP+SSE state; unused while the server
// speaks Streamable HTTP.
type sseSession struct {
	forced string // ServerSpec.Transport: "" detects, else only this one

	open sync.Mutex // one GET of the stream at a time

	mu      sync.Mutex
	on      bool              // the session is over HTTP+SSE
	post    *url.URL          // the endpoint event's URI, resolved; nil until it came
	err     error             // why the stream failed or ended; once set, for good
	pending map[string][]byte // requests posted and not yet answered, by id
}

// checkTransport refuses a transport mcpform does not speak.
func checkTransport(t string) error {
	switch t {
	case "", TransportStreamableHTTP, TransportSSE:
		return nil
	}
	return fmt.Errorf("transport %q is neither %q nor %q", escape.String(t), TransportStreamableHTTP, TransportSSE)
}

// overSSE reports whether messages go over HTTP+SSE.
func (h *httpLines) overSSE() bool {
	if h.sse.forced == TransportSSE {
		return true
	}
	h.sse.mu.Lock()
	defer h.sse.mu.Unlock()
	return h.sse.on
}

// transport is the transport the session speaks (Surface.Transport).
func (h *httpLines) transport() string {
	if h.overSSE() {
		return TransportSSE
	}
	return TransportStreamableHTTP
}

// fallsBack reports whether initialize's POST, answered with status,
// means the server speaks HTTP+SSE; if so, the session is over it from
// now on.
func (h *httpLines) fallsBack(status int) bool {
	if h.sse.forced == TransportStreamableHTTP {
		// Locked over Streamable HTTP: a server that now refuses it
		// must not be spoken to another way unreviewed.
		return false
	}
	switch status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		h.sse.mu.Lock()
		h.sse.on = true
		h.sse.mu.Unlock()
		return true
	}
	return false
}

// postSSE sends one message over HTTP+SSE: a POST to the endpoint the
// stream named (opening the stream first, once); its answer, if it has
// one, comes on the stream.
func (h *httpLines) postSSE(ctx context.Context, body []byte) {
	var id []byte // the request's id; nil for a notification or a response
	if jsonscan.Find(body, "method") != nil {
		id = jsonscan.Find(body, "id")
	}
	endpoint, err := h.sseEndpoint(ctx)
	if err != nil {
		h.fail(id, err.Error())
		return
	}
	if err := h.track(id); err != nil {
		h.fail(id, err.Error())
		return
	}
	// Through do, as Streamable HTTP's POSTs: the OAuth token, and a 401
	// or an insufficient_scope 403 to the OAuth handler.
	resp, err := h.do(ctx, func() (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint.String(), bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			h.setHeaders(req, "", "", "")
		}
		return req, err
	})
	if err != nil {
		h.untrack(id)
		if h.ctx.Err() == nil {
			h.fail(id, err.Error())
		}
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		h.untrack(id)
		h.fail(id, fmt.Sprintf("HTTP %d: the server refused mcpform's credentials%s", resp.StatusCode, h.authHint(resp)))
	case resp.StatusCode/100 != 2:
		h.untrack(id)
		h.failWith(id, codeHTTPStatus, fmt.Sprintf("HTTP %d %s%s", resp.StatusCode, http.StatusText(resp.StatusCode), bodyExcerpt(h.redact(b))))
	}
	// 202 (or 200): the answer comes on the stream.
}

// track notes a request posted, so that it is answered with an error
// should the stream end first; it refuses when the stream already ended.
func (h *httpLines) track(id []byte) error {
	h.sse.mu.Lock()
	defer h.sse.mu.Unlock()
	if h.sse.err != nil {
		return h.sse.err
	}
	if id != nil {
		if h.sse.pending == nil {
			h.sse.pending = map[string][]byte{}
		}
		h.sse.pending[string(bytes.TrimSpace(id))] = id
	}
	return nil
}

func (h *httpLines) untrack(id []byte) {
	h.sse.mu.Lock()
	defer h.sse.mu.Unlock()
	delete(h.sse.pending, string(bytes.TrimSpace(id)))
}

// sseEndpoint is the URI to POST to, from the stream's endpoint event;
// the first caller opens the stream and the others wait for it.
func (h *httpLines) sseEndpoint(ctx context.Context) (*url.URL, error) {
	h.sse.open.Lock()
	defer h.sse.open.Unlock()
	h.sse.mu.Lock()
	post, err := h.sse.post, h.sse.err
	h.sse.mu.Unlock()
	if post != nil || err != nil {
		return post, err
	}
	post, err = h.openSSE(ctx)
	h.sse.mu.Lock()
	defer h.sse.mu.Unlock()
	if err != nil {
		h.sse.err = err
		return nil, err
	}
	h.sse.post = post
	return post, h.sse.err
}

// openSSE GETs the session's stream and waits, at most the request
// timeout, for its endpoint event; the stream is then read on a goroutine
// of its own until it ends or Close.
func (h *httpLines) openSSE(ctx context.Context) (*url.URL, error) {
	sctx, cancel := context.WithCancel(h.ctx)
	// A server that opens the stream and never names its endpoint must
	// not hold the session: the stream is dropped when the time is up.
	var expired atomic.Bool
	timer := time.AfterFunc(h.inline, func() { expired.Store(true); cancel() })
	fail := func(err error) (*url.URL, error) {
		timer.Stop()
		cancel()
		if expired.Load() && h.ctx.Err() == nil && ctx.Err() == nil {
			err = fmt.Errorf("the server's SSE stream at %s named no endpoint within %v", escape.String(h.endpoint.String()), h.inline)
		}
		return nil, err
	}
	// Through do too: the stream's GET is where an HTTP+SSE server may
	// first ask for authorization (its POSTs need the endpoint the
	// stream names), so a 401 there goes to the OAuth handler, and
	// mcpform login's flow runs there.
	resp, err := h.do(sctx, func() (*http.Request, error) {
		req, err := http.NewRequestWithContext(sctx, http.MethodGet, h.endpoint.String(), nil)
		if err == nil {
			h.setHeaders(req, "", "", "")
			req.Header.Set("Accept", "text/event-stream")
		}
		return req, err
	})
	if err != nil {
		return fail(fmt.Errorf("the server refused initialize's POST (Streamable HTTP), and opening its HTTP+SSE stream failed: %v", err))
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		what := fmt.Sprintf("HTTP %d %s%s", resp.StatusCode, http.StatusText(resp.StatusCode), bodyExcerpt(h.redact(b)))
		if resp.StatusCode == http.StatusOK {
			what = fmt.Sprintf("Content-Type %q", escape.String(resp.Header.Get("Content-Type")))
		}
		return fail(fmt.Errorf("the server refused initialize's POST (Streamable HTTP), and its GET for an HTTP+SSE stream answered %s: check the server's url", what))
	}
	endpoint := make(chan sseResult, 1)
	if !h.count() {
		resp.Body.Close()
		cancel()
		return fail(io.ErrClosedPipe)
	}
	go func() {
		defer h.wg.Done()
		defer resp.Body.Close()
		defer cancel()
		h.readSSE(resp.Body, endpoint)
	}()
	select {
	case r := <-endpoint:
		if r.err != nil {
			return fail(r.err)
		}
		if !timer.Stop() {
			return fail(context.Canceled)
		}
		return r.url, nil
	case <-ctx.Done():
		return fail(ctx.Err())
	}
}

type sseResult struct {
	url *url.URL
	err error
}

// readSSE reads the session's stream: its endpoint event to endpoint
// (once: a later one cannot move the session), its messages as lines. When
// the stream ends, the requests still unanswered are answered with why.
func (h *httpLines) readSSE(body io.Reader, endpoint chan<- sseResult) {
	named := false
	err := sseEvents(body, h.maxLine, func(event string, data []byte) error {
		switch {
		case event == "endpoint" && !named:
			u, err := h.sseResolve(data)
			if err != nil {
				return err
			}
			named = true
			endpoint <- sseResult{url: u}
		case event == "endpoint":
		case event == "message" && !named:
			return errors.New("the server's SSE stream sent a message before its endpoint event")
		case event == "message":
			if id := jsonscan.Find(data, "id"); id != nil && jsonscan.Find(data, "method") == nil {
				h.untrack(id)
			}
			h.emit(data)
		}
		// Other events carry nothing of the 2024-11-05 transport.
		return nil
	})
	if err == nil {
		err = errors.New("the server's SSE stream ended (the HTTP+SSE session is over)")
	}
	if h.ctx.Err() != nil {
		err = errors.New("the session was closed")
	}
	h.sse.mu.Lock()
	if h.sse.err == nil {
		h.sse.err = err
	}
	pending := h.sse.pending
	h.sse.pending = nil
	h.sse.mu.Unlock()
	if !named {
		endpoint <- sseResult{err: err}
		return
	}
	if h.ctx.Err() != nil {
		return // Close: nobody waits for the answers
	}
	for _, id := range pending {
		h.fail(id, err.Error())
	}
}

// sseResolve is the endpoint event's URI resolved against the configured
// url, which must be of the url's own origin.
func (h *httpLines) sseResolve(data []byte) (*url.URL, error) {
	s := string(bytes.TrimSpace(data))
	if s == "" || !visibleASCII(s) {
		return nil, fmt.Errorf("the server's endpoint event %q holds characters outside visible ASCII (or nothing): refused", escape.String(s))
	}
	ref, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("the server's endpoint event %q is not a URI: %v", escape.String(s), err)
	}
	u := h.endpoint.ResolveReference(ref)
	u.Fragment, u.RawFragment = "", ""
	switch {
	case !sameOrigin(u, h.endpoint):
		return nil, fmt.Errorf("the server's endpoint event names %s, another origin than its url's %s: refused (mcpform posts messages, with their headers and token, only to the url's origin)", escape.String(origin(u)), escape.String(origin(h.endpoint)))
	case u.User != nil:
		return nil, fmt.Errorf("the server's endpoint event %q carries userinfo: refused", escape.String(s))
	}
	return u, nil
}

// errStreamTooLong is a stream past maxStreamBytes.
var errStreamTooLong = fmt.Errorf("the server's SSE stream passed %d MiB", maxStreamBytes>>20)

// capped reads at most n bytes of r, then fails with errStreamTooLong.
type capped struct {
	r io.Reader
	n int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.n <= 0 {
		return 0, errStreamTooLong
	}
	if int64(len(p)) > c.n {
		p = p[:c.n]
	}
	n, err := c.r.Read(p)
	c.n -= int64(n)
	return n, err
}

// sseEvents calls each with every event of an SSE stream, its type
// ("message" when it names none) and its data lines joined, until each
// fails, the stream ends (nil) or fails. A line or an event's data longer
// than maxLine, or a stream past maxStreamBytes, is an error.
func sseEvents(body io.Reader, maxLine int, each func(event string, data []byte) error) error {
	sc := bufio.NewScanner(&capped{r: body, n: maxStreamBytes})
	sc.Buffer(make([]byte, 0, 4<<10), maxLine+16)
	var data []byte
	lines := 0 // data lines of the event so far
	event := ""
	for sc.Scan() {
		line := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch {
		case len(line) == 0:
			// An event with no data is not dispatched (the SSE rule).
			if len(data) > 0 {
				if event == "" {
					event = "message"
				}
				if err := each(event, data); err != nil {
					return err
				}
			}
			data, lines, event = nil, 0, ""
		case len(field) == 0:
			// a comment (keep-alive)
		case string(field) == "event":
			event = string(value)
		case string(field) == "data":
			if len(data)+len(value)+1 > maxLine {
				return fmt.Errorf("an event of the server's stream is longer than %d bytes", maxLine)
			}
			if lines > 0 {
				data = append(data, '\n')
			}
			lines++
			data = append(data, value...)
		}
		// id: and retry: carry nothing mcpform needs.
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("a line of the server's stream is longer than %d bytes", maxLine)
	case err != nil:
		return fmt.Errorf("reading the server's stream: %w", err)
	}
	return nil
}
