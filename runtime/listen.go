package runtime

import (
	"context"
	"slices"
	"sync"

	"github.com/mcpform/mcpform/internal/jsonscan"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/internal/pipe"
)

// subscriptions/listen (2026-07-28) is served by mcpform: the stream, its
// acknowledgment and its end are the proxy's, because what the client
// sees of the surface is the lock's. The lists a run serves do not change
// while it runs, so a list_changed goes out only when the server is
// quarantined (the client's next listing then gets the quarantine error).
// Resource updates for the subscribed URIs (enforce allowed only locked
// ones) are relayed with the stream's id; upstream, a legacy server gets
// resources/subscribe for each new URI, a 2026-07-28 server a
// subscriptions/listen of mcpform's own for the URIs, ended with the
// client's.

const metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// listener is one open subscriptions/listen stream.
type listener struct {
	id    mcp.ID // the listen request's id: the subscription id
	lists [3]bool
	uris  []string
	end   func(*Response, error) // answers the listen request, once
}

type listeners struct {
	mu     sync.Mutex
	open   map[mcp.ID]*listener
	upSubs map[string]bool // URIs a legacy server was subscribed to
}

// all returns the open streams.
func (ls *listeners) all() []*listener {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	out := make([]*listener, 0, len(ls.open))
	for _, l := range ls.open {
		out = append(out, l)
	}
	return out
}

// listen opens a stream for req: acknowledged at once, answered when the
// run ends (or cancelled by the client).
func (p *proxy) listen(ctx context.Context, req *Request, reply Reply) {
	filter := find(req.Params, "notifications")
	l := &listener{id: req.ID}
	caps := p.entry.Capabilities
	for i, kind := range []string{"tools", "prompts", "resources"} {
		flag := []string{"toolsListChanged", "promptsListChanged", "resourcesListChanged"}[i]
		l.lists[i] = string(find(filter, flag)) == "true" && find(caps, kind) != nil
	}
	var es [16][]byte
	for _, e := range jsonscan.Elements(es[:0], find(filter, "resourceSubscriptions")) {
		if uri, ok := stringValue(e); ok && !slices.Contains(l.uris, uri) {
			l.uris = append(l.uris, uri)
		}
	}
	var once sync.Once
	upCtx, stopUp := context.WithCancel(context.Background())
	l.end = func(resp *Response, err error) {
		once.Do(func() {
			stopUp()
			p.listeners.mu.Lock()
			delete(p.listeners.open, l.id)
			p.listeners.mu.Unlock()
			reply(resp, err)
		})
	}
	p.listeners.mu.Lock()
	if p.listeners.open == nil {
		p.listeners.open, p.listeners.upSubs = map[mcp.ID]*listener{}, map[string]bool{}
	}
	p.listeners.open[l.id] = l
	var newURIs []string
	for _, u := range l.uris {
		if !p.listeners.upSubs[u] {
			newURIs = append(newURIs, u)
			if !p.modernUp {
				p.listeners.upSubs[u] = true
			}
		}
	}
	p.listeners.mu.Unlock()

	// The acknowledgment: what mcpform will honour.
	ack := []byte(`{"_meta":{"` + metaSubscriptionID + `":` + l.id.String() + `},"notifications":{`)
	n := 0
	for i, flag := range []string{"toolsListChanged", "promptsListChanged", "resourcesListChanged"} {
		if l.lists[i] {
			if n > 0 {
				ack = append(ack, ',')
			}
			ack = append(ack, `"`+flag+`":true`...)
			n++
		}
	}
	if len(l.uris) > 0 {
		if n > 0 {
			ack = append(ack, ',')
		}
		ack = append(ack, `"resourceSubscriptions":[`...)
		for i, u := range l.uris {
			if i > 0 {
				ack = append(ack, ',')
			}
			ack = mcp.AppendQuoted(ack, u)
		}
		ack = append(ack, ']')
	}
	ack = append(ack, "}}"...)
	p.writeNotification("notifications/subscriptions/acknowledged", ack)

	if len(l.uris) > 0 {
		p.subscribeUpstream(upCtx, l.uris, newURIs)
	}
	context.AfterFunc(ctx, func() { l.end(nil, ctx.Err()) })
}

// subscribeUpstream asks the server for updates of the URIs: a legacy one
// with resources/subscribe for those it was not subscribed to yet, a
// 2026-07-28 one with a subscriptions/listen of mcpform's own, which ctx
// ends.
func (p *proxy) subscribeUpstream(ctx context.Context, uris, newURIs []string) {
	warn := func(m *mcp.Message, err error) {
		if err == nil && m.Error != nil {
			err = m.Error
		}
		if err != nil && ctx.Err() == nil {
			p.warnf("the server did not take a resource subscription: %v", err)
		}
	}
	if !p.modernUp {
		for _, u := range newURIs {
			p.up.Request(context.Background(), "resources/subscribe", append(mcp.AppendQuoted([]byte(`{"uri":`), u), '}'), "", false, p.opts.RequestTimeout, func(m *mcp.Message, err error) {
				warn(m, err)
			})
		}
		return
	}
	params := []byte(`{"notifications":{"resourceSubscriptions":[`)
	for i, u := range uris {
		if i > 0 {
			params = append(params, ',')
		}
		params = mcp.AppendQuoted(params, u)
	}
	params = append(params, "]}}"...)
	p.up.Request(ctx, "subscriptions/listen", p.wrapUp(params), "", false, 0, warn)
}

// resourceUpdated relays a resource update to each stream subscribed to its
// URI, with the stream's id; it reports whether any stream was.
func (p *proxy) resourceUpdated(uri string, params []byte) bool {
	p.listeners.mu.Lock()
	var to []mcp.ID
	for _, l := range p.listeners.open {
		if slices.Contains(l.uris, uri) {
			to = append(to, l.id)
		}
	}
	p.listeners.mu.Unlock()
	for _, id := range to {
		p.writeNotification("notifications/resources/updated", withSubscription(params, id))
	}
	return len(to) > 0
}

// listsChanged tells each stream that opted in that its lists changed: the
// server was quarantined, and listing now gets the quarantine's error.
func (p *proxy) listsChanged() {
	for _, l := range p.listeners.all() {
		for i, kind := range []string{"tools", "prompts", "resources"} {
			if l.lists[i] {
				p.writeNotification("notifications/"+kind+"/list_changed", withSubscription(nil, l.id))
			}
		}
	}
}

// closeListeners ends every stream gracefully: the run is ending.
func (p *proxy) closeListeners() {
	for _, l := range p.listeners.all() {
		res := []byte(`{"resultType":"complete","_meta":{"` + metaSubscriptionID + `":` + l.id.String() + `}}`)
		l.end(&Response{Result: res, Final: true}, nil)
	}
}

// withSubscription returns notification params (nil: none) with the
// stream's id in _meta, and without any envelope key the server set.
func withSubscription(params []byte, id mcp.ID) []byte {
	if params == nil {
		params = []byte("{}")
	}
	params = oneLine(params)
	sub := []byte(`"` + metaSubscriptionID + `":` + id.String())
	return rewriteObject(nil, params, isMeta, metaWithout(params, sub))
}

// writeNotification writes a notification mcpform composed to the client.
func (p *proxy) writeNotification(method string, params []byte) {
	b := pipe.GetLine()
	*b = mcp.AppendRequest(*b, "", method, params)
	p.write(*b)
	pipe.PutLine(b)
}
