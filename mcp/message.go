package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/mcpform/mcpform/internal/jsonscan"
	"io"
	"strconv"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/strictjson"
)

// JSON-RPC 2.0 and MCP error codes mcpform sends or recognises.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	// codeHeaderMismatch and the two below are the 2026-07-28 codes
	// (schema.ts: HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY,
	// UNSUPPORTED_PROTOCOL_VERSION).
	codeHeaderMismatch                  = -32020
	codeMissingRequiredClientCapability = -32021
	CodeUnsupportedProtocolVersion      = -32022
)

// An ID is a JSON-RPC request id in canonical JSON form: an integer as its
// digits (`7`) or a string in quotes (`"a7"`). The zero value means "no id"
// (a notification, or an error response to a message whose id was unknown).
// IDs are comparable, so they can key a map of pending requests.
type ID string

// IntID returns the ID for the integer n.
func IntID(n int64) ID { return ID(strconv.FormatInt(n, 10)) }

// StringID returns the ID for the string s.
func StringID(s string) ID { return ID(appendQuoted(nil, s)) }

// IsZero reports whether id is absent.
func (id ID) IsZero() bool { return id == "" }

// MarshalJSON returns id as JSON; the zero ID is null.
func (id ID) MarshalJSON() ([]byte, error) {
	if id == "" {
		return []byte("null"), nil
	}
	return []byte(id), nil
}

// String returns id as it appears on the wire.
func (id ID) String() string {
	if id == "" {
		return "null"
	}
	return string(id)
}

