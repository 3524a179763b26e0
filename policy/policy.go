package policy

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Policy is the part of a lock entry written by the user, never by the
// server: a sandbox, taint labels, what run does on drift and what it
// exposes. Its JSON form is the "policy" object of an mcp.lock entry.
type Policy struct {
	Taint   *Taint   `json:"taint,omitempty"`
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// OnDrift is one of DriftModes; "" is DriftQuarantine (and is how
	// lang writes it, so the lock of a server that does not set it is the
	// same as before on_drift existed).
	OnDrift string `json:"onDrift,omitempty"`
	// Expose is nil when every locked item is exposed.
	Expose *Expose `json:"expose,omitempty"`
}

// Taint names the tools whose results may carry attacker-controlled text
// (sources) and the tools whose calls have consequences (sinks).
type Taint struct {
	Sources []string `json:"sources"`
	Sinks   []string `json:"sinks"`
}

// Sandbox is what a sandboxed server may touch.
type Sandbox struct {
	Filesystem Filesystem `json:"filesystem"`
	Network    Network    `json:"network"`
	// Limits are the resource limits; nil means DefaultLimits.
	Limits *Limits `json:"limits,omitempty"`
}

// Filesystem lists the paths a sandboxed server may read, and read and write,
// beyond its runtime base and private ${TMP}.
type Filesystem struct {
	Read  []string `json:"read"`
	Write []string `json:"write"`
}

// Network lists the host:port destinations a sandboxed server may reach
// through the egress proxy. An empty list means no network at all.
type Network struct {
	Allow []string `json:"allow"`
}

// Wildcards for taint sources that stand for every read of a kind.
const (
	AllResources = "resources:*"
	AllPrompts   = "prompts:*"
)

// IsEmpty reports whether p carries no policy at all.
func (p *Policy) IsEmpty() bool {
	return p == nil || (p.Taint == nil && p.Sandbox == nil && p.OnDrift == "" && p.Expose == nil)
}

// Check reports the first taint name that is not a tool in tools (or,
// for sources, one of the wildcards). The error names the list and the label.
func (t *Taint) Check(isTool func(string) bool) error {
	if t == nil {
		return nil
	}
	for _, s := range t.Sources {
		if s == AllResources || s == AllPrompts {
			continue
		}
		if !isTool(s) {
			return fmt.Errorf("taint source %q is not a locked tool (nor %q or %q)", s, AllResources, AllPrompts)
		}
	}
	for _, s := range t.Sinks {
		if !isTool(s) {
			return fmt.Errorf("taint sink %q is not a locked tool", s)
		}
	}
	return nil
}

// Placeholders that stay unexpanded in mcp.lock and are expanded by run.
const (
	homePrefix = "~/"
	TmpVar     = "${TMP}"
)

// CheckPath reports whether p is a sandbox path as mcp.lock stores it:
// absolute, "~/…" or "${TMP}"/"${TMP}/…", with no ".." element, no empty
// element and no other "${" placeholder.
func CheckPath(p string) error {
	var rest string
	switch {
	case p == TmpVar:
		return nil
	case strings.HasPrefix(p, TmpVar+"/"):
		rest = p[len(TmpVar)+1:]
	case strings.HasPrefix(p, homePrefix):
		rest = p[len(homePrefix):]
	case strings.HasPrefix(p, "/"):
		rest = p[1:]
	case p == "~":
		return fmt.Errorf("path %q is the home directory itself; name a directory inside it", p)
	default:
		return fmt.Errorf("path %q is relative; use an absolute path, ~/… or ${TMP}/…", p)
	}
	if strings.Contains(p, "\x00") {
		return fmt.Errorf("path %q contains a NUL byte", p)
	}
	if strings.Contains(rest, "${") {
		return fmt.Errorf("path %q has a placeholder other than a leading ${TMP}", p)
	}
	if rest == "" {
		return nil
	}
	for _, el := range strings.Split(strings.TrimSuffix(rest, "/"), "/") {
		switch el {
		case "..":
			return fmt.Errorf("path %q contains \"..\"; write the path it stands for", p)
		case "", ".":
			return fmt.Errorf("path %q is not clean; write it without empty or \".\" elements", p)
		}
	}
	return nil
}

// ExpandPath turns a stored sandbox path into an absolute one, given the
// user's home directory and the server's private temporary directory.
func ExpandPath(p, home, tmp string) string {
	switch {
	case p == TmpVar:
		return tmp
	case strings.HasPrefix(p, TmpVar+"/"):
		return tmp + p[len(TmpVar):]
	case strings.HasPrefix(p, homePrefix):
		return strings.TrimSuffix(home, "/") + "/" + p[len(homePrefix):]
	}
	return p
}

// HostPort is one parsed network.allow entry.
type HostPort struct {
	// Host is a lower-case DNS name, or the suffix after "*." when Wildcard is
	// set; empty when Addr is set.
	Host string
	// Wildcard marks "*.suffix": it matches every name under suffix, not the
	// suffix itself.
	Wildcard bool
	// Addr is set for a literal IPv4 or [IPv6] entry.
	Addr netip.Addr
	Port uint16
}

