package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpform/mcpform/internal/mutation"
	"github.com/mcpform/mcpform/policy"
)

// Timeouts. A tunnel itself has no idle timeout: MCP servers hold
// long-lived streams (SSE, websockets) open on purpose, and the tunnel only
// reaches a destination the policy lists.
const (
	// HeadTimeout bounds how long a client may take to send its request head.
	HeadTimeout = 10 * time.Second
	// DialTimeout bounds name resolution plus connecting to the destination.
	DialTimeout = 10 * time.Second
	// MaxConns bounds a server's simultaneous connections through the proxy,
	// so a hostile server cannot exhaust mcpform's memory or descriptors.
	// Connections over the limit are refused (503) and audited.
	MaxConns = 256
)

// ErrClosed is returned by Serve after Close.
var ErrClosed = errors.New("egress proxy closed")

// Event is one connection through the proxy, allowed or refused, as the
// audit log records it. It is reported once, when the connection ends.
type Event struct {
	Time time.Time // when the connection was accepted
	// Method is CONNECT or the method of a forwarded http:// request, and
	// Host the destination as requested: a lower-case name or an IP literal.
	// For a request the proxy could not parse, they hold what the client's
	// request line carried (Host the whole target when no host and port can
	// be read from it, Port then 0), each cut to 64 bytes and Go-quoted
	// unless it is plain printable ASCII: the client is untrusted.
	Method string
	Host   string
	Port   uint16
	// Addr is the address the proxy connected to ("ip:port"), empty when it
	// did not connect.
	Addr string
	// Allowed reports the policy's decision. An allowed connection that
	// then failed (no address, connection refused) has a Reason too.
	Allowed bool
	// Reason says why a connection was refused or failed; empty otherwise.
	Reason string
	// BytesUp counts what the proxy sent the destination: for a forwarded
	// http:// request its rewritten head and everything after it; for
	// CONNECT, the tunnel (the CONNECT head is answered, not forwarded).
	BytesUp   int64
	BytesDown int64 // destination to client
	Duration  time.Duration
}

// Resolver looks up a name's addresses; *net.Resolver implements it. Tests
// substitute their own.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Proxy is the audited egress proxy of one sandboxed server: an HTTP proxy
// that handles CONNECT host:port and absolute-form http:// requests, and
// reaches only the host:port entries it was built with.
//
// Matching rules, in order:
//   - a literal IP target must be listed literally with its port;
//   - a name must match an entry with its port ("*.example.com:443" matches
//     api.example.com and a.b.example.com, never example.com itself);
//   - the proxy resolves a listed name itself and connects only to an
//     address it resolved (no second lookup by anyone), skipping loopback,
//     private, link-local, multicast, unspecified, CGNAT and other
//     special-purpose addresses (also inside IPv4-mapped, NAT64 and 6to4
//     forms) unless that address is itself listed literally with the port.
type Proxy struct {
	// Resolver resolves names; nil means net.DefaultResolver. Set it before
	// Serve.
	Resolver Resolver

	allow []policy.HostPort
	audit func(Event)

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	active    atomic.Int32
	wg        sync.WaitGroup
}

// New returns a proxy that allows exactly the entries in allow (each as
// policy.ParseHostPort accepts it; an empty list allows nothing) and calls
// audit, which must be safe for concurrent use, once per connection.
func New(allow []string, audit func(Event)) (*Proxy, error) {
	if audit == nil {
		return nil, errors.New("creating egress proxy: an audit function is required")
	}
	p := &Proxy{
		audit:     audit,
		listeners: map[net.Listener]struct{}{},
		conns:     map[net.Conn]struct{}{},
	}
	for _, a := range allow {
		hp, err := policy.ParseHostPort(a)
		if err != nil {
			return nil, fmt.Errorf("creating egress proxy: allow entry: %w", err)
		}
		p.allow = append(p.allow, hp)
	}
	return p, nil
}

// Serve accepts connections on l until Close, each one a proxy request. It
// returns ErrClosed after Close, or the error that stopped accepting.
func (p *Proxy) Serve(l net.Listener) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	p.listeners[l] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.listeners, l)
		p.mu.Unlock()
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if closed {
				return ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return fmt.Errorf("egress proxy: accepting: %w", err)
		}
		if !p.track(c, true) {
			c.Close()
			return ErrClosed
		}
		if p.active.Add(1) > MaxConns {
			p.active.Add(-1)
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				defer p.track(c, false)
				defer c.Close()
				reason := fmt.Sprintf("more than %d simultaneous connections", MaxConns)
				p.audit(Event{Time: time.Now(), Reason: reason})
				reply(c, "503 Service Unavailable", reason)
			}()
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.active.Add(-1)
			defer p.track(c, false)
			p.handle(c)
		}()
	}
}

