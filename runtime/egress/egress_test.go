package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// fakeResolver answers from a table, so tests can make a listed name
// resolve to loopback without touching DNS.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// events collects audit events.
type events struct {
	mu sync.Mutex
	ev []Event
}

func (e *events) add(ev Event) { e.mu.Lock(); e.ev = append(e.ev, ev); e.mu.Unlock() }
func (e *events) all() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Event(nil), e.ev...)
}

// startProxy serves a proxy on a loopback listener and returns its address.
func startProxy(t testing.TB, allow []string, r Resolver, audit func(Event)) (*Proxy, string) {
	t.Helper()
	p, err := New(allow, audit)
	if err != nil {
		t.Fatal(err)
	}
	p.Resolver = r
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(l) }()
	t.Cleanup(func() {
		p.Close()
		if err := <-done; err != ErrClosed {
			t.Errorf("Serve returned %v, want ErrClosed", err)
		}
	})
	return p, l.Addr().String()
}

// connect sends CONNECT target through the proxy and returns the status
// line and, on 200, the tunnel.
func connect(t testing.TB, proxy, target string) (string, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil {
		c.Close()
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		c.Close()
		return resp.Status + " " + strings.TrimSpace(string(body)), nil
	}
	return resp.Status, c
}

func TestPolicy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.Host)
	}))
	defer srv.Close()
	port := netip.MustParseAddrPort(srv.Listener.Addr().String()).Port()
	lo := netip.MustParseAddr("127.0.0.1")
	res := fakeResolver{
		"svc.example.com":    {lo},                                      // listed, resolves to a listed IP
		"public.example.com": {lo},                                      // listed, resolves to loopback (not listed on that port)
		"mixed.example.com":  {netip.MustParseAddr("10.0.0.1"), lo},     // every answer internal
		"mapped.example.com": {netip.MustParseAddr("::ffff:127.0.0.1")}, // IPv4-mapped loopback
		"nat64.example.com":  {netip.MustParseAddr("64:ff9b::7f00:1")},  // NAT64 form of loopback
		"cgnat.example.com":  {netip.MustParseAddr("100.64.1.1")},       // CGNAT
		"ll.example.com":     {netip.MustParseAddr("169.254.169.254")},  // cloud metadata
		"a.wild.example.com": {lo},
	}
	allow := []string{
		fmt.Sprintf("127.0.0.1:%d", port),
		fmt.Sprintf("svc.example.com:%d", port),
		"public.example.com:443",
		fmt.Sprintf("public.example.com:%d", port+1),
		fmt.Sprintf("mixed.example.com:%d", port),
		fmt.Sprintf("mapped.example.com:%d", port+1),
		fmt.Sprintf("nat64.example.com:%d", port+1),
		"cgnat.example.com:443",
		"ll.example.com:80",
		fmt.Sprintf("*.wild.example.com:%d", port),
	}
	var ev events
	_, proxy := startProxy(t, allow, res, ev.add)

	tests := []struct {
		target string
		ok     bool
	}{
		{fmt.Sprintf("127.0.0.1:%d", port), true},          // listed literally
		{fmt.Sprintf("svc.example.com:%d", port), true},    // listed name, listed IP
		{fmt.Sprintf("SVC.Example.COM.:%d", port), true},   // case and trailing dot
		{fmt.Sprintf("a.wild.example.com:%d", port), true}, // wildcard subdomain
		{fmt.Sprintf("wild.example.com:%d", port), false},  // wildcard never matches the apex
		{fmt.Sprintf("localhost:%d", port), false},
		{fmt.Sprintf("127.0.0.2:%d", port), false},
		{fmt.Sprintf("[::1]:%d", port), false},
		{fmt.Sprintf("[::ffff:127.0.0.2]:%d", port), false},
		{fmt.Sprintf("public.example.com:%d", port+1), false}, // resolves to loopback
		{fmt.Sprintf("mixed.example.com:%d", port), true},     // 127.0.0.1:port is listed; 10.0.0.1 skipped
		{fmt.Sprintf("mapped.example.com:%d", port+1), false},
		{fmt.Sprintf("nat64.example.com:%d", port+1), false},
		{"cgnat.example.com:443", false},
		{"ll.example.com:80", false},
		{fmt.Sprintf("svc.example.com:%d", port+1), false}, // wrong port
		{"unlisted.example.org:443", false},
		{fmt.Sprintf("2130706433:%d", port), false}, // 127.0.0.1 as a number
	}
	for _, tc := range tests {
		status, c := connect(t, proxy, tc.target)
		if (c != nil) != tc.ok {
			t.Errorf("CONNECT %s: %s, want allowed=%v", tc.target, status, tc.ok)
		}
		if c == nil {
			continue
		}
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		b, _ := io.ReadAll(c)
		c.Close()
		if !strings.Contains(string(b), "hello x") {
			t.Errorf("CONNECT %s: tunnel answered %q", tc.target, b)
		}
	}
	// Every connection, allowed or refused, reaches the audit.
	deadline := time.Now().Add(5 * time.Second)
	for len(ev.all()) < len(tests) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := ev.all()
	if len(got) != len(tests) {
		t.Fatalf("audit has %d events, want %d", len(got), len(tests))
	}
	for _, e := range got {
		if e.Allowed && (e.Addr != fmt.Sprintf("127.0.0.1:%d", port) || e.BytesUp == 0 || e.BytesDown == 0) {
			t.Errorf("allowed event lacks address or byte counts: %+v", e)
		}
		if !e.Allowed && (e.Reason == "" || e.Addr != "") {
			t.Errorf("refused event: %+v", e)
		}
	}
}

