package egress

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// MaxHeadBytes bounds a request head (request line and headers, with the
// blank line that ends them). A sandboxed server controls these bytes, so
// the proxy never buffers more than this before deciding.
const MaxHeadBytes = 16 << 10

// maxHeaders bounds the number of header fields in a head.
const maxHeaders = 100

// errHeadTooLarge is returned when no blank line ends the head within
// MaxHeadBytes.
var errHeadTooLarge = errors.New("request head exceeds 16 KiB")

// header is one field of a request head, as received.
type header struct {
	Name, Value string
}

// requestHead is a parsed proxy request: either CONNECT host:port
// (authority-form) or an absolute-form http:// request to forward.
type requestHead struct {
	Method string
	// Host is a lower-case DNS name or an IP literal without brackets.
	Host string
	Port uint16
	// Path is the origin-form target (path and query) of a forwarded request;
	// empty for CONNECT.
	Path    string
	Proto   string // "HTTP/1.0" or "HTTP/1.1"
	Headers []header
}

// headEnd returns the length of the head in buf (through its terminating
// CRLF CRLF), or -1 when buf holds no complete head yet.
func headEnd(buf []byte) int {
	i := bytes.Index(buf, []byte("\r\n\r\n"))
	if i < 0 {
		return -1
	}
	return i + 4
}

// parseRequestHead parses a complete request head (as delimited by headEnd).
// It is strict on purpose (RFC 9112): CRLF line endings only, a single SP
// between the three parts of the request line, no obsolete line folding, no
// whitespace before a field's colon, token characters in methods and field
// names, and no control characters anywhere. What it does not understand it
// refuses rather than guesses, so the proxy and the origin can never
// disagree about where the request goes.
func parseRequestHead(b []byte) (requestHead, error) {
	var h requestHead
	if len(b) > MaxHeadBytes {
		return h, errHeadTooLarge
	}
	s := string(b)
	if !strings.HasSuffix(s, "\r\n\r\n") {
		return h, errors.New("request head does not end with an empty line")
	}
	lines := strings.Split(s[:len(s)-4], "\r\n")
	for _, l := range lines {
		for i := 0; i < len(l); i++ {
			if c := l[i]; c < 0x20 && c != '\t' || c == 0x7f {
				return h, fmt.Errorf("request head has control character %#02x", c)
			}
		}
	}
	method, rest, ok1 := strings.Cut(lines[0], " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || strings.Contains(proto, " ") {
		return h, fmt.Errorf("malformed request line %q", truncate(lines[0]))
	}
	if !isToken(method) {
		return h, fmt.Errorf("malformed method %q", truncate(method))
	}
	if proto != "HTTP/1.1" && proto != "HTTP/1.0" {
		return h, fmt.Errorf("unsupported protocol %q", truncate(proto))
	}
	h.Method, h.Proto = method, proto
	if len(lines)-1 > maxHeaders {
		return h, fmt.Errorf("request head has more than %d header fields", maxHeaders)
	}
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if !ok || !isToken(name) {
			// A leading SP or HTAB is obsolete line folding; a space before
			// the colon is how request smuggling starts (RFC 9112 5.1).
			return h, fmt.Errorf("malformed header field %q", truncate(l))
		}
		h.Headers = append(h.Headers, header{Name: name, Value: strings.Trim(value, " \t")})
	}
	var err error
	if method == "CONNECT" {
		h.Host, h.Port, err = splitAuthority(target)
		if err != nil {
			return h, fmt.Errorf("CONNECT target %q: %w", truncate(target), err)
		}
		return h, nil
	}
	// Anything but CONNECT must name its destination in absolute form
	// (RFC 9112 3.2.2); the proxy forwards only plain http.
	const scheme = "http://"
	if len(target) < len(scheme) || !strings.EqualFold(target[:len(scheme)], scheme) {
		return h, fmt.Errorf("request target %q is not an absolute http:// URI (use CONNECT for https)", truncate(target))
	}
	authority, path := target[len(scheme):], "/"
	if i := strings.IndexAny(authority, "/?#"); i >= 0 {
		authority, path = authority[:i], authority[i:]
		if path[0] == '?' {
			path = "/" + path
		}
		if j := strings.IndexByte(path, '#'); j >= 0 {
			return h, fmt.Errorf("request target %q has a fragment", truncate(target))
		}
	}
	if strings.Contains(authority, "@") {
		return h, fmt.Errorf("request target %q has userinfo", truncate(target))
	}
	h.Host, h.Port, err = splitAuthorityDefault(authority, 80)
	if err != nil {
		return h, fmt.Errorf("request target %q: %w", truncate(target), err)
	}
	for i := 0; i < len(path); i++ {
		if path[i] <= ' ' || path[i] >= 0x7f {
			return h, fmt.Errorf("request target %q has a byte %#02x that must be escaped", truncate(target), path[i])
		}
	}
	h.Path = path
	return h, nil
}

