package runtime

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/enforce"
)

// serverState is what verification knows of the server, read on every
// request: whether its surface is being verified (gate), whether it drifted
// (quarantined), whether it did not start (startErr). verify.go writes it;
// the quarantine link and the server side read it.
type serverState struct {
	// gate is non-nil (and closed when done) while the surface is being
	// verified; quarantined holds the message once definitional drift was
	// found; startErr is set once the server did not start, and every
	// request then gets its account.
	gate        atomic.Pointer[chan struct{}]
	quarantined atomic.Pointer[string]
	startErr    atomic.Pointer[mcp.StartError]
	// blocked holds the items that drifted under on_drift =
	// "block-changed" (ondrift.go); nil while none has.
	blocked atomic.Pointer[enforce.Blocked]
}

// closeGate makes requests wait until the surface has been verified. It is
// called on the upstream reading goroutine when a list_changed arrives,
// before any later response from the server is read: no request the client
// sends after seeing such a response can slip past the check.
func (s *serverState) closeGate() {
	if s.gate.Load() == nil {
		ch := make(chan struct{})
		s.gate.CompareAndSwap(nil, &ch)
	}
}

func (s *serverState) openGate() {
	if ch := s.gate.Swap(nil); ch != nil {
		close(*ch)
	}
}

// isQuarantined reports whether definitional drift was found.
func (s *serverState) isQuarantined() bool { return s.quarantined.Load() != nil }

// quarantineLink holds requests while the surface is verified (at most
// wait) and refuses them all once it drifted, or once the server did not
// start; under on_drift = "block-changed" it refuses those about the
// items that drifted.
type quarantineLink struct {
	state *serverState
	wait  time.Duration
	// view is the entry as the client may see it (expose applied): the
	// blocked items are refused only as far as the client may know them.
	view *lock.Entry
}

func (l quarantineLink) wrap(next Handler) Handler {
	admit := func(ctx context.Context, req *Request, reply Reply) {
		if se := l.state.startErr.Load(); se != nil {
			reply(rpcError(CodeStartFailed, startMessage(se)), nil)
			return
		}
		if msg := l.state.quarantined.Load(); msg != nil {
			reply(rpcError(CodeQuarantined, *msg), nil)
			return
		}
		if r := l.state.blockedRefusal(&req.Call, l.view); r != nil {
			reply(refusal(r), nil)
			return
		}
		next(ctx, req, reply)
	}
	return func(ctx context.Context, req *Request, reply Reply) {
		g := l.state.gate.Load()
		if g == nil {
			admit(ctx, req, reply)
			return
		}
		go func() {
			t := time.NewTimer(l.wait)
			defer t.Stop()
			select {
			case <-*g:
				admit(ctx, req, reply)
			case <-ctx.Done():
				reply(nil, ctx.Err())
			case <-t.C:
				reply(rpcError(codeTimeout, "mcpform is still verifying the server's surface: try again"), nil)
			}
		}()
	}
}
