package egress

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseRequestHead(t *testing.T) {
	for _, tc := range []struct {
		in         string
		host, path string
		port       uint16
		err        bool
	}{
		{in: "CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n", host: "api.github.com", port: 443},
		{in: "CONNECT [::1]:8443 HTTP/1.1\r\n\r\n", host: "::1", port: 8443},
		{in: "CONNECT 10.0.0.5:8080 HTTP/1.0\r\n\r\n", host: "10.0.0.5", port: 8080},
		{in: "GET http://Example.COM/x?y HTTP/1.1\r\nHost: evil\r\n\r\n", host: "example.com", port: 80, path: "/x?y"},
		{in: "POST http://example.com:8080?q HTTP/1.1\r\n\r\n", host: "example.com", port: 8080, path: "/?q"},
		{in: "GET http://example.com HTTP/1.1\r\n\r\n", host: "example.com", port: 80, path: "/"},
		{in: "CONNECT api.github.com:0443 HTTP/1.1\r\n\r\n", host: "api.github.com", port: 443},
		{in: "CONNECT api.github.com:443 HTTP/1.1\n\n", err: true},
		{in: "CONNECT api.github.com:443  HTTP/1.1\r\n\r\n", err: true},
		{in: "CONNECT api.github.com:+443 HTTP/1.1\r\n\r\n", err: true},
		{in: "CONNECT api.github.com:65536 HTTP/1.1\r\n\r\n", err: true},
		{in: "CONNECT api.github.com: HTTP/1.1\r\n\r\n", err: true},
		{in: "CONNECT ::1:443 HTTP/1.1\r\n\r\n", err: true},
		{in: "CONNECT [fe80::1%eth0]:443 HTTP/1.1\r\n\r\n", err: true},
		{in: "CONNECT a\x00b:443 HTTP/1.1\r\n\r\n", err: true},
		{in: "CONNECT a b:443 HTTP/1.1\r\n\r\n", err: true},
		{in: "GET http://a@b/ HTTP/1.1\r\n\r\n", err: true},
		{in: "GET http://b/#f HTTP/1.1\r\n\r\n", err: true},
		{in: "GET ftp://b/ HTTP/1.1\r\n\r\n", err: true},
		{in: "G(T http://b/ HTTP/1.1\r\n\r\n", err: true},
		{in: "CONNECT b:1 HTTP/1.1\r\nA\r\n\r\n", err: true},
	} {
		h, err := parseRequestHead([]byte(tc.in))
		if (err != nil) != tc.err {
			t.Errorf("%q: err %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if err == nil && (h.Host != tc.host || h.Port != tc.port || h.Path != tc.path) {
			t.Errorf("%q: got %q %d %q", tc.in, h.Host, h.Port, h.Path)
		}
	}
}

// FuzzParseRequestHead checks that the parser never panics and that what it
// accepts is something the proxy can act on unambiguously: a CONNECT with a
// host and port, or an absolute http:// request with an origin-form path,
// a host that survives a re-parse unchanged, and no control characters in
// the rewritten head it would send to the origin.
func FuzzParseRequestHead(f *testing.F) {
	f.Add([]byte("CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n"))
	f.Add([]byte("GET http://example.com/x HTTP/1.1\r\nHost: example.com\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseRequestHead(b)
		if err != nil {
			return
		}
		if h.Host == "" || h.Port == 0 {
			t.Fatalf("accepted %q with host %q port %d", b, h.Host, h.Port)
		}
		authority := h.Host
		if strings.Contains(authority, ":") {
			authority = "[" + authority + "]"
		}
		host, port, err := splitAuthority(authority + ":" + itoa(h.Port))
		if err != nil || host != h.Host || port != h.Port {
			t.Fatalf("host %q port %d does not round-trip: %q %d %v", h.Host, h.Port, host, port, err)
		}
		if h.Method == "CONNECT" {
			if h.Path != "" {
				t.Fatalf("CONNECT with path %q", h.Path)
			}
			return
		}
		if !strings.HasPrefix(h.Path, "/") {
			t.Fatalf("path %q is not origin-form", h.Path)
		}
		out := originHead(h)
		if headEnd([]byte(out)) != len(out) {
			t.Fatalf("rewritten head %q ends early or late", out)
		}
		for i := 0; i < len(out); i++ {
			if c := out[i]; (c < 0x20 && c != '\r' && c != '\n' && c != '\t') || c == 0x7f {
				t.Fatalf("rewritten head has control byte %#02x: %q", c, out)
			}
		}
	})
}

// FuzzReceived checks what the audit records of a request the proxy could
// not parse: bounded, valid UTF-8 with no control or format characters, the
// method exactly the bytes sent (cut to 64) once unquoted, and a host with
// a port only when it is one the parser itself would have read.
func FuzzReceived(f *testing.F) {
	f.Add([]byte("G\x1bET\x00 http://a\x1b[31mb/ HTTP/1.1\r\n\r\n"))
	f.Add([]byte("CONNECT Example.COM:443 HTTP/1.1\r\nX : y\r\n\r\n"))
	f.Add([]byte("GET http://[::1]:8080/x HTTP/2.0\r\n\r\n"))
	f.Add([]byte("\xff\xfe\"x\" \\y\u202e"))
	f.Fuzz(func(t *testing.T, b []byte) {
		method, host, port := received(b)
		for _, field := range []string{method, host} {
			if len(field) > 4*64+len("…")+2 || !utf8.ValidString(field) {
				t.Fatalf("recorded field %q is unbounded or not UTF-8", field)
			}
			for _, r := range field {
				if !strconv.IsPrint(r) {
					t.Fatalf("recorded field %q holds %U raw", field, r)
				}
			}
		}
		line, _, _ := bytes.Cut(b, []byte("\n"))
		sent, _, _ := bytes.Cut(bytes.TrimSuffix(line, []byte("\r")), []byte(" "))
		got := method
		if u, err := strconv.Unquote(method); err == nil && strings.HasPrefix(method, `"`) {
			got = u
		}
		if got != truncate(string(sent)) {
			t.Fatalf("method %q does not read back as the %q sent", method, sent)
		}
		if port != 0 {
			authority := host
			if strings.Contains(authority, ":") {
				authority = "[" + authority + "]"
			}
			if h, p, err := splitAuthority(authority + ":" + itoa(port)); err != nil || h != host || p != port {
				t.Fatalf("host %q port %d is not one the parser reads back: %v", host, port, err)
			}
		}
	})
}

func itoa(p uint16) string {
	var b [5]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + p%10)
		p /= 10
		if p == 0 {
			return string(b[i:])
		}
	}
}
