package mcp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/jsonscan"
)

// A remote server speaks Streamable HTTP (the 2025-03-26 to 2025-11-25
// transport, and its 2026-07-28 revision): every message mcpform sends is
// a POST to the server's one endpoint, and a request's answer comes back
// as a JSON body or as the events of an SSE stream scoped to it. The
// probe's JSON-RPC connection reads and writes lines, as over stdio;
// httpLines turns each line it writes into a POST and the answers into
// lines it reads, so both eras' handshakes and lists work unchanged.
//
// What mcpform refuses of a server, whatever it is: a redirect to another
// origin, a connection to a loopback, private or link-local address when
// the configured URL is not one itself (a DNS name that resolves there
// later, for one), a Content-Type that is neither application/json nor
// text/event-stream, a session id with characters outside visible ASCII,
// and answers past the line limit or streams past maxStreamBytes. TLS is
// verified, always.

// HTTPHeaderTimeout bounds the wait for a response's headers; the body is
// bounded by the request's own timeout.
const HTTPHeaderTimeout = 30 * time.Second

// maxStreamBytes bounds what one SSE response stream may carry.
const maxStreamBytes = 64 << 20

// maxHeaderBytes bounds a response's headers (net/http's default is 10 MiB).
const maxHeaderBytes = 1 << 20

// closeGrace is how long Close lets the answers in flight be read before
// it drops what nobody reads.
const closeGrace = time.Second

// maxIdleConns is how many connections to the server are kept open
// between requests: as many as the proxy has requests in flight at a busy
// moment, so that a burst does not end in closing connections it then
// has to dial again.
const maxIdleConns = 128

// maxErrorBody is how much of an HTTP error's body is read.
const maxErrorBody = 64 << 10

// httpLines is the line stream of one remote server.
type httpLines struct {
	endpoint *url.URL
	headers  map[string]string
	bearer   string
	oauth    auth.OAuthHandler        // nil without OAuth
	params   map[string][]ParamHeader // by tool: the parameters mirrored into headers
	client   *http.Client
	maxLine  int

	ctx    context.Context
	cancel context.CancelFunc
	r      io.Reader      // the lines of the answers (the probe's end of w)
	w      io.WriteCloser // where they are written
	wmu    sync.Mutex     // one answer's lines at a time into w
	wg     sync.WaitGroup
	// inline bounds a notification's or response's POST, which Write
	// waits for: a server that never ends its 202 must not hold the
	// writer (the probe, past its timeout) forever.
	inline time.Duration

	// streams holds the cancel of each 2026-07-28 request in flight, by
	// id; cancelled the ids cancelled so, whose end is not answered.
	streams   sync.Map
	cancelled sync.Map
	modern    atomic.Bool // a 2026-07-28 request has been sent

	// tokens are the OAuth access tokens sent (the last maxTokens),
	// which redact hides in whatever comes back.
	tokens atomic.Pointer[[]string]

	mu      sync.Mutex
	closing bool   // Close has begun: no goroutine is counted in wg any more
	session string // Mcp-Session-Id (legacy eras)
	version string // the negotiated legacy version, for MCP-Protocol-Version

	sse sseSession // the HTTP+SSE transport's state (sse.go)

	renew renewal // what re-establishes an ended session (session.go)
}

// dialHTTP prepares the line stream to spec.URL; nothing is sent yet.
func dialHTTP(spec ServerSpec) (*httpLines, error) {
	r, w := io.Pipe()
	return dialHTTPTo(spec, r, w)
}

