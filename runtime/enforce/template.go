package enforce

import "strings"

// matchTemplate matches uri against an RFC 6570 template of level 1
// ({var}: unreserved characters and percent-escapes only, so no "/") plus
// the reserved expansion {+var} of level 2, which servers use for paths
// and which may hold "/" but no dot-segment ("." or ".." between slashes):
// a template for one directory must not reach another.
func matchTemplate(tmpl, uri string) bool {
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			return tmpl == uri
		}
		if !strings.HasPrefix(uri, tmpl[:i]) {
			return false
		}
		uri = uri[i:]
		tmpl = tmpl[i+1:]
		j := strings.IndexByte(tmpl, '}')
		if j < 0 {
			return false
		}
		expr := tmpl[:j]
		tmpl = tmpl[j+1:]
		reserved := strings.HasPrefix(expr, "+")
		if strings.ContainsAny(expr, ",*:#./;?&=") || (reserved && strings.Contains(expr[1:], "+")) {
			return false // beyond what the proxy understands: refuse
		}
		// The value runs to the next literal part of the template (or the
		// end); values are matched shortest first against each possible
		// end, so "{a}-{b}" works.
		next := tmpl
		if k := strings.IndexByte(next, '{'); k >= 0 {
			next = next[:k]
		}
		for end := 0; end <= len(uri); end++ {
			v := uri[:end]
			if end > 0 && !validValue(v[end-1:], reserved) {
				return false
			}
			if strings.HasPrefix(uri[end:], next) && (next != "" || strings.IndexByte(tmpl, '{') >= 0 || end == len(uri)) {
				if end > 0 && !dotFree(v) {
					continue
				}
				if matchTemplate(tmpl, uri[end:]) {
					return true
				}
			}
		}
		return false
	}
}

func validValue(s string, reserved bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("-._~%", c) >= 0:
		case reserved && strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func dotFree(v string) bool {
	for _, seg := range strings.Split(v, "/") {
		if seg == "." || seg == ".." || strings.EqualFold(seg, "%2e%2e") || strings.EqualFold(seg, ".%2e") || strings.EqualFold(seg, "%2e.") || strings.EqualFold(seg, "%2e") {
			return false
		}
	}
	return true
}
