package runtime

import (
	"context"
	"io"
	"time"

	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/internal/upstream"
)

// serverConn is the connection to the server as the proxy uses it: the
// seam where a transport plugs in (docs/ARCHITECTURE.md, section 6). The
// stdio one is upstream.Conn; a Streamable HTTP upstream implements the
// same operations and the chain does not change.
type serverConn interface {
	// Listen starts reading the server's messages from r (lines of at
	// most maxLine bytes); the hooks given at creation get them.
	Listen(r io.Reader, maxLine int)
	// Request sends a request under an id of the connection's own and
	// calls done exactly once: with the answer (on the reading goroutine),
	// ctx's error, a *upstream.TimeoutError, or why the server is gone.
	Request(ctx context.Context, method string, params []byte, token string, forward bool, timeout time.Duration, done func(*mcp.Message, error))
	// Caller is an mcp.Caller for the proxy's own requests (verification).
	Caller(wrap func([]byte) []byte, timeout time.Duration) mcp.Caller
	Notify(method string, params []byte) error
	Respond(id mcp.ID, result []byte, rpcErr *mcp.RPCError) error
	// ProgressTarget reports whether a progress token belongs to a client
	// request in flight.
	ProgressTarget(token []byte) bool
	// Hold and Release bracket a burst of requests the client's reader
	// sends: one write for the burst.
	Hold()
	Release() error
	// Flushed waits until what was handed to the stream is written, at
	// most timeout, and reports whether it was.
	Flushed(timeout time.Duration) bool
	// Done is closed when the connection ended (Err says why); Fail ends
	// it, answering every waiting request with err.
	Done() <-chan struct{}
	Err() error
	Fail(err error)
}

var _ serverConn = (*upstream.Conn)(nil)
