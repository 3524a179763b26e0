package egress

import "net/netip"

// internalPrefixes are the ranges a name may not resolve into unless the
// address is listed literally: the host itself, the local networks, and
// ranges that reach them indirectly. netip's IsLoopback, IsPrivate,
// IsLinkLocal*, IsMulticast and IsUnspecified cover the common cases; these
// are the rest (IANA special-purpose registries, RFC 6890).
var internalPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT, often a VPN or cloud-internal range
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and 255.255.255.255
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
}

// embedding6 are IPv6 ranges that carry an IPv4 address a gateway may
// forward to: the embedded address is checked as well.
var embedding6 = []struct {
	prefix netip.Prefix
	at     int // byte offset of the embedded IPv4 address
}{
	{netip.MustParsePrefix("::/96"), 12},          // IPv4-compatible (deprecated)
	{netip.MustParsePrefix("64:ff9b::/96"), 12},   // NAT64 well-known prefix
	{netip.MustParsePrefix("64:ff9b:1::/48"), 12}, // local-use NAT64
	{netip.MustParsePrefix("2002::/16"), 2},       // 6to4
}

// internalReason names why ip is not a public unicast address, or returns ""
// for an address the proxy may reach by name.
func internalReason(ip netip.Addr) string {
	ip = ip.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	switch {
	case !ip.IsValid():
		return "invalid address"
	case ip.Zone() != "":
		return "scoped address"
	case ip.IsUnspecified():
		return "unspecified address"
	case ip.IsLoopback():
		return "loopback address"
	case ip.IsPrivate():
		return "private address"
	case ip.IsLinkLocalUnicast():
		return "link-local address"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast address"
	}
	for _, p := range internalPrefixes {
		if p.Contains(ip) {
			return "reserved or special-purpose address (" + p.String() + ")"
		}
	}
	if ip.Is6() {
		b := ip.As16()
		for _, e := range embedding6 {
			if e.prefix.Contains(ip) {
				v4 := netip.AddrFrom4([4]byte(b[e.at : e.at+4]))
				if r := internalReason(v4); r != "" {
					return r + " embedded in " + e.prefix.String()
				}
			}
		}
		// Teredo (2001::/32) carries the client's IPv4 address obfuscated;
		// nothing public needs it.
		if netip.MustParsePrefix("2001::/32").Contains(ip) {
			return "Teredo address"
		}
	}
	return ""
}