// parseID validates a raw id: a string, or a number without fraction or
// exponent (JSON-RPC: "Numbers SHOULD NOT contain fractional parts"; MCP:
// "MUST NOT be null"). It returns the canonical form.
func parseID(raw json.RawMessage) (ID, bool) {
	if len(raw) == 0 {
		return "", false
	}
	switch c := raw[0]; {
	case c == '"':
		if bytes.IndexByte(raw, '\\') < 0 {
			return ID(raw), true
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return StringID(s), true
	case c == '-' || c >= '0' && c <= '9':
		for _, d := range raw[1:] {
			if d < '0' || d > '9' {
				return "", false
			}
		}
		if c == '-' && len(raw) == 1 {
			return "", false
		}
		return ID(raw), true
	}
	return "", false
}

// appendQuoted appends s as a JSON string, escaping only what JSON requires
// (quote, backslash, control characters), so that every string has exactly
// one canonical form.
func appendQuoted(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0 // bytes from start on are copied as they are, in one append
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		start = i + 1
		if c < 0x20 {
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		} else {
			b = append(b, '\\', c)
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// RPCError is a JSON-RPC error object, as received or to be sent.
type RPCError struct {
	Code    int64
	Message string
	Data    json.RawMessage // nil when absent
}

// Error names the code and the server's message, escaped: the message is
// server text and may hold anything.
func (e *RPCError) Error() string {
	return fmt.Sprintf("error %d: %s", e.Code, escape.String(e.Message))
}

// MarshalJSON encodes e as a JSON-RPC error object.
func (e *RPCError) MarshalJSON() ([]byte, error) {
	b := []byte(`{"code":`)
	b = strconv.AppendInt(b, e.Code, 10)
	b = append(b, `,"message":`...)
	b = appendQuoted(b, e.Message)
	if e.Data != nil {
		b = append(b, `,"data":`...)
		d, err := compactRaw(e.Data)
		if err != nil {
			return nil, err
		}
		b = append(b, d...)
	}
	return append(b, '}'), nil
}

// A Message is one JSON-RPC 2.0 message: a request (Method and ID), a
// notification (Method, no ID) or a response (no Method; Result or Error).
// Params and Result are kept as the exact bytes that were received.
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage // nil when absent
	Result json.RawMessage // responses only
	Error  *RPCError       // responses only
}

// IsRequest reports whether m is a request (a method and an id).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID != "" }

// IsNotification reports whether m is a notification (a method, no id).
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == "" }

// IsResponse reports whether m is a response.
func (m *Message) IsResponse() bool { return m.Method == "" }

// DecodeError says why a line is not an acceptable JSON-RPC message. Code is
// the JSON-RPC error to answer with (-32700 for bytes that are not JSON,
// -32600 for JSON that is not a valid message); ID is the message's id when
// one could be read, so that the answer can carry it.
type DecodeError struct {
	Code int
	ID   ID
	Msg  string
}

func (e *DecodeError) Error() string {
	if e.Code == CodeParseError {
		return "not JSON: " + e.Msg
	}
	return "not a valid JSON-RPC 2.0 message: " + e.Msg
}

// DecodeMessage decodes one line strictly, as the proxy must
// (docs/GUARANTEES.md, section 11): valid JSON with no duplicate object key
// at any depth (so no one can smuggle a second "name" past a check that
// reads the first), a single object (batches are refused: MCP 2025-06-18
// removed them), exact-case member names ("Method" is not "method"),
// "jsonrpc": "2.0", no members besides jsonrpc, id, method, params, result
// and error, params and result objects, and an error object of code,
// message and data.
func DecodeMessage(line []byte) (*Message, error) {
	if err := strictjson.Check(line); err != nil {
		return nil, &DecodeError{Code: CodeParseError, Msg: err.Error()}
	}
	first := bytes.TrimLeft(line, " \t\r\n")
	if len(first) == 0 || first[0] != '{' {
		if len(first) > 0 && first[0] == '[' {
			return nil, &DecodeError{Code: CodeInvalidRequest, Msg: "batches are not allowed"}
		}
		return nil, &DecodeError{Code: CodeInvalidRequest, Msg: "a message must be a JSON object"}
	}
	// Member names are compared exactly as sent (a struct would match
	// "Method" to a field tagged "method"). The values alias one copy of
	// the line: the caller's buffer is not retained.
	var f members
	if err := f.split(bytes.Clone(first)); err != nil {
		return nil, err
	}
	m := &Message{}
	bad := func(format string, args ...any) (*Message, error) {
		return nil, &DecodeError{Code: CodeInvalidRequest, ID: m.ID, Msg: fmt.Sprintf(format, args...)}
	}
	rawID, hasID := f.id, f.id != nil
	if hasID && !bytes.Equal(rawID, []byte("null")) {
		id, ok := parseID(rawID)
		if !ok {
			return bad("id must be a string or an integer, not %s", clip(rawID))
		}
		m.ID = id
	}
	if f.unknown != "" {
		return bad("unknown member %s", appendQuoted(nil, escape.String(f.unknown)))
	}
	if string(f.jsonrpc) != `"2.0"` {
		return bad(`"jsonrpc" must be "2.0"`)
	}
	params, hasParams := f.params, f.params != nil
	result, hasResult := f.result, f.result != nil
	errRaw, hasError := f.error, f.error != nil
	if rawMethod := f.method; rawMethod != nil {
		method, ok := jsonscan.String(rawMethod)
		if !ok || method == "" {
			return bad("method must be a non-empty string")
		}
		m.Method = method
		if hasID && m.ID == "" {
			return bad("a request id must not be null")
		}
		if hasResult || hasError {
			return bad("a request or notification must not carry result or error")
		}
		if hasParams {
			if params[0] != '{' {
				return bad("params must be an object")
			}
			m.Params = params
		}
		return m, nil
	}
	if hasParams {
		return bad("a response must not carry params")
	}
	switch {
	case hasResult && hasError:
		return bad("a response must not carry both result and error")
	case hasResult:
		if m.ID == "" {
			return bad("a result response needs an id")
		}
		if result[0] != '{' {
			return bad("result must be an object")
		}
		m.Result = result
	case hasError:
		if !hasID {
			return bad("an error response needs an id (null when unknown)")
		}
		e, err := decodeRPCError(errRaw)
		if err != "" {
			return bad("%s", err)
		}
		m.Error = e
	default:
		return bad("a message needs a method, a result or an error")
	}
	return m, nil
}

func decodeRPCError(raw json.RawMessage) (*RPCError, string) {
	if raw[0] != '{' {
		return nil, "error must be an object"
	}
	var f map[string]json.RawMessage
	if json.Unmarshal(raw, &f) != nil {
		return nil, "error must be an object"
	}
	e := &RPCError{}
	for k, v := range f {
		switch k {
		case "code":
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return nil, "error code must be an integer"
			}
			e.Code = n
		case "message":
			if v[0] != '"' || json.Unmarshal(v, &e.Message) != nil {
				return nil, "error message must be a string"
			}
		case "data":
			e.Data = v
		default:
			return nil, fmt.Sprintf("unknown member %s in error", appendQuoted(nil, escape.String(k)))
		}
	}
	if _, ok := f["code"]; !ok {
		return nil, "error needs a code"
	}
	if _, ok := f["message"]; !ok {
		return nil, "error needs a message"
	}
	return e, ""
}

