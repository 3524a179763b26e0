package policy

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestParseHostPort(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{in: "api.github.com:443", want: "api.github.com:443"},
		{in: "API.GitHub.com:443", want: "api.github.com:443"},
		{in: "*.example.com:443", want: "*.example.com:443"},
		{in: "10.0.0.5:8080", want: "10.0.0.5:8080"},
		{in: "[::1]:9000", want: "[::1]:9000"},
		{in: "[2001:DB8::1]:1", want: "[2001:db8::1]:1"},
		{in: "host_name.internal:65535", want: "host_name.internal:65535"},
		{in: "api.github.com", err: "has no port"},
		{in: "api.github.com:0", err: "from 1 to 65535"},
		{in: "api.github.com:65536", err: "from 1 to 65535"},
		{in: "api.github.com:080", err: "from 1 to 65535"},
		{in: "api.github.com:+80", err: "from 1 to 65535"},
		{in: "api.github.com:https", err: "from 1 to 65535"},
		{in: ":443", err: "the host is empty"},
		{in: "::1:443", err: "in brackets"},
		{in: "[::1:443", err: "unclosed"},
		{in: "[1.2.3.4]:443", err: "is not an IPv6 address"},
		{in: "[::ffff:1.2.3.4]:443", err: "is not an IPv6 address"},
		{in: "[fe80::1%eth0]:443", err: "is not an IPv6 address"},
		{in: "a.*.com:443", err: "wildcard is allowed only as a leading"},
		{in: "*:443", err: "wildcard is allowed only as a leading"},
		{in: "999.1.1.1:80", err: "neither a dotted IPv4 address nor a DNS name"},
		{in: "1.2.3:80", err: "neither a dotted IPv4"},
		{in: "-bad.com:80", err: "starts or ends with"},
		{in: "bad..com:80", err: "empty or over-long label"},
		{in: "sp ace.com:80", err: "character"},
		{in: strings.Repeat("a", 64) + ".com:80", err: "over-long label"},
	}
	for _, tt := range tests {
		hp, err := ParseHostPort(tt.in)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseHostPort(%q) = %v, %v; want an error containing %q", tt.in, hp, err, tt.err)
			}
		case err != nil:
			t.Errorf("ParseHostPort(%q): %v", tt.in, err)
		case hp.String() != tt.want:
			t.Errorf("ParseHostPort(%q) = %s, want %s", tt.in, hp, tt.want)
		}
	}
}

func TestMatch(t *testing.T) {
	wild, _ := ParseHostPort("*.example.com:443")
	exact, _ := ParseHostPort("api.github.com:443")
	ip, _ := ParseHostPort("127.0.0.1:8080")
	tests := []struct {
		hp   HostPort
		host string
		port uint16
		want bool
	}{
		{wild, "a.example.com", 443, true},
		{wild, "a.b.example.com", 443, true},
		{wild, "example.com", 443, false}, // the apex is not a subdomain
		{wild, "evilexample.com", 443, false},
		{wild, "a.example.com", 80, false},
		{exact, "API.github.com.", 443, true},
		{exact, "api.github.com.evil.com", 443, false},
		{ip, "127.0.0.1", 8080, false}, // a literal entry matches addresses, not names
	}
	for _, tt := range tests {
		if got := tt.hp.MatchName(tt.host, tt.port); got != tt.want {
			t.Errorf("%s.MatchName(%q, %d) = %v, want %v", tt.hp, tt.host, tt.port, got, tt.want)
		}
	}
	if !ip.MatchAddr(netip.MustParseAddr("::ffff:127.0.0.1"), 8080) {
		t.Error("an IPv4-mapped address must match its IPv4 entry")
	}
	if ip.MatchAddr(netip.MustParseAddr("127.0.0.2"), 8080) || exact.MatchAddr(netip.MustParseAddr("127.0.0.1"), 443) {
		t.Error("MatchAddr matched an unlisted address")
	}
}