// dialHTTPTo is dialHTTP writing the answers' lines to w, which r reads.
func dialHTTPTo(spec ServerSpec, r io.Reader, w io.WriteCloser) (*httpLines, error) {
	u, err := url.Parse(spec.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("the server's url %q is not an http(s) URL", escape.String(spec.URL))
	}
	if err := checkTransport(spec.Transport); err != nil {
		return nil, err
	}
	bearer := ""
	if spec.BearerEnv != "" {
		lookup := spec.LookupEnv
		if lookup == nil {
			lookup = os.LookupEnv
		}
		v, ok := lookup(spec.BearerEnv)
		if !ok || v == "" {
			return nil, fmt.Errorf("auth.bearer_env names %s, which is not set: export the server's token in %s", spec.BearerEnv, spec.BearerEnv)
		}
		bearer = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &httpLines{endpoint: u, headers: spec.Headers, bearer: bearer, oauth: spec.OAuth, params: spec.ParamHeaders, maxLine: spec.MaxLineSize, ctx: ctx, cancel: cancel, r: r, w: w, inline: HTTPHeaderTimeout}
	for _, d := range []time.Duration{spec.Timeout, spec.RequestTimeout} {
		if d > 0 && d < h.inline {
			h.inline = d
		}
	}
	if h.maxLine <= 0 {
		h.maxLine = DefaultMaxLineSize
	}
	h.client = newHTTPClient(u)
	h.sse.forced = spec.Transport
	return h, nil
}

// HTTPClient is the client for what the remote server at u hands out
// (its OAuth metadata and authorization servers): as the client for the
// server itself, no connection to an address more private than u's own
// host, and redirects only within the origin of the URL asked for.
func HTTPClient(u *url.URL) *http.Client { return newHTTPClient(u) }

// newHTTPClient returns a client for the server at u: redirects only
// within the origin asked for, and no connection to an address more
// private than u's own host.
func newHTTPClient(u *url.URL) *http.Client {
	allowed := hostPrivacy(u.Hostname())
	dialer := &net.Dialer{
		Timeout: HTTPHeaderTimeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return fmt.Errorf("mcpform dials addresses only, not %q", escape.String(host))
			}
			if privacy(ip) > allowed {
				return fmt.Errorf("%s resolved to %s, a %s address: mcpform connects to no address more private than the configured url's own (%s)", escape.String(u.Hostname()), ip, privacyNames[privacy(ip)], privacyNames[allowed])
			}
			return nil
		},
	}
	transport := &http.Transport{
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    HTTPHeaderTimeout,
		ResponseHeaderTimeout:  HTTPHeaderTimeout,
		MaxIdleConnsPerHost:    maxIdleConns,
		MaxResponseHeaderBytes: maxHeaderBytes,
		// No proxy from the environment: the server's address is the one
		// the lock names, and HTTPS_PROXY would put another party on the
		// path to it.
		Proxy: nil,
	}
	return &http.Client{
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("more than 5 redirects")
			}
			if first := via[0].URL; !sameOrigin(req.URL, first) {
				return fmt.Errorf("%s redirected to %s, another origin: mcpform follows redirects only within %s; if the server moved, set its url", escape.String(origin(first)), escape.String(origin(req.URL)), escape.String(origin(first)))
			}
			return nil
		},
	}
}

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(hostPort(a), hostPort(b))
}

func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[strings.ToLower(u.Scheme)]
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// How far inside an address leads, in order: an address of a rank is
// dialled only for a server whose configured host ranks as high (a
// server on a LAN address may hand out another LAN address, never
// loopback or the link-local metadata service).
const (
	public    = iota
	lan       // RFC 1918, unique local and site-local IPv6, and the IPv6 forms that may carry any of them
	linkLocal // link-local, carrier-grade NAT (where cloud metadata services live too), "this network", unspecified
	loopback
)

var privacyNames = [...]string{public: "public", lan: "private", linkLocal: "link-local", loopback: "loopback"}

// hostPrivacy is the rank of a configured host: localhost is loopback,
// an address literal its own rank, a DNS name public (what it resolves
// to is checked when dialling).
func hostPrivacy(host string) int {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return loopback
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return privacy(ip)
	}
	return public
}

// hostIsPrivate reports whether a configured host names a loopback,
// private or link-local address (or is localhost).
func hostIsPrivate(host string) bool { return hostPrivacy(host) > public }

func privacy(ip netip.Addr) int {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return loopback
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified():
		return linkLocal
	case ip.IsPrivate():
		return lan
	}
	for _, p := range linkLocalPrefixes {
		if p.Contains(ip) {
			return linkLocal
		}
	}
	for _, p := range privatePrefixes {
		if p.Contains(ip) {
			return lan
		}
	}
	return public
}

// linkLocalPrefixes are the ranges netip does not call link-local that
// lead to the machine's own network services: "this network" and
// carrier-grade NAT, where cloud metadata services live too.
var linkLocalPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
}

