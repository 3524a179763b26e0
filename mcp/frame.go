package mcp

import "strconv"

// The frame encoders: one line of JSON-RPC each, with its newline, built by
// appending to b with no allocation of their own. The payloads (params,
// result, error data) are written as given and must be one line of valid
// JSON; AppendMessage compacts them first, the proxy's hot path passes
// bytes it already checked.

// AppendRequest appends one request line, or a notification's when id is
// zero. params nil: none.
func AppendRequest(b []byte, id ID, method string, params []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0",`...)
	if !id.IsZero() {
		b = append(b, `"id":`...)
		b = append(b, id.String()...)
		b = append(b, ',')
	}
	b = append(b, `"method":`...)
	b = appendQuoted(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, "}\n"...)
}

// AppendResponse appends one result response line.
func AppendResponse(b []byte, id ID, result []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id.String()...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, "}\n"...)
}

// AppendError appends one error response line. data nil: none.
func AppendError(b []byte, id ID, code int64, msg string, data []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id.String()...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, code, 10)
	b = append(b, `,"message":`...)
	b = appendQuoted(b, msg)
	if data != nil {
		b = append(b, `,"data":`...)
		b = append(b, data...)
	}
	return append(b, "}}\n"...)
}
