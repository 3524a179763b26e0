package mcp

import (
	"bufio"
	"context"
	"errors"
	"os"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// StartRemote connects to the remote server spec.URL as Start starts a
// local one, and returns it as a Process whose Stdin and Stdout are pipes:
// each line written to Stdin is POSTed (Streamable HTTP), and the answers
// come out of Stdout as lines, so whatever speaks to a local server's
// stdio (the proxy) speaks to a remote one unchanged. Closing Stdin ends
// the session; Exited is closed once the connection is down. A remote
// server has no pid, no process group and no stderr.
func StartRemote(ctx context.Context, spec ServerSpec) (*Process, error) {
	if spec.URL == "" {
		return nil, errors.New("no url to connect to")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	h, err := dialHTTPTo(spec, outR, outW)
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	grace := spec.ShutdownGrace
	if grace <= 0 {
		grace = defaultShutdownGrace
	}
	p := &Process{
		Name:    spec.Name,
		Stdin:   inW,
		Stdout:  outR,
		stderr:  newRing(defaultStderrLimit),
		errDone: make(chan struct{}),
		exited:  make(chan struct{}),
		grace:   grace,
		remote:  h,
	}
	close(p.errDone)
	go func() {
		// The proxy's lines, one message each, to the server.
		sc := bufio.NewScanner(inR)
		max := spec.MaxLineSize
		if max <= 0 {
			max = DefaultMaxLineSize
		}
		sc.Buffer(make([]byte, 0, 64<<10), max+1)
		for sc.Scan() {
			line := append(sc.Bytes(), '\n')
			if _, err := h.Write(line); err != nil {
				break
			}
		}
		inR.Close()
		h.Close() // ends the session; the answers in flight are done
		close(p.exited)
	}()
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

// OAuthHandler gives a remote server's OAuth access tokens and is told of
// each 401 or 403 (the Go SDK's interface: its authorization code flow is
// one, mcpform's stored tokens another). A request refused with a 401 or
// 403 goes to Authorize once and is made again when Authorize returns nil.
type OAuthHandler = auth.OAuthHandler