// splitAuthority splits host:port (port required) as CONNECT carries it.
func splitAuthority(a string) (string, uint16, error) {
	return splitAuthorityDefault(a, 0)
}

// splitAuthorityDefault splits host[:port]; def is the port when none is
// written, 0 meaning one is required. IPv6 literals are bracketed; the host
// is returned without brackets, IP literals canonicalized and names
// lower-cased without a trailing dot.
func splitAuthorityDefault(a string, def uint16) (string, uint16, error) {
	host, portStr := a, ""
	if strings.HasPrefix(a, "[") {
		end := strings.IndexByte(a, ']')
		if end < 0 {
			return "", 0, errors.New("unclosed \"[\"")
		}
		host = a[1:end]
		switch rest := a[end+1:]; {
		case rest == "":
		case rest[0] == ':':
			portStr = rest[1:]
			if portStr == "" {
				return "", 0, errors.New("empty port")
			}
		default:
			return "", 0, errors.New("junk after \"]\"")
		}
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", 0, fmt.Errorf("%q is not an IPv6 address", host)
		}
		host = ip.String()
	} else {
		if i := strings.LastIndexByte(a, ':'); i >= 0 {
			host, portStr = a[:i], a[i+1:]
			if portStr == "" {
				return "", 0, errors.New("empty port")
			}
		}
		if strings.Contains(host, ":") {
			return "", 0, errors.New("an IPv6 address must be in brackets")
		}
		if ip, err := netip.ParseAddr(host); err == nil {
			host = ip.String()
		} else {
			host = strings.TrimSuffix(strings.ToLower(host), ".")
			if !isHostName(host) {
				return "", 0, fmt.Errorf("%q is not a host name", truncate(host))
			}
		}
	}
	port := def
	if portStr != "" {
		n, err := strconv.ParseUint(portStr, 10, 16)
		if err != nil || n == 0 || portStr[0] < '0' || portStr[0] > '9' {
			return "", 0, fmt.Errorf("port %q is not a number from 1 to 65535", truncate(portStr))
		}
		port = uint16(n)
	}
	if port == 0 {
		return "", 0, errors.New("no port")
	}
	return host, port, nil
}

// isHostName accepts letters, digits, '-', '_' and '.' in labels of 1 to
// 63 bytes, at most 253 bytes in all: what policy.ParseHostPort accepts, so
// anything else can never match an allow entry anyway.
func isHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// isToken reports whether s is a non-empty RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// received reads, for the audit, the method and destination of a request
// the proxy refused as malformed, from the bytes the client sent. The
// destination is the checked host and port when the target yields them as
// parseRequestHead would read them (the fault was elsewhere in the head),
// and otherwise the target itself, escaped, with port 0.
func received(b []byte) (method, host string, port uint16) {
	line := b
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimSuffix(line, []byte("\r"))
	m, rest, _ := bytes.Cut(line, []byte(" "))
	t, _, _ := bytes.Cut(rest, []byte(" "))
	method, target := escaped(string(m)), string(t)
	const scheme = "http://"
	switch {
	case string(m) == "CONNECT":
		if h, p, err := splitAuthority(target); err == nil {
			return method, h, p
		}
	case len(target) >= len(scheme) && strings.EqualFold(target[:len(scheme)], scheme):
		authority := target[len(scheme):]
		if i := strings.IndexAny(authority, "/?#"); i >= 0 {
			authority = authority[:i]
		}
		if h, p, err := splitAuthorityDefault(authority, 80); err == nil && !strings.Contains(authority, "@") {
			return method, h, p
		}
	}
	return method, escaped(target), 0
}

// escaped renders untrusted text for the audit: as it is when it is plain
// printable ASCII (no space, quote or backslash), Go-quoted otherwise, and
// cut by truncate first, so a record is bounded and never carries a control
// character or a lookalike of another field.
func escaped(s string) string {
	s = truncate(s)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return strconv.Quote(s)
		}
	}
	return s
}

// truncate keeps error messages about hostile input short.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