// Close stops every Serve, closes every open connection and waits for
// their audit events to be reported.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for l := range p.listeners {
		l.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}

// track adds or removes an open connection; it refuses to add after Close.
func (p *Proxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !add {
		delete(p.conns, c)
		return true
	}
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

// handle serves one client connection: one request, then a tunnel.
func (p *Proxy) handle(c net.Conn) {
	defer c.Close()
	ev := Event{Time: time.Now()}
	defer func() {
		ev.Duration = time.Since(ev.Time)
		p.audit(ev)
	}()

	c.SetReadDeadline(time.Now().Add(HeadTimeout))
	head, buffered, err := readHead(c)
	if err != nil {
		ev.Method, ev.Host, ev.Port = received(buffered)
		ev.Reason = "bad request: " + err.Error()
		status := "400 Bad Request"
		if errors.Is(err, errHeadTooLarge) {
			status = "431 Request Header Fields Too Large"
		}
		reply(c, status, ev.Reason)
		return
	}
	c.SetReadDeadline(time.Time{})
	ev.Method, ev.Host, ev.Port = head.Method, head.Host, head.Port

	ctx, cancel := context.WithTimeout(context.Background(), DialTimeout)
	up, addr, err := p.dial(ctx, head.Host, head.Port)
	cancel()
	if err != nil {
		var r refusal
		if errors.As(err, &r) {
			ev.Reason = string(r)
			reply(c, "403 Forbidden", ev.Reason)
		} else {
			ev.Allowed = true
			ev.Reason = err.Error()
			reply(c, "502 Bad Gateway", ev.Reason)
		}
		return
	}
	ev.Allowed, ev.Addr = true, addr
	if !p.track(up, true) {
		up.Close()
		ev.Reason = "proxy closed"
		return
	}
	defer p.track(up, false)
	defer up.Close()

	if head.Method == "CONNECT" {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			ev.Reason = "writing reply: " + err.Error()
			return
		}
	} else {
		// One request per connection: the origin is told to close, and every
		// later byte on this connection goes to the same checked address.
		n, err := io.WriteString(up, originHead(head))
		ev.BytesUp = int64(n)
		if err != nil {
			ev.Reason = "forwarding request: " + err.Error()
			return
		}
	}
	upBytes, downBytes := splice(c, up, buffered)
	ev.BytesUp += upBytes
	ev.BytesDown = downBytes
}

// refusal is a policy decision, as opposed to a network failure.
type refusal string

func (r refusal) Error() string { return string(r) }

// dial applies the policy to host:port and connects to the first permitted
// address. It returns the connection and the "ip:port" it reached.
func (p *Proxy) dial(ctx context.Context, host string, port uint16) (net.Conn, string, error) {
	if mutation.Off("egress") {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(int(port))))
		if err != nil {
			return nil, "", err
		}
		return c, c.RemoteAddr().String(), nil
	}
	var candidates []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		if !p.listedAddr(ip, port) {
			return nil, "", refusal(fmt.Sprintf("%s is not listed in network.allow", net.JoinHostPort(host, strconv.Itoa(int(port)))))
		}
		candidates = []netip.Addr{ip.Unmap()}
	} else {
		listed := false
		for _, a := range p.allow {
			if a.MatchName(host, port) {
				listed = true
				break
			}
		}
		if !listed {
			return nil, "", refusal(fmt.Sprintf("%s:%d is not listed in network.allow", host, port))
		}
		r := p.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		addrs, err := r.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, "", fmt.Errorf("resolving %s: %w", host, err)
		}
		var why []string
		for _, ip := range addrs {
			ip = ip.Unmap()
			if reason := internalReason(ip); reason != "" && !p.listedAddr(ip, port) {
				why = append(why, ip.String()+" is a "+reason)
				continue
			}
			candidates = append(candidates, ip)
		}
		if len(candidates) == 0 {
			if len(why) == 0 {
				return nil, "", fmt.Errorf("resolving %s: no addresses", host)
			}
			return nil, "", refusal(fmt.Sprintf("%s resolves only to addresses that are not listed: %s", host, strings.Join(why, "; ")))
		}
	}
	var d net.Dialer
	var lastErr error
	for _, ip := range candidates {
		addr := netip.AddrPortFrom(ip, port).String()
		// Dial the resolved address itself: nothing downstream resolves the
		// name again, so a DNS answer cannot change between check and use.
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c, addr, nil
		}
		lastErr = err
	}
	return nil, "", fmt.Errorf("connecting to %s:%d: %w", host, port, lastErr)
}