// privatePrefixes are the ranges netip does not call private that still
// lead inside: site-local IPv6, and the IPv6 forms that carry an IPv4
// address (NAT64, 6to4), which may carry a private one.
var privatePrefixes = []netip.Prefix{
	netip.MustParsePrefix("fec0::/10"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2002::/16"),
}

func (h *httpLines) Read(p []byte) (int, error) { return h.r.Read(p) }

// Write posts each line of b (one JSON-RPC message each) and returns at
// once: the answer is read on a goroutine of its own and becomes lines for
// Read.
func (h *httpLines) Write(b []byte) (int, error) {
	select {
	case <-h.ctx.Done():
		return 0, io.ErrClosedPipe
	default:
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		body := bytes.Clone(line)
		if h.cancelStream(body) {
			continue
		}
		if jsonscan.Find(body, "id") == nil || jsonscan.Find(body, "method") == nil {
			// A notification or a response: posted in order (the
			// server answers 202 at once), so that initialized comes
			// before the requests after it.
			ctx, cancel := context.WithTimeout(h.ctx, h.inline)
			h.post(ctx, body)
			cancel()
			continue
		}
		ctx, cancel := context.WithCancel(h.ctx)
		key := ""
		params := jsonscan.Find(body, "params")
		if v, _ := jsonString(jsonscan.Find(jsonscan.Find(params, "_meta"), MetaProtocolVersion)); v != "" && !isLegacyVersion(v) {
			key = string(bytes.TrimSpace(jsonscan.Find(body, "id")))
			h.streams.Store(key, cancel)
			h.modern.Store(true)
		}
		if !h.count() {
			cancel()
			return 0, io.ErrClosedPipe
		}
		go func() {
			defer h.wg.Done()
			defer cancel()
			h.post(ctx, body)
			if key != "" {
				h.streams.Delete(key)
				h.cancelled.Delete(key)
			}
		}()
	}
	return len(b), nil
}

// cancelStream is a 2026-07-28 request's cancellation: the transport's is
// closing the request's stream (the server takes that as cancellation,
// and no notifications/cancelled is sent); the request gets no answer of
// mcpform's either. It reports whether line was such a cancellation. A
// legacy request's cancellation is the notification, posted as it is.
func (h *httpLines) cancelStream(line []byte) bool {
	if m, _ := jsonString(jsonscan.Find(line, "method")); m != "notifications/cancelled" || jsonscan.Find(line, "id") != nil {
		return false
	}
	key := string(bytes.TrimSpace(jsonscan.Find(jsonscan.Find(line, "params"), "requestId")))
	cancel, ok := h.streams.LoadAndDelete(key)
	if !ok {
		// A request that has ended already: a 2026-07-28 connection has
		// no notification to post for it.
		return h.modern.Load()
	}
	h.cancelled.Store(key, true)
	cancel.(context.CancelFunc)()
	return true
}

// count counts a goroutine of the connection in h.wg, unless Close has
// begun (Close waits for those counted, and a count added while it waits
// would race with the wait).
func (h *httpLines) count() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return false
	}
	h.wg.Add(1)
	return true
}

// Close ends the stream: the session (if any) is ended on the server, and
// Read gets io.EOF once the answers in flight are done.
func (h *httpLines) Close() error {
	h.mu.Lock()
	session := h.session
	h.mu.Unlock()
	if session != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.endpoint.String(), nil)
		if err == nil {
			h.setHeaders(req, "", "", "")
			h.authorize(ctx, req)
			if resp, err := h.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	h.mu.Lock()
	h.closing = true
	h.mu.Unlock()
	h.cancel()
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeGrace):
		// A reader that stopped reading (it failed, or the proxy is
		// gone) would keep an answer's write, and so Close, waiting
		// forever: what is left is dropped.
		if d, ok := h.w.(interface{ SetWriteDeadline(time.Time) error }); ok {
			d.SetWriteDeadline(time.Now())
		}
		if pr, ok := h.r.(*io.PipeReader); ok {
			pr.CloseWithError(io.ErrClosedPipe)
		}
		<-done
	}
	h.w.Close()
	h.client.CloseIdleConnections()
	return nil
}

// setHeaders sets what every request to the server carries.
func (h *httpLines) setHeaders(req *http.Request, version, method, name string) {
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+h.bearer)
	}
	h.mu.Lock()
	session := h.session
	if version == "" {
		version = h.version
	}
	h.mu.Unlock()
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	if method != "" {
		req.Header.Set("Mcp-Method", method)
	}
	if name != "" {
		req.Header.Set("Mcp-Name", headerValue(name))
	}
}

// post sends one message and turns its answer into lines.
func (h *httpLines) post(ctx context.Context, body []byte) { h.postWith(ctx, body, true) }