func TestForwardPlainHTTP(t *testing.T) {
	var gotHost, gotProxyAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHost, gotProxyAuth = r.Host, r.Header.Get("Proxy-Authorization")
		fmt.Fprintf(w, "path=%s", r.URL.RequestURI())
	}))
	defer srv.Close()
	var ev events
	_, proxy := startProxy(t, []string{srv.Listener.Addr().String()}, nil, ev.add)
	pu, _ := url.Parse("http://" + proxy)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	resp, err := client.Get(srv.URL + "/a/b?c=d")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "path=/a/b?c=d" {
		t.Errorf("body %q", b)
	}
	if gotHost != srv.Listener.Addr().String() || gotProxyAuth != "" {
		t.Errorf("origin saw Host %q, Proxy-Authorization %q", gotHost, gotProxyAuth)
	}
	// Refused: another port on the same host.
	resp, err = client.Get("http://127.0.0.1:1/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("unlisted plain request: %s", resp.Status)
	}
}

func TestBadHeads(t *testing.T) {
	var ev events
	_, proxy := startProxy(t, []string{"example.com:443"}, fakeResolver{}, ev.add)
	for _, tc := range []struct{ head, status string }{
		{"GET / HTTP/1.1\r\n\r\n", "400"},                    // origin form
		{"GET https://example.com/ HTTP/1.1\r\n\r\n", "400"}, // https must use CONNECT
		{"CONNECT example.com HTTP/1.1\r\n\r\n", "400"},      // no port
		{"CONNECT example.com:443 HTTP/1.1\r\nX : y\r\n\r\n", "400"},
		{"CONNECT example.com:443 HTTP/1.1\r\n folded\r\n\r\n", "400"},
		{"CONNECT example.com:443 HTTP/2.0\r\n\r\n", "400"},
		{"CONNECT example.com:443 HTTP/1.1\r\nX: " + strings.Repeat("a", MaxHeadBytes) + "\r\n\r\n", "431"},
		{"CONNECT user@example.com:443 HTTP/1.1\r\n\r\n", "400"},
	} {
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			t.Fatal(err)
		}
		go io.WriteString(c, tc.head)
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.HasPrefix(line, "HTTP/1.1 "+tc.status) {
			t.Errorf("%.60q: got %q, want %s", tc.head, line, tc.status)
		}
	}
}

func TestNewRejectsBadEntries(t *testing.T) {
	if _, err := New([]string{"example.com"}, func(Event) {}); err == nil {
		t.Error("entry without port accepted")
	}
	if _, err := New(nil, nil); err == nil {
		t.Error("nil audit accepted")
	}
}