// listedAddr reports whether ip:port is listed literally.
func (p *Proxy) listedAddr(ip netip.Addr, port uint16) bool {
	for _, a := range p.allow {
		if a.MatchAddr(ip, port) {
			return true
		}
	}
	return false
}

// readHead reads one request head, never more than MaxHeadBytes, and returns
// it parsed with any bytes the client sent after it. On an error the bytes
// are everything the client sent, for the audit.
func readHead(c net.Conn) (requestHead, []byte, error) {
	buf := make([]byte, 0, 4096)
	tmp := make([]byte, 4096)
	for {
		if n := headEnd(buf); n >= 0 {
			h, err := parseRequestHead(buf[:n])
			if err != nil {
				return h, buf, err
			}
			return h, buf[n:], nil
		}
		if len(buf) >= MaxHeadBytes {
			return requestHead{}, buf, errHeadTooLarge
		}
		n, err := c.Read(tmp[:min(len(tmp), MaxHeadBytes-len(buf))])
		buf = append(buf, tmp[:n]...)
		if err != nil {
			if n := headEnd(buf); n >= 0 {
				h, perr := parseRequestHead(buf[:n])
				if perr != nil {
					return h, buf, perr
				}
				return h, buf[n:], nil
			}
			if errors.Is(err, io.EOF) {
				return requestHead{}, buf, errors.New("connection closed before the request head ended")
			}
			return requestHead{}, buf, fmt.Errorf("reading request head: %w", err)
		}
	}
}

// hopByHop are the headers a proxy must not forward (RFC 9110 7.6.1), plus
// Host, which the proxy writes itself from the checked target.
var hopByHop = map[string]bool{
	"connection": true, "proxy-connection": true, "keep-alive": true,
	"proxy-authorization": true, "proxy-authenticate": true, "te": true,
	"trailer": true, "upgrade": true, "host": true,
}

// originHead rewrites a forwarded request to origin form for the checked
// destination.
func originHead(h requestHead) string {
	var b strings.Builder
	b.WriteString(h.Method + " " + h.Path + " " + h.Proto + "\r\n")
	host := h.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if h.Port != 80 {
		host += ":" + strconv.Itoa(int(h.Port))
	}
	b.WriteString("Host: " + host + "\r\n")
	drop := map[string]bool{}
	for _, f := range h.Headers {
		if strings.EqualFold(f.Name, "Connection") {
			for _, n := range strings.Split(f.Value, ",") {
				drop[strings.ToLower(strings.TrimSpace(n))] = true
			}
		}
	}
	for _, f := range h.Headers {
		n := strings.ToLower(f.Name)
		if hopByHop[n] || drop[n] {
			continue
		}
		b.WriteString(f.Name + ": " + f.Value + "\r\n")
	}
	b.WriteString("Connection: close\r\n\r\n")
	return b.String()
}

// reply writes a short plain-text error response.
func reply(c net.Conn, status, msg string) {
	body := "mcpform egress: " + msg + "\n"
	c.SetWriteDeadline(time.Now().Add(HeadTimeout))
	fmt.Fprintf(c, "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", status, len(body), body)
}

// splice copies both ways until both directions end, half-closing each side
// as its source finishes, and returns the bytes moved each way.
func splice(client, up net.Conn, buffered []byte) (upBytes, downBytes int64) {
	var wg sync.WaitGroup
	var up64, down64 atomic.Int64
	wg.Add(2)
	go func() {
		defer wg.Done()
		if len(buffered) > 0 {
			n, err := up.Write(buffered)
			up64.Add(int64(n))
			if err != nil {
				up.Close()
				return
			}
		}
		n, err := io.Copy(up, client)
		up64.Add(n)
		finish(up, client, err)
	}()
	go func() {
		defer wg.Done()
		n, err := io.Copy(client, up)
		down64.Add(n)
		finish(client, up, err)
	}()
	wg.Wait()
	return up64.Load(), down64.Load()
}

// finish ends one direction of a tunnel: after a clean end of input it
// half-closes dst, so the peer sees EOF and may still answer; after an error
// it closes both sides, so the other direction cannot hang on a dead peer.
func finish(dst, src net.Conn, err error) {
	if err != nil {
		dst.Close()
		src.Close()
		return
	}
	closeWrite(dst)
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}