// postWith is post; renew says whether a 404 to a request of a session
// may re-establish the session and send the request again (session.go),
// which the request sent again may not.
func (h *httpLines) postWith(ctx context.Context, body []byte, renew bool) {
	if h.overSSE() {
		h.postSSE(ctx, body)
		return
	}
	id := jsonscan.Find(body, "id")
	method, _ := jsonString(jsonscan.Find(body, "method"))
	params := jsonscan.Find(body, "params")
	version, _ := jsonString(jsonscan.Find(jsonscan.Find(params, "_meta"), MetaProtocolVersion))
	name := ""
	switch method {
	case "tools/call", "prompts/get":
		name, _ = jsonString(jsonscan.Find(params, "name"))
	case "resources/read":
		name, _ = jsonString(jsonscan.Find(params, "uri"))
	}
	if method == "initialize" {
		version = "" // negotiated by this request
	}
	h.remember(method, body)
	sent := "" // the session id the request carried
	resp, err := h.do(ctx, func() (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.endpoint.String(), bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			h.setHeaders(req, version, method, name)
			if method == "tools/call" {
				for k, v := range paramHeaderValues(h.params[name], jsonscan.Find(params, "arguments")) {
					req.Header.Set(k, v)
				}
			}
			sent = req.Header.Get("Mcp-Session-Id")
		}
		return req, err
	})
	if err != nil {
		if h.ctx.Err() == nil {
			h.fail(id, err.Error())
		}
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound && sent != "" && id != nil && method != "" && method != "initialize" {
		// The server ended the session (the spec: a 404 to a request
		// with a session id): a new one, re-verified, and this request
		// once more in it. A JSON-RPC error that answers the request is
		// the server's answer, as the Go SDK's client reads it too.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "application/json" && answers(b, id) {
			h.emit(b)
			return
		}
		if !renew {
			h.fail(id, "HTTP 404 Not Found: the server ended the new session mcpform had started for this request as well")
			return
		}
		if err := h.reestablish(ctx, sent); err != nil {
			if h.ctx.Err() == nil {
				h.fail(id, err.Error())
			}
			return
		}
		h.postWith(ctx, body, false)
		return
	}
	if sent != "" && id != nil && method != "" && resp.StatusCode/100 == 2 {
		h.sessionWorks()
	}
	if method == "initialize" && h.fallsBack(resp.StatusCode) {
		// Not Streamable HTTP: the 2024-11-05 HTTP+SSE transport, by the
		// spec's fallback rule (sse.go).
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		h.postSSE(ctx, body)
		return
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" && method == "initialize" {
		if !visibleASCII(s) {
			h.fail(id, "the server's Mcp-Session-Id holds characters outside visible ASCII: refused")
			return
		}
		h.mu.Lock()
		h.session = s
		h.mu.Unlock()
	}
	deliver := func(msg []byte) {
		if method == "initialize" && answers(msg, id) {
			// The version every later request names in its header; set
			// before the answer is read, which the next request follows.
			if v, ok := jsonString(jsonscan.Find(jsonscan.Find(msg, "result"), "protocolVersion")); ok && visibleASCII(v) {
				h.mu.Lock()
				h.version = v
				h.mu.Unlock()
			}
		}
		h.emit(msg)
	}
	if id == nil || method == "" {
		// A notification or a response: 202 Accepted, nothing to read.
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		if method == "notifications/initialized" && resp.StatusCode/100 == 2 {
			h.startListen()
		}
		return
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		h.fail(id, fmt.Sprintf("HTTP %d: the server refused mcpform's credentials%s", resp.StatusCode, h.authHint(resp)))
	case resp.StatusCode/100 != 2:
		// A JSON-RPC error in the body that answers this request is the
		// server's answer (a 2026-07-28 server's unsupported version, or
		// method not found); anything else becomes an error of mcpform's.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if ct == "application/json" && answers(b, id) {
			deliver(b)
			return
		}
		// The server's own refusal: a legacy server's answer to
		// server/discover may be one, so the probe may fall back.
		h.failWith(id, codeHTTPStatus, fmt.Sprintf("HTTP %d %s%s", resp.StatusCode, http.StatusText(resp.StatusCode), bodyExcerpt(h.redact(b))))
	case ct == "application/json":
		b, err := io.ReadAll(io.LimitReader(resp.Body, int64(h.maxLine)+1))
		if err != nil {
			h.fail(id, "reading the answer: "+err.Error())
			return
		}
		if len(b) > h.maxLine {
			h.fail(id, fmt.Sprintf("the answer is longer than %d bytes", h.maxLine))
			return
		}
		deliver(b)
	case ct == "text/event-stream":
		h.readResumable(ctx, resp.Body, id, version, deliver)
	default:
		h.fail(id, fmt.Sprintf("the server answered with Content-Type %q, not application/json or text/event-stream", escape.String(resp.Header.Get("Content-Type"))))
	}
}