func TestInternalReason(t *testing.T) {
	for ip, internal := range map[string]bool{
		"8.8.8.8": false, "2606:4700::1111": false, "::8.8.8.8": false,
		"127.0.0.1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true,
		"169.254.169.254": true, "100.64.0.1": true, "0.0.0.0": true, "255.255.255.255": true,
		"224.0.0.1": true, "::1": true, "::": true, "fe80::1": true, "fc00::1": true, "fd00::1": true,
		"ff02::1": true, "::ffff:10.0.0.1": true, "64:ff9b::a00:1": true, "2002:7f00:1::": true,
		"2001::1": true, "fec0::1": true,
	} {
		if got := internalReason(netip.MustParseAddr(ip)) != ""; got != internal {
			t.Errorf("internalReason(%s) internal=%v, want %v", ip, got, internal)
		}
	}
}

func TestConnectionLimit(t *testing.T) {
	var ev events
	_, proxy := startProxy(t, nil, fakeResolver{}, ev.add)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := 0; i < MaxConns; i++ {
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c) // sends no head: the proxy holds it open
	}
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 503") {
		t.Fatalf("connection over the limit got %q", line)
	}
}

// waitEvents waits until the audit holds n events and returns them.
func waitEvents(t *testing.T, ev *events, n int) []Event {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(ev.all()) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got := ev.all()
	if len(got) != n {
		t.Fatalf("audit has %d events, want %d", len(got), n)
	}
	return got
}

// countingConn counts the bytes read from a connection.
type countingConn struct {
	net.Conn
	n int64
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n += int64(n)
	return n, err
}

// TestForwardedRequestCountsBytesUp sends plain http:// requests through
// the proxy from a raw client connection to an origin that counts every
// byte it receives until the proxy closes: the audit's BytesUp must be
// that count (the rewritten head and the body, whether the body came with
// the head or after it), and BytesDown what the client received.
func TestForwardedRequestCountsBytesUp(t *testing.T) {
	origin, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer origin.Close()
	received := make(chan int64, 1)
	go func() {
		for {
			c, err := origin.Accept()
			if err != nil {
				return
			}
			cc := &countingConn{Conn: c}
			br := bufio.NewReader(cc)
			if req, err := http.ReadRequest(br); err == nil {
				io.Copy(io.Discard, req.Body)
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
			c.(*net.TCPConn).CloseWrite()
			io.Copy(io.Discard, br) // until the proxy ends its side
			c.Close()
			received <- cc.n
		}
	}()
	target := origin.Addr().String()
	var ev events
	_, proxy := startProxy(t, []string{target}, nil, ev.add)

	for i, tc := range []struct {
		name       string
		head, body string // body is sent in a second write
	}{
		{name: "GET", head: "GET http://" + target + "/x?y=1 HTTP/1.1\r\nHost: " + target + "\r\nUser-Agent: t\r\nProxy-Connection: keep-alive\r\n\r\n"},
		{name: "POST with the body after the head", head: "POST http://" + target + "/p HTTP/1.1\r\nContent-Length: 11\r\n\r\n", body: "hello world"},
		{name: "POST with the body in the head's write", head: "POST http://" + target + "/p HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"},
	} {
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, tc.head)
		if tc.body != "" {
			time.Sleep(20 * time.Millisecond) // past the proxy's head read
			io.WriteString(c, tc.body)
		}
		resp, err := io.ReadAll(c)
		c.Close()
		if err != nil || !strings.HasPrefix(string(resp), "HTTP/1.1 200 OK") {
			t.Fatalf("%s: client read %q, %v", tc.name, resp, err)
		}
		var up int64
		select {
		case up = <-received:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the origin never saw the proxy close", tc.name)
		}
		e := waitEvents(t, &ev, i+1)[i]
		if !e.Allowed || e.Method != tc.head[:strings.IndexByte(tc.head, ' ')] {
			t.Errorf("%s: event %+v", tc.name, e)
		}
		if up == 0 || e.BytesUp != up {
			t.Errorf("%s: audit BytesUp = %d, the origin received %d bytes", tc.name, e.BytesUp, up)
		}
		if e.BytesDown != int64(len(resp)) {
			t.Errorf("%s: audit BytesDown = %d, the client received %d bytes", tc.name, e.BytesDown, len(resp))
		}
	}
}

