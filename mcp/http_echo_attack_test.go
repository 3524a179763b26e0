package mcp

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A server that echoes the request's Authorization header inside a
// JSON-RPC error body (a 4xx/5xx with Content-Type application/json that
// answers the request), which is the server's answer and goes to the
// client, has the token redacted from it as from a plain-text page.
func TestAttackTokenEchoedInJSONRPCError(t *testing.T) {
	const token = "sekrit-token-0123456789"
	lookup := func(string) (string, bool) { return token, true }
	handler := func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		id := string(findID(b))
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(string(b), `"initialize"`) {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"r","version":"1"}}}`, id)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"internal error; request headers: Authorization: %s"}}`, id, r.Header.Get("Authorization"))
	}
	got := lines(t, ServerSpec{Name: "remote", BearerEnv: "T", LookupEnv: lookup, Timeout: 3 * time.Second}, handler, 2,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	if len(got) < 2 {
		t.Fatalf("read %d lines: %q", len(got), got)
	}
	if strings.Contains(got[1], token) {
		t.Errorf("the token the server echoed in its JSON-RPC error reached the client unredacted:\n%s", got[1])
	}
}