// AppendMessage appends m as one line of JSON, without the newline. Params
// and Result are written as given (compacted if they hold a line break, so
// the frame stays one line); they must be valid JSON.
func AppendMessage(b []byte, m *Message) ([]byte, error) {
	switch {
	case m.Method != "":
		params := m.Params
		if params != nil {
			var err error
			if params, err = compactRaw(params); err != nil {
				return nil, fmt.Errorf("encoding params of %s: %w", m.Method, err)
			}
		}
		b = AppendRequest(b, m.ID, m.Method, params)
	case m.Error != nil:
		data := m.Error.Data
		if data != nil {
			var err error
			if data, err = compactRaw(data); err != nil {
				return nil, err
			}
		}
		b = AppendError(b, m.ID, m.Error.Code, m.Error.Message, data)
	default:
		r := m.Result
		if r == nil {
			r = json.RawMessage("{}")
		}
		r, err := compactRaw(r)
		if err != nil {
			return nil, fmt.Errorf("encoding result: %w", err)
		}
		b = AppendResponse(b, m.ID, r)
	}
	return b[:len(b)-1], nil // without the newline
}

// writeMessage writes m to w as one line, in a single Write (so concurrent
// writers that each call writeMessage under their own lock never interleave
// within a line).
func writeMessage(w io.Writer, m *Message) error {
	b, err := AppendMessage(make([]byte, 0, 256), m)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// MarshalJSON encodes m as AppendMessage does.
func (m *Message) MarshalJSON() ([]byte, error) { return AppendMessage(nil, m) }

// compactRaw returns raw unchanged unless it holds a line break, which a
// frame must not.
func compactRaw(raw json.RawMessage) (json.RawMessage, error) {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return raw, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// clip returns the start of b for an error message, escaped (a rune cut in
// half shows as \x escapes, which is fine for a message).
func clip(b []byte) string {
	const max = 120
	if len(b) > max {
		return escape.String(string(b[:max])) + "…"
	}
	return escape.String(string(b))
}

// members are the top-level members of a message, as raw values.
type members struct {
	jsonrpc, id, method, params, result, error json.RawMessage
	unknown                                    string // the first unknown member's name
}

// split fills f from a JSON object that strictjson.Check has accepted,
// without decoding the values.
func (f *members) split(obj []byte) error {
	i := jsonscan.SkipWS(obj, 1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for i < len(obj) {
		end := jsonscan.SkipString(obj, i)
		rawKey := obj[i:end]
		i = jsonscan.SkipWS(obj, end)
		i = jsonscan.SkipWS(obj, i+1) // ':'
		vend := jsonscan.SkipValue(obj, i)
		v := json.RawMessage(obj[i:vend:vend])
		switch string(rawKey) { // exact bytes: an escaped name is unknown too
		case `"jsonrpc"`:
			f.jsonrpc = v
		case `"id"`:
			f.id = v
		case `"method"`:
			f.method = v
		case `"params"`:
			f.params = v
		case `"result"`:
			f.result = v
		case `"error"`:
			f.error = v
		default:
			if f.unknown == "" {
				name, _ := jsonscan.String(rawKey)
				f.unknown = name
			}
		}
		i = jsonscan.SkipWS(obj, vend)
		if i >= len(obj) || obj[i] == '}' {
			return nil
		}
		i = jsonscan.SkipWS(obj, i+1) // ','
	}
	return &DecodeError{Code: CodeParseError, Msg: "unterminated object"}
}