// do sends the request newReq makes, with the OAuth access token when
// there is one. A 401 or 403 goes to the OAuth handler, once: when it
// answers with a token (a login since, or a refresh), the request is
// made again; when it cannot, its error (which says what to do) is the
// request's.
func (h *httpLines) do(ctx context.Context, newReq func() (*http.Request, error)) (*http.Response, error) {
	send := func() (*http.Request, *http.Response, error) {
		req, err := newReq()
		if err != nil {
			return nil, nil, err
		}
		if err := h.authorize(ctx, req); err != nil {
			return nil, nil, err
		}
		resp, err := h.client.Do(req)
		if err != nil {
			return nil, nil, reachError(h.endpoint, err)
		}
		return req, resp, nil
	}
	req, resp, err := send()
	if err != nil || h.oauth == nil || !(resp.StatusCode == http.StatusUnauthorized || insufficientScope(resp)) {
		return resp, err
	}
	if err := h.oauth.Authorize(ctx, req, resp); err != nil {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, escape.String(err.Error()))
	}
	_, resp, err = send()
	return resp, err
}

// reachError says why a request to the server at u got no answer, in
// words a user can act on: the name does not resolve, nothing listens,
// the TLS certificate is not valid, no answer in time; else the cause as
// the HTTP client gave it (a refused redirect, a refused address).
func reachError(u *url.URL, err error) error {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var netErr net.Error
	why := ""
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		why = fmt.Sprintf("the host name %s does not resolve", escape.String(u.Hostname()))
	case errors.Is(err, syscall.ECONNREFUSED):
		why = "nothing listens there (connection refused): is the server running?"
	case errors.As(err, &certErr):
		why = "its TLS certificate is not valid for it: " + escape.String(certErr.Err.Error())
	case errors.As(err, &netErr) && netErr.Timeout():
		why = "no answer in time"
	default:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		why = escape.String(err.Error())
	}
	return fmt.Errorf("cannot reach %s: %s; check the server's url in mcp.hcl", escape.String(origin(u)), why)
}

// insufficientScope reports whether resp is a 403 that asks for more
// scope (RFC 6750, section 3.1): the one 403 a new authorization can
// help; any other is the server's refusal of the request.
func insufficientScope(resp *http.Response) bool {
	if resp.StatusCode != http.StatusForbidden {
		return false
	}
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// authorize sets the OAuth access token on req. No token source yet is no
// token: the server's 401 starts the handler's flow. A refresh the
// authorization server refuses (invalid_grant) is no token either, so
// that the 401 reaches the handler, which says to log in again.
func (h *httpLines) authorize(ctx context.Context, req *http.Request) error {
	if h.oauth == nil {
		return nil
	}
	ts, err := h.oauth.TokenSource(ctx)
	if err != nil {
		return fmt.Errorf("no OAuth token: %s", escape.String(err.Error()))
	}
	if ts == nil {
		return nil
	}
	tok, err := tokenBy(ctx, ts)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			return nil
		}
		if errors.As(err, &re) {
			// Never the body: an error page may echo the request's
			// form, refresh token and client secret included.
			why := "HTTP " + strconv.Itoa(re.Response.StatusCode)
			if re.ErrorCode != "" {
				why += ", error " + strconv.Quote(escape.String(re.ErrorCode))
			}
			return fmt.Errorf("the authorization server refused to refresh the OAuth token (%s)", why)
		}
		return fmt.Errorf("refreshing the OAuth token: %s", escape.String(err.Error()))
	}
	h.sent(tok.AccessToken)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return nil
}

