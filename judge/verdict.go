package judge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/mcpform/mcpform/internal/strictjson"
)

// Verdict is a judge's answer: the meaning moved, or it did not.
type Verdict string

const (
	Equivalent Verdict = "equivalent"
	Changed    Verdict = "changed"
)

// MaxReason bounds a verdict's reason, in bytes: a longer one is a judge
// error, as any answer outside the format is.
const MaxReason = 2048

// ParseVerdict reads a judge's answer: the content of its message, which
// must be one JSON object with exactly the fields verdict ("equivalent" or
// "changed"), confidence (a number from 0 to 1) and reason (a string of at
// most MaxReason bytes). Anything else is an error: a code fence, another
// field, a verdict outside the two words, a confidence as a string or out
// of range. The reason is returned as sent; it is untrusted text.
func ParseVerdict(content []byte) (v Verdict, confidence float64, reason string, err error) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 || content[0] != '{' {
		return "", 0, "", errors.New("the answer is not a JSON object")
	}
	if err := strictjson.Check(content); err != nil {
		return "", 0, "", fmt.Errorf("the answer is not strict JSON: %v", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(content, &fields); err != nil {
		return "", 0, "", errors.New("the answer is not a JSON object")
	}
	for k := range fields {
		if k != "verdict" && k != "confidence" && k != "reason" {
			return "", 0, "", fmt.Errorf("the answer has a field %s besides verdict, confidence and reason", strconv.QuoteToASCII(truncate(k, 64)))
		}
	}
	for _, k := range []string{"verdict", "confidence", "reason"} {
		if _, ok := fields[k]; !ok {
			return "", 0, "", fmt.Errorf("the answer has no %s", k)
		}
	}
	var word string
	if json.Unmarshal(fields["verdict"], &word) != nil {
		return "", 0, "", errors.New(`the answer's verdict is not a string ("equivalent" or "changed")`)
	}
	switch Verdict(word) {
	case Equivalent, Changed:
		v = Verdict(word)
	default:
		return "", 0, "", fmt.Errorf(`the answer's verdict is %s, not "equivalent" or "changed"`, strconv.QuoteToASCII(truncate(word, 64)))
	}
	raw := bytes.TrimSpace(fields["confidence"])
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return "", 0, "", errors.New("the answer's confidence is not a number")
	}
	confidence, perr := strconv.ParseFloat(string(raw), 64)
	if perr != nil || math.IsNaN(confidence) || confidence < 0 || confidence > 1 {
		return "", 0, "", fmt.Errorf("the answer's confidence is %s, not a number from 0 to 1", truncate(string(raw), 32))
	}
	if json.Unmarshal(fields["reason"], &reason) != nil {
		return "", 0, "", errors.New("the answer's reason is not a string")
	}
	if len(reason) > MaxReason {
		return "", 0, "", fmt.Errorf("the answer's reason is %d bytes, more than %d", len(reason), MaxReason)
	}
	return v, confidence, reason, nil
}

// truncate shortens s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