func TestCheckPath(t *testing.T) {
	for _, ok := range []string{"/srv/data", "~/notes", "${TMP}", "${TMP}/work", "/"} {
		if err := CheckPath(ok); err != nil {
			t.Errorf("CheckPath(%q) = %v", ok, err)
		}
	}
	for p, want := range map[string]string{
		"notes":         "relative",
		"./notes":       "relative",
		"~":             "home directory itself",
		"~user/x":       "relative",
		"/srv/../etc":   `".."`,
		"~/a/../../etc": `".."`,
		"${TMP}/../x":   `".."`,
		"/srv//data":    "not clean",
		"/srv/./data":   "not clean",
		"/srv/${HOME}":  "placeholder",
		"${HOME}/x":     "relative",
		"/srv/a\x00b":   "NUL",
		"$TMP/x":        "relative",
		"${TMP}x":       "relative",
	} {
		if err := CheckPath(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckPath(%q) = %v, want an error containing %q", p, err, want)
		}
	}
}

func TestExpandPath(t *testing.T) {
	for in, want := range map[string]string{
		"~/notes":     "/home/u/notes",
		"${TMP}":      "/tmp/x",
		"${TMP}/work": "/tmp/x/work",
		"/srv":        "/srv",
	} {
		if got := ExpandPath(in, "/home/u/", "/tmp/x"); got != want {
			t.Errorf("ExpandPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTaintCheck(t *testing.T) {
	tools := map[string]bool{"fetch": true, "send": true}
	isTool := func(s string) bool { return tools[s] }
	ok := &Taint{Sources: []string{"fetch", "resources:*", "prompts:*"}, Sinks: []string{"send", "fetch"}}
	if err := ok.Check(isTool); err != nil {
		t.Errorf("Check = %v", err)
	}
	if err := (&Taint{Sinks: []string{"resources:*"}}).Check(isTool); err == nil {
		t.Error("a wildcard is not a sink")
	}
	if err := (&Taint{Sources: []string{"fecth"}}).Check(isTool); err == nil || !strings.Contains(err.Error(), `"fecth"`) {
		t.Errorf("a misspelled source: %v", err)
	}
}

// FuzzParseHostPort: whatever parses must print back to a form that parses
// to the same entry.
func FuzzParseHostPort(f *testing.F) {
	for _, s := range []string{"api.github.com:443", "*.example.com:1", "[::1]:9000", "10.0.0.5:8080", "a:b:c", "[::ffff:1.2.3.4]:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hp, err := ParseHostPort(s)
		if err != nil {
			return
		}
		again, err := ParseHostPort(hp.String())
		if err != nil || again != hp {
			t.Fatalf("ParseHostPort(%q) = %v, but its String %q parses to %v, %v", s, hp, hp.String(), again, err)
		}
	})
}

// TestWithReadCopies: WithRead adds a read path to a copy, never to the
// policy it was given (the lock's), and leaves a policy without a sandbox
// as it is.
func TestWithReadCopies(t *testing.T) {
	declared := &Policy{Sandbox: &Sandbox{Filesystem: Filesystem{Read: make([]string, 1, 4), Write: []string{"/w"}}}}
	declared.Sandbox.Filesystem.Read[0] = "/r"
	got := declared.WithRead("/cache/entry")
	if want := []string{"/r", "/cache/entry"}; !slices.Equal(got.Sandbox.Filesystem.Read, want) {
		t.Errorf("WithRead: read = %q, want %q", got.Sandbox.Filesystem.Read, want)
	}
	if !slices.Equal(declared.Sandbox.Filesystem.Read, []string{"/r"}) || declared.Sandbox.Filesystem.Read[:2][1] != "" {
		t.Errorf("WithRead changed the declared policy: %q", declared.Sandbox.Filesystem.Read[:2])
	}
	if got.Sandbox == declared.Sandbox || !slices.Equal(got.Sandbox.Filesystem.Write, []string{"/w"}) {
		t.Errorf("WithRead: sandbox not copied, or write list lost: %+v", got.Sandbox)
	}
	bare := &Policy{}
	if bare.WithRead("/x") != bare || (*Policy)(nil).WithRead("/x") != nil {
		t.Error("WithRead of a policy without a sandbox is not the policy itself")
	}
}