// tokenBy is ts.Token within ctx: a token source that refreshes asks the
// authorization server, which may stall, and the request must not wait
// past its own deadline (the refresh goes on, bounded by its own).
func tokenBy(ctx context.Context, ts oauth2.TokenSource) (*oauth2.Token, error) {
	type result struct {
		tok *oauth2.Token
		err error
	}
	done := make(chan result, 1)
	go func() {
		tok, err := ts.Token()
		done <- result{tok, err}
	}()
	select {
	case r := <-done:
		return r.tok, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("no OAuth token in time: the authorization server did not answer the refresh (%w)", ctx.Err())
	}
}

func (h *httpLines) authHint(resp *http.Response) string {
	if h.oauth != nil {
		return ": the OAuth token was not accepted"
	}
	if h.bearer != "" {
		return ": the token in auth.bearer_env was not accepted"
	}
	if resp.Header.Get("WWW-Authenticate") != "" {
		return ": it needs authorization; set auth { bearer_env = \"NAME\" } for a static token"
	}
	return ""
}

// listen reads the server's own stream of a legacy session (a GET with
// the session id): its requests and notifications that belong to no
// request of mcpform's, such as a roots/list it sends after the handshake
// or a list_changed. A server without one answers 405. A stream that ends
// is opened again after the server's retry wait, from the last event id
// it named (Last-Event-ID), at most maxRelisten times in a row without an
// event. ctx ends with the session (startListen).
func (h *httpLines) listen(ctx context.Context) {
	var cur streamCursor
	for failures := 0; failures < maxRelisten && ctx.Err() == nil; failures++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.endpoint.String(), nil)
		if err != nil {
			return
		}
		h.setHeaders(req, "", "", "")
		req.Header.Set("Accept", "text/event-stream")
		if cur.lastID != "" {
			req.Header.Set("Last-Event-ID", cur.lastID)
		}
		if h.authorize(ctx, req) != nil {
			return
		}
		resp, err := h.client.Do(req)
		if err != nil {
			continue
		}
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
			resp.Body.Close()
			return // no stream of its own (405), or not one mcpform reads
		}
		events := 0
		h.scanStream(&io.LimitedReader{R: resp.Body, N: maxStreamBytes}, nil, func(msg []byte) { events++; h.emit(msg) }, &cur)
		resp.Body.Close()
		if events > 0 {
			failures = -1
		}
		select {
		case <-ctx.Done():
		case <-time.After(cur.wait()):
		}
	}
}

// maxRelisten bounds how often in a row listen opens a stream that brings
// nothing.
const maxRelisten = 5

// readStreamWith turns the events of an SSE stream into deliver's
// messages until the answer to id has come (the stream should end there),
// the stream ends, or it passes maxStreamBytes; fail gets what answers id
// with an error. It does not resume (readResumable does).
func (h *httpLines) readStreamWith(body io.Reader, id []byte, deliver func([]byte), fail func(string)) {
	if why, _ := h.scanStream(&io.LimitedReader{R: body, N: maxStreamBytes}, id, deliver, &streamCursor{}); why != "" {
		fail(why)
	}
}

// A legacy server may close a request's stream before its answer and
// send the rest on a GET that names the last event it sent (2025-11-25:
// resumability, and SEP-1699's polling, where a server sends an event id
// and a retry wait at once and then closes the connection). The
// 2026-07-28 transport has no resumption: a stream that ends there loses
// the request, and a Last-Event-ID must not be sent.
const (
	// defaultRetry is the wait before a resumption when the server
	// named none.
	defaultRetry = time.Second
	// maxRetry bounds the wait a server's retry field asks for.
	maxRetry = 30 * time.Second
	// maxResumes bounds the resumptions in a row that bring no message.
	maxResumes = 5
	// maxEventID bounds the length of an event id mcpform sends back.
	maxEventID = 256
)

// streamCursor is where a stream's events left it: the id of its last
// complete event with one (what a GET resumes from) and the wait the
// server asked for before reconnecting.
type streamCursor struct {
	lastID   string
	retry    time.Duration
	hasRetry bool
	pending  string // the id of the event being read, taken at its end
	idSeen   bool   // the event being read named an id (an empty one resets)
}

// wait is how long to wait before reconnecting.
func (c *streamCursor) wait() time.Duration {
	if c.hasRetry {
		return c.retry
	}
	return defaultRetry
}