// String returns the entry in its canonical written form.
func (h HostPort) String() string {
	port := strconv.Itoa(int(h.Port))
	switch {
	case h.Addr.IsValid() && h.Addr.Is6():
		return "[" + h.Addr.String() + "]:" + port
	case h.Addr.IsValid():
		return h.Addr.String() + ":" + port
	case h.Wildcard:
		return "*." + h.Host + ":" + port
	}
	return h.Host + ":" + port
}

// MatchName reports whether the DNS name host on port is allowed by h.
// Names compare case-insensitively; a trailing dot is ignored.
func (h HostPort) MatchName(host string, port uint16) bool {
	if port != h.Port || h.Addr.IsValid() {
		return false
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if h.Wildcard {
		return strings.HasSuffix(host, "."+h.Host) && len(host) > len(h.Host)+1
	}
	return host == h.Host
}

// MatchAddr reports whether the literal address ip on port is listed by h.
func (h HostPort) MatchAddr(ip netip.Addr, port uint16) bool {
	return port == h.Port && h.Addr.IsValid() && h.Addr == ip.Unmap()
}

// ParseHostPort parses a network.allow entry: "host:port", "*.suffix:port",
// an IPv4 "a.b.c.d:port" or "[IPv6]:port", with a port from 1 to 65535.
func ParseHostPort(s string) (HostPort, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return HostPort{}, fmt.Errorf("%q has no port; write host:port, for example \"api.github.com:443\"", s)
	}
	host, portStr := s[:i], s[i+1:]
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 || portStr[0] == '0' || portStr[0] == '+' {
		return HostPort{}, fmt.Errorf("%q has port %q; a port is a number from 1 to 65535", s, portStr)
	}
	hp := HostPort{Port: uint16(port)}
	switch {
	case strings.HasPrefix(host, "["):
		if !strings.HasSuffix(host, "]") {
			return HostPort{}, fmt.Errorf("%q has an unclosed \"[\"; write an IPv6 address as [::1]:port", s)
		}
		a, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil || !a.Is6() || a.Zone() != "" || a.Is4In6() {
			return HostPort{}, fmt.Errorf("%q: %q is not an IPv6 address", s, host)
		}
		hp.Addr = a
		return hp, nil
	case strings.Contains(host, ":"):
		return HostPort{}, fmt.Errorf("%q: write an IPv6 address in brackets, as [::1]:port", s)
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Is4() {
		hp.Addr = a
		return hp, nil
	}
	if strings.HasPrefix(host, "*.") {
		hp.Wildcard = true
		host = host[2:]
	}
	if err := checkDNSName(host); err != nil {
		return HostPort{}, fmt.Errorf("%q: %v", s, err)
	}
	if looksNumeric(host) {
		return HostPort{}, fmt.Errorf("%q: %q is neither a dotted IPv4 address nor a DNS name", s, host)
	}
	hp.Host = strings.ToLower(host)
	return hp, nil
}

// checkDNSName accepts LDH names of up to 253 bytes with labels of 1 to 63
// bytes (underscores allowed, as in service names).
func checkDNSName(h string) error {
	if h == "" {
		return fmt.Errorf("the host is empty")
	}
	if len(h) > 253 {
		return fmt.Errorf("the host is longer than 253 bytes")
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("%q is not a valid DNS name (empty or over-long label)", h)
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("%q is not a valid DNS name (label starts or ends with \"-\")", h)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				if c == '*' {
					return fmt.Errorf("%q: a wildcard is allowed only as a leading \"*.\"", h)
				}
				return fmt.Errorf("%q is not a valid DNS name (character %q)", h, c)
			}
		}
	}
	return nil
}

// looksNumeric reports whether every label is digits, as in "1.2.3" or
// "999.1.1.1": a mistyped address, not a name.
func looksNumeric(h string) bool {
	for _, label := range strings.Split(h, ".") {
		for i := 0; i < len(label); i++ {
			if label[i] < '0' || label[i] > '9' {
				return false
			}
		}
	}
	return true
}

// Normalized returns a copy of p whose lists are never nil, so that its JSON
// form always has lists ([]) where the format expects them, never null.
func (p *Policy) Normalized() *Policy {
	if p == nil {
		return nil
	}
	nn := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	out := &Policy{OnDrift: p.OnDrift, Expose: p.Expose}
	if p.Taint != nil {
		out.Taint = &Taint{Sources: nn(p.Taint.Sources), Sinks: nn(p.Taint.Sinks)}
	}
	if p.Sandbox != nil {
		out.Sandbox = &Sandbox{
			Filesystem: Filesystem{Read: nn(p.Sandbox.Filesystem.Read), Write: nn(p.Sandbox.Filesystem.Write)},
			Network:    Network{Allow: nn(p.Sandbox.Network.Allow)},
			Limits:     p.Sandbox.Limits,
		}
	}
	return out
}

// WithRead is p with dir added to its sandbox's read list: a copy, so the
// declared policy (and the lock's) is left as it was. A policy without a
// sandbox is returned as it is. mcpform grants a server the read of its
// own pinned code this way (an npm tree in mcpform's cache).
func (p *Policy) WithRead(dir string) *Policy {
	if p == nil || p.Sandbox == nil {
		return p
	}
	out, sb := *p, *p.Sandbox
	sb.Filesystem.Read = append(slices.Clip(sb.Filesystem.Read), dir)
	out.Sandbox = &sb
	return &out
}