// TestMalformedRequestRecordsWhatWasReceived sends malformed requests from
// a raw client connection and checks that the audit records the method and
// destination the client sent, escaped and bounded, with a reason.
func TestMalformedRequestRecordsWhatWasReceived(t *testing.T) {
	var ev events
	_, proxy := startProxy(t, []string{"example.com:443"}, fakeResolver{}, ev.add)
	long := strings.Repeat("A", 5000)
	for i, tc := range []struct {
		send         string
		method, host string
		port         uint16
		reason       string
	}{
		{send: "G\x1bET\x00 http://a\x1b[31mb/ HTTP/1.1\r\n\r\n",
			method: `"G\x1bET\x00"`, host: `"http://a\x1b[31mb/"`, reason: "control character 0x1b"},
		{send: "CONNECT example.com HTTP/1.1\r\n\r\n", method: "CONNECT", host: "example.com", reason: "CONNECT target"},
		{send: "CONNECT Example.COM:443 HTTP/1.1\r\nX : y\r\n\r\n", method: "CONNECT", host: "example.com", port: 443, reason: "malformed header field"},
		{send: "GET / HTTP/1.1\r\n\r\n", method: "GET", host: "/", reason: "not an absolute http:// URI"},
		{send: "GET http://Example.com:8080/x HTTP/2.0\r\n\r\n", method: "GET", host: "example.com", port: 8080, reason: "unsupported protocol"},
		{send: "GET http://a@example.com/ HTTP/1.1\r\n\r\n", method: "GET", host: "http://a@example.com/", reason: "userinfo"},
		{send: long + " " + long + " HTTP/1.1\r\n\r\n",
			method: strconv.Quote(long[:64] + "…"), host: strconv.Quote(long[:64] + "…"), reason: "not an absolute http:// URI"},
		{send: "CONNECT example.com:443 HTTP/1.1\r\nX: " + strings.Repeat("a", MaxHeadBytes) + "\r\n\r\n",
			method: "CONNECT", host: "example.com", port: 443, reason: "exceeds 16 KiB"},
		{send: "CONNECT evil\u202e\x1b]0;title\x07:443", method: "CONNECT", host: `"evil\u202e\x1b]0;title\a:443"`, reason: "closed before the request head ended"},
		{send: "\xff\xfe\"x\" \\y", method: `"\xff\xfe\"x\""`, host: `"\\y"`, reason: "closed before the request head ended"},
		{send: "", reason: "closed before the request head ended"},
	} {
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		go func() {
			io.WriteString(c, tc.send)
			c.(*net.TCPConn).CloseWrite()
		}()
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.HasPrefix(line, "HTTP/1.1 4") {
			t.Errorf("%.40q: proxy answered %q", tc.send, line)
		}
		e := waitEvents(t, &ev, i+1)[i]
		if e.Allowed || e.Method != tc.method || e.Host != tc.host || e.Port != tc.port || e.Addr != "" {
			t.Errorf("%.40q: recorded method %s host %s port %d allowed %v addr %q, want %s %s %d",
				tc.send, e.Method, e.Host, e.Port, e.Allowed, e.Addr, tc.method, tc.host, tc.port)
		}
		if !strings.HasPrefix(e.Reason, "bad request: ") || !strings.Contains(e.Reason, tc.reason) {
			t.Errorf("%.40q: reason %q, want one about %q", tc.send, e.Reason, tc.reason)
		}
		for _, field := range []string{e.Method, e.Host, e.Reason} {
			if len(field) > 300 {
				t.Errorf("%.40q: recorded field of %d bytes", tc.send, len(field))
			}
			for _, r := range field {
				if r < 0x20 || r == 0x7f || r == '\u202e' || r == utf8.RuneError {
					t.Errorf("%.40q: recorded field %q holds %U raw", tc.send, field, r)
				}
			}
		}
	}
}