// field takes an id: or retry: line's value. An id that is not visible
// ASCII within maxEventID bytes is ignored (it would go back in a header);
// so is a retry that is not a number (the SSE standard's rule).
func (c *streamCursor) field(name string, v []byte) {
	switch name {
	case "id":
		if len(v) == 0 || (len(v) <= maxEventID && visibleASCII(string(v))) {
			c.pending, c.idSeen = string(v), true
		}
	case "retry":
		if !allDigits(v) {
			return
		}
		c.retry, c.hasRetry = maxRetry, true
		if ms, err := strconv.Atoi(string(v)); err == nil && len(v) <= 9 {
			c.retry = min(time.Duration(ms)*time.Millisecond, maxRetry)
		}
	}
}

// dispatch ends an event: its id, if it named one, becomes the cursor.
func (c *streamCursor) dispatch() {
	if c.idSeen {
		c.lastID = c.pending
	}
	c.pending, c.idSeen = "", false
}

func allDigits(v []byte) bool {
	for _, b := range v {
		if b < '0' || b > '9' {
			return false
		}
	}
	return len(v) > 0
}

// readResumable is readStream for a request's POST stream: a stream that
// ends before the answer, after an event with an id, is resumed by a GET
// with Last-Event-ID (and the session id) after the server's retry wait,
// in a legacy era only. The request's streams together carry at most
// maxStreamBytes, and at most maxResumes resumptions in a row may bring
// no message; ctx (the request's) bounds the waits and the streams.
func (h *httpLines) readResumable(ctx context.Context, body io.Reader, id []byte, version string, deliver func([]byte)) {
	budget := &io.LimitedReader{R: body, N: maxStreamBytes}
	var cur streamCursor
	why, ended := h.scanStream(budget, id, deliver, &cur)
	if why == "" {
		return
	}
	if !ended || cur.lastID == "" || (version != "" && !isLegacyVersion(version)) {
		h.fail(id, why)
		return
	}
	for idle := 0; ; idle++ {
		if idle == maxResumes {
			h.fail(id, fmt.Sprintf("the server's stream ended before it answered, and the %d streams mcpform resumed since (GET with Last-Event-ID) ended with no message: given up; the server may have lost the request", maxResumes))
			return
		}
		select {
		case <-ctx.Done():
			h.fail(id, "the request was cancelled")
			return
		case <-time.After(cur.wait()):
		}
		resp, err := h.do(ctx, func() (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.endpoint.String(), nil)
			if err == nil {
				h.setHeaders(req, "", "", "")
				req.Header.Set("Accept", "text/event-stream")
				req.Header.Set("Last-Event-ID", cur.lastID)
			}
			return req, err
		})
		if err != nil {
			if h.ctx.Err() == nil {
				h.fail(id, "resuming the server's stream: "+err.Error())
			}
			return
		}
		if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
			resp.Body.Close()
			h.fail(id, fmt.Sprintf("the server's stream ended before it answered, and resuming it (GET with Last-Event-ID) was answered HTTP %d %s%s", resp.StatusCode, http.StatusText(resp.StatusCode), bodyExcerpt(h.redact(b))))
			return
		}
		delivered := false
		budget.R = resp.Body
		why, ended = h.scanStream(budget, id, func(msg []byte) { delivered = true; deliver(msg) }, &cur)
		resp.Body.Close()
		if why == "" {
			return
		}
		if !ended || cur.lastID == "" {
			h.fail(id, why)
			return
		}
		if delivered {
			idle = -1
		}
	}
}

// scanStream turns the events of one SSE stream, read from r, into
// deliver's messages until the answer to id has come: why is "" then,
// else what went wrong, and ended says the stream just ended (cleanly,
// within r's limit), the one end a stream may be resumed from. cur keeps
// the stream's event id and retry wait.
func (h *httpLines) scanStream(r *io.LimitedReader, id []byte, deliver func([]byte), cur *streamCursor) (why string, ended bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), h.maxLine+16)
	var data []byte
	for sc.Scan() {
		line := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		switch {
		case len(line) == 0:
			cur.dispatch()
			if len(data) > 0 {
				msg := data
				data = nil
				deliver(msg)
				if answers(msg, id) {
					return "", false
				}
			}
		case line[0] == ':':
			// a comment (keep-alive)
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if len(data)+len(v)+1 > h.maxLine {
				return fmt.Sprintf("an event of the server's stream is longer than %d bytes", h.maxLine), false
			}
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, v...)
		case bytes.HasPrefix(line, []byte("id:")):
			cur.field("id", bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("id:")), []byte(" ")))
		case bytes.HasPrefix(line, []byte("retry:")):
			cur.field("retry", bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("retry:")), []byte(" ")))
		}
		// event: carries nothing mcpform needs.
	}
	switch err := sc.Err(); {
	case h.ctx.Err() != nil:
		return "the request was cancelled", false
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Sprintf("a line of the server's stream is longer than %d bytes", h.maxLine), false
	case err != nil:
		return "reading the server's stream: " + err.Error(), false
	case r.N <= 0:
		return fmt.Sprintf("the server's stream passed %d MiB before it answered", maxStreamBytes>>20), false
	default:
		return "the server's stream ended before it answered", true
	}
}

