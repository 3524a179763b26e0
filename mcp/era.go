package mcp

import "fmt"

// Era is the protocol era a server is spoken to in: the legacy initialize
// handshake, or 2026-07-28 where every request carries its version in _meta.
type Era int

const (
	// EraAuto detects the era with server/discover first (see Probe).
	EraAuto Era = iota
	// EraLegacy forces the initialize handshake.
	EraLegacy
	// EraModern forces 2026-07-28.
	EraModern
)

// ModernVersion is the one modern protocol version mcpform speaks.
const ModernVersion = "2026-07-28"

// LatestLegacyVersion is what mcpform asks for in initialize.
const LatestLegacyVersion = "2025-11-25"

// LegacyVersions are the initialize-era versions a server may answer with,
// newest first.
var LegacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// String returns the spelling ParseEra accepts: "auto", "legacy" or
// "2026-07-28".
func (e Era) String() string {
	switch e {
	case EraAuto:
		return "auto"
	case EraLegacy:
		return "legacy"
	case EraModern:
		return ModernVersion
	}
	return fmt.Sprintf("Era(%d)", int(e))
}

// ParseEra parses "auto", "legacy" or "2026-07-28" (the values of
// mcp.hcl's protocol attribute).
func ParseEra(s string) (Era, error) {
	switch s {
	case "auto":
		return EraAuto, nil
	case "legacy":
		return EraLegacy, nil
	case ModernVersion:
		return EraModern, nil
	}
	return EraAuto, fmt.Errorf("unknown protocol era %q: want \"auto\", \"legacy\" or %q", s, ModernVersion)
}

// isLegacyVersion reports whether v is one of LegacyVersions.
func isLegacyVersion(v string) bool {
	for _, l := range LegacyVersions {
		if v == l {
			return true
		}
	}
	return false
}
