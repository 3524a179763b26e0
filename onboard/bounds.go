package onboard

import "fmt"

// Bounds on a client's file before any parser reads it: far above any real
// configuration (a few KiB, nested a handful of levels), low enough that a
// hostile or corrupted file cannot make the recursive JSON parser take
// unbounded memory or stack.
const (
	maxClientFileBytes = 4 << 20
	maxClientNesting   = 256
)

// checkBounds refuses a client file over maxClientFileBytes, or nested deeper
// than maxClientNesting objects and arrays, saying where. It scans as JWCC
// reads: brackets inside strings and comments do not count.
func checkBounds(data []byte) error {
	if len(data) > maxClientFileBytes {
		return fmt.Errorf("the file is %d bytes, over the %d a client configuration may have: is it the right file?", len(data), maxClientFileBytes)
	}
	depth, line := 0, 1
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			line++
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				switch data[i] {
				case '\\':
					i++
				case '\n':
					line++
				}
			}
		case '/':
			if i+1 >= len(data) {
				break
			}
			switch data[i+1] {
			case '/':
				for i < len(data) && data[i] != '\n' {
					i++
				}
				i-- // the newline is counted above
			case '*':
				for i += 2; i+1 < len(data) && !(data[i] == '*' && data[i+1] == '/'); i++ {
					if data[i] == '\n' {
						line++
					}
				}
				i++
			}
		case '[', '{':
			if depth++; depth > maxClientNesting {
				return fmt.Errorf("line %d: objects and arrays nest more than %d deep, which no client configuration does: is it the right file?", line, maxClientNesting)
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}