// emit hands one message to the reader as a line of compact JSON.
func (h *httpLines) emit(msg []byte) {
	var b bytes.Buffer
	if err := json.Compact(&b, msg); err != nil {
		b.Reset()
		// The reader says what is wrong with it; no line break (nor a
		// CR, which some readers take for one) splits it.
		b.WriteString(strings.NewReplacer("\n", " ", "\r", " ").Replace(string(msg)))
	}
	b.WriteByte('\n')
	line := h.redact(b.Bytes())
	h.wmu.Lock()
	defer h.wmu.Unlock()
	h.w.Write(line)
}

// Codes of the errors httpLines answers a request with when the server's
// answer is not one: codeTransport for what no probe may go on from (a
// refused credential, a broken or oversized answer, a connection that
// failed), codeHTTPStatus for an HTTP error status, which is the server's
// refusal. The probe turns the first into a *TransportError.
const (
	codeTransport  = -32099
	codeHTTPStatus = -32098
)

// TransportError is a remote server's answer that was not one: mcpform
// could not reach the server, or refused what it sent.
type TransportError struct{ Msg string }

func (e *TransportError) Error() string { return e.Msg }

// AsTransportError returns the TransportError in err: a probe's, or the
// error answer httpLines gave a request (code -32099) when the server's
// answer was not one; nil for anything the server itself answered.
func AsTransportError(err error) *TransportError {
	var te *TransportError
	if errors.As(err, &te) {
		return te
	}
	var rpcErr *RPCError
	if errors.As(err, &rpcErr) && rpcErr.Code == codeTransport {
		return &TransportError{Msg: rpcErr.Message}
	}
	return nil
}

// fail answers the request id with a transport error (nothing when id is
// nil: a notification has no answer to carry it).
func (h *httpLines) fail(id []byte, why string) { h.failWith(id, codeTransport, why) }

func (h *httpLines) failWith(id []byte, code int, why string) {
	if id == nil {
		return
	}
	if _, ok := h.cancelled.LoadAndDelete(string(bytes.TrimSpace(id))); ok {
		return // cancelled by the client: nothing answers it
	}
	b := []byte(`{"jsonrpc":"2.0","id":`)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = AppendQuoted(b, string(h.redact([]byte(why))))
	h.emit(append(b, "}}"...))
}

// redact replaces the bearer token in what the server sent back (an
// error page that echoes the request's headers) before mcpform shows it.
func (h *httpLines) redact(b []byte) []byte {
	if h.bearer != "" {
		b = bytes.ReplaceAll(b, []byte(h.bearer), []byte("[the bearer token]"))
	}
	if ts := h.tokens.Load(); ts != nil {
		for _, t := range *ts {
			b = bytes.ReplaceAll(b, []byte(t), []byte("[the OAuth token]"))
		}
	}
	return b
}

// maxTokens is how many of the access tokens sent the connection keeps
// to redact: the current one and those it replaced, which a server may
// still echo.
const maxTokens = 8

// sent notes t as an access token sent, for redact.
func (h *httpLines) sent(t string) {
	old := h.tokens.Load()
	if old != nil && len(*old) > 0 && (*old)[len(*old)-1] == t {
		return
	}
	var ts []string
	if old != nil {
		ts = append(ts, *old...)
	}
	ts = append(ts, t)
	if len(ts) > maxTokens {
		ts = ts[len(ts)-maxTokens:]
	}
	h.tokens.Store(&ts)
}

// answers reports whether msg is a response to id.
func answers(msg, id []byte) bool {
	got := jsonscan.Find(msg, "id")
	return got != nil && jsonscan.Find(msg, "method") == nil && bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(id))
}

func bodyExcerpt(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return ": " + escape.String(s)
}

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func jsonString(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
