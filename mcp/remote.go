package mcp

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// StartRemote connects to the remote server spec.URL as Start starts a
// local one, and returns it as a Process: each line written to Stdin is
// POSTed (Streamable HTTP), and the answers come out of Stdout as lines,
// so whatever speaks to a local server's stdio (the proxy) speaks to a
// remote one unchanged. Both ends are in memory: a write is the POST's
// start, with no pipe or copying goroutine between the proxy and the
// HTTP client. Closing Stdin ends the session; Exited is closed once the
// connection is down. A remote server has no pid, no process group and
// no stderr.
func StartRemote(ctx context.Context, spec ServerSpec) (*Process, error) {
	if spec.URL == "" {
		return nil, errors.New("no url to connect to")
	}
	outR, outW := io.Pipe()
	h, err := dialHTTPTo(spec, outR, outW)
	if err != nil {
		return nil, err
	}
	grace := spec.ShutdownGrace
	if grace <= 0 {
		grace = defaultShutdownGrace
	}
	p := &Process{
		Name:    spec.Name,
		Stdout:  outR,
		stderr:  newRing(defaultStderrLimit),
		errDone: make(chan struct{}),
		exited:  make(chan struct{}),
		grace:   grace,
		remote:  h,
	}
	p.Stdin = &remoteInput{h: h, exited: p.exited}
	close(p.errDone)
	if ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				p.Close()
			case <-p.exited:
			}
		}()
	}
	return p, nil
}

// remoteInput is a remote server's Stdin: a write posts its lines, and
// Close ends the session (on a goroutine of its own: Process.Close waits
// for it, with a grace, as for a process that exits).
type remoteInput struct {
	h      *httpLines
	exited chan struct{}
	once   sync.Once
}

func (w *remoteInput) Write(b []byte) (int, error) { return w.h.Write(b) }

func (w *remoteInput) Close() error {
	w.once.Do(func() {
		go func() {
			w.h.Close() // the answers in flight are done, then the session ends
			close(w.exited)
		}()
	})
	return nil
}

// OAuthHandler gives a remote server's OAuth access tokens and is told of
// each 401 or 403 (the Go SDK's interface: its authorization code flow is
// one, mcpform's stored tokens another). A request refused with a 401 or
// 403 goes to Authorize once and is made again when Authorize returns nil.
type OAuthHandler = auth.OAuthHandler
