package approval

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// AllowedSigner is one line of an allowed_signers file, git's and
// ssh-keygen's format (ssh-keygen(1), "ALLOWED SIGNERS"):
//
//	principals [options] keytype base64-key [comment]
//
// principals is a comma-separated pattern list (*, ? and a leading !);
// the options mcpform reads are namespaces="…", valid-after="…" and
// valid-before="…". cert-authority lines are refused: mcpform verifies
// signatures by plain keys only.
type AllowedSigner struct {
	// Line is the line's number in its file, for messages.
	Line int
	// Principals are the line's patterns, in order.
	Principals []string
	// Key is the signer's public key and Fingerprint its SHA256
	// fingerprint (as ssh-keygen -l prints it).
	Key         ssh.PublicKey
	Fingerprint string
	// Namespaces, when non-nil, are the namespaces the key may sign in
	// (patterns); a lock's signature needs Namespace among them.
	Namespaces []string
	// ValidAfter and ValidBefore bound when the key's signatures count;
	// zero for no bound.
	ValidAfter, ValidBefore time.Time
}

// maxAllowedSigners bounds an allowed_signers file.
const maxAllowedSigners = 1 << 20

// ParseAllowedSigners reads an allowed_signers file. Blank lines and lines
// starting with # are skipped; any other line that does not parse is an
// error naming its number (a trust file is refused whole, never read in
// part).
func ParseAllowedSigners(data []byte) ([]AllowedSigner, error) {
	if len(data) > maxAllowedSigners {
		return nil, fmt.Errorf("larger than %d bytes", maxAllowedSigners)
	}
	var out []AllowedSigner
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxAllowedSigners)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseAllowedLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		s.Line = n
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func parseAllowedLine(line string) (AllowedSigner, error) {
	var s AllowedSigner
	principals, rest, err := firstField(line)
	if err != nil {
		return s, err
	}
	for _, p := range strings.Split(principals, ",") {
		if p == "" || p == "!" {
			return s, fmt.Errorf("empty principal in %q", principals)
		}
		s.Principals = append(s.Principals, p)
	}
	key, _, options, _, err := ssh.ParseAuthorizedKey([]byte(rest))
	if err != nil {
		return s, fmt.Errorf("no public key after the principals: %w", err)
	}
	if _, ok := key.(*ssh.Certificate); ok {
		return s, errors.New("a certificate is not a signer's key")
	}
	s.Key, s.Fingerprint = key, ssh.FingerprintSHA256(key)
	for _, opt := range options {
		name, value, hasValue := strings.Cut(opt, "=")
		switch strings.ToLower(name) {
		case "cert-authority":
			return s, errors.New("cert-authority is not supported: list each signer's key")
		case "namespaces":
			v, err := unquoteOption(name, value, hasValue)
			if err != nil {
				return s, err
			}
			s.Namespaces = strings.Split(v, ",")
		case "valid-after", "valid-before":
			v, err := unquoteOption(name, value, hasValue)
			if err != nil {
				return s, err
			}
			t, err := parseSSHTime(v)
			if err != nil {
				return s, fmt.Errorf("%s: %w", name, err)
			}
			if name == "valid-after" {
				s.ValidAfter = t
			} else {
				s.ValidBefore = t
			}
		default:
			return s, fmt.Errorf("unknown option %q", name)
		}
	}
	return s, nil
}

// firstField splits the principals (which may be quoted) from the rest.
func firstField(line string) (field, rest string, err error) {
	if line[0] == '"' {
		end := strings.IndexByte(line[1:], '"')
		if end < 0 {
			return "", "", errors.New("unterminated quoted principals")
		}
		return line[1 : end+1], strings.TrimSpace(line[end+2:]), nil
	}
	i := strings.IndexAny(line, " \t")
	if i < 0 {
		return "", "", errors.New("principals without a key")
	}
	return line[:i], strings.TrimSpace(line[i:]), nil
}

func unquoteOption(name, value string, hasValue bool) (string, error) {
	if !hasValue || len(value) < 2 || value[0] != '"' || value[len(value)-1] != '"' {
		return "", fmt.Errorf("option %s needs a quoted value", name)
	}
	return value[1 : len(value)-1], nil
}

// parseSSHTime reads ssh-keygen's YYYYMMDD[HHMM[SS]] with an optional Z
// for UTC (without it, the local time zone, as ssh-keygen reads it).
func parseSSHTime(v string) (time.Time, error) {
	loc := time.Local
	if strings.HasSuffix(v, "Z") || strings.HasSuffix(v, "z") {
		v, loc = v[:len(v)-1], time.UTC
	}
	layouts := map[int]string{8: "20060102", 12: "200601021504", 14: "20060102150405"}
	layout, ok := layouts[len(v)]
	if !ok {
		return time.Time{}, fmt.Errorf("%q is not YYYYMMDD[HHMM[SS]][Z]", v)
	}
	return time.ParseInLocation(layout, v, loc)
}

// admits reports whether the line lets principal sign with its key in
// mcpform's namespace (the time bounds are checked apart, since a key out
// of its validity makes a signature invalid, not merely uncounted).
func (s *AllowedSigner) admits(principal string) bool {
	if s.Namespaces != nil && !matchList(s.Namespaces, Namespace) {
		return false
	}
	return matchList(s.Principals, principal)
}

// validAt reports whether t is inside the line's validity.
func (s *AllowedSigner) validAt(t time.Time) bool {
	return (s.ValidAfter.IsZero() || !t.Before(s.ValidAfter)) && (s.ValidBefore.IsZero() || t.Before(s.ValidBefore))
}

// matchList matches s against an ssh pattern list: true when a pattern
// matches and no negated (!) pattern does.
func matchList(patterns []string, s string) bool {
	matched := false
	for _, p := range patterns {
		if neg, ok := strings.CutPrefix(p, "!"); ok {
			if matchPattern(neg, s) {
				return false
			}
			continue
		}
		if matchPattern(p, s) {
			matched = true
		}
	}
	return matched
}

// matchPattern is ssh's wildcard match: * any run of characters, ? one.
// It backtracks only to the last star, so it is linear in practice
// whatever the pattern.
func matchPattern(p, s string) bool {
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi, si = pi+1, si+1
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			mark++
			pi, si = star+1, mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
