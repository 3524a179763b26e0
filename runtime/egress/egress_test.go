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
	"strings"
	"sync"
	"testing"
	"time"
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
