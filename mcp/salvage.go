package mcp

import "regexp"

// AnswerIDs returns the ids that a line the decoder refused (malformed,
// nested too deep, a batch, or over the cap: then head and tail are its
// first and last bytes) names as a response's, read without trusting the
// line: the "id" member at the top level of an object, found by walking the
// members from the start as far as they are well-formed, or the one that
// ends the line (`,"id":7}` last: SDKs that write the result first); for a
// batch, each element's. A proxy answers the requests so named at once
// instead of letting them wait for an answer that was dropped. At most
// maxAnswerIDs ids.
func AnswerIDs(head, tail []byte) []ID {
	var ids []ID
	add := func(raw []byte) {
		if id, ok := parseID(raw); ok && len(ids) < maxAnswerIDs {
			ids = append(ids, id)
		}
	}
	i := skipSpace(head, 0)
	switch {
	case i < len(head) && head[i] == '{':
		raw, request := topLevelID(head, i)
		if request {
			return nil // a request's id is the server's own, not an answer's
		}
		if raw != nil {
			add(raw)
		}
	case i < len(head) && head[i] == '[':
		for j := skipSpace(head, i+1); j < len(head) && head[j] == '{' && len(ids) < maxAnswerIDs; {
			if raw, request := topLevelID(head, j); raw != nil && !request {
				add(raw)
			}
			end, ok := skipJSON(head, j)
			if !ok {
				break
			}
			j = skipSpace(head, end)
			if j >= len(head) || head[j] != ',' {
				break
			}
			j = skipSpace(head, j+1)
		}
	}
	if len(ids) == 0 {
		if m := lastID.FindSubmatch(tail); m != nil {
			add(m[1])
		}
	}
	return ids
}

// maxAnswerIDs bounds what one refused line can answer.
const maxAnswerIDs = 64

// lastID is an "id" member that ends an object that ends the line.
var lastID = regexp.MustCompile(`[{,][ \t]*"id"[ \t]*:[ \t]*(-?[0-9]{1,20}|"(?:[^"\\\x00-\x1f]|\\.){0,256}")[ \t]*\}[ \t\r]*$`)

// topLevelID walks the members of the object at b[i] ('{') and returns
// the raw value of its "id" member, as far as the members are well-formed
// (nil when none is found before they stop), and whether the object has a
// "method" member among them: then it is a request, whose id is no answer's.
func topLevelID(b []byte, i int) (id []byte, request bool) {
	j := skipSpace(b, i+1)
	for j < len(b) && b[j] == '"' {
		keyEnd, ok := skipJSON(b, j)
		if !ok {
			return id, false
		}
		key := b[j:keyEnd]
		j = skipSpace(b, keyEnd)
		if j >= len(b) || b[j] != ':' {
			return id, false
		}
		j = skipSpace(b, j+1)
		valEnd, ok := skipJSON(b, j)
		if !ok {
			return id, false
		}
		switch string(key) {
		case `"id"`:
			id = b[j:valEnd]
		case `"method"`:
			return nil, true
		}
		j = skipSpace(b, valEnd)
		if j >= len(b) || b[j] != ',' {
			return id, false
		}
		j = skipSpace(b, j+1)
	}
	return id, false
}

// skipJSON returns the end of the JSON value at b[i], and false when b ends
// first or the value is not well-formed enough to skip. Nesting is counted,
// not recursed into, so depth costs nothing.
func skipJSON(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, true
			}
		}
		return len(b), false
	case c == '{' || c == '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, ok := skipJSON(b, j)
				if !ok {
					return len(b), false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return len(b), false
	case c == '-' || c >= '0' && c <= '9' || c == 't' || c == 'f' || c == 'n':
		j := i
		for j < len(b) && (b[j] == '-' || b[j] == '+' || b[j] == '.' || b[j] >= '0' && b[j] <= '9' || b[j] >= 'a' && b[j] <= 'z' || b[j] == 'E') {
			j++
		}
		return j, j < len(b)
	}
	return i, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}
