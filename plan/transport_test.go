package plan

import (
	"testing"

	"github.com/mcpform/mcpform/lock"
)

// A remote server the probe reached over another transport than the
// locked one is REMOTE-TRANSPORT-CHANGED (config, graded none like
// CFG-URL-CHANGED); the same transport is no change. (That the planned
// entry pins the probed transport is TestRemoteSSELifecycle's and
// TestRemoteSSEEndpointAndTransport's, in cmd/mcpform.)
func TestConfigChangesTransport(t *testing.T) {
	const url = "https://mcp.example.com/sse"
	old := withTools(t, "fetch")
	old.Command, old.EnvPassthrough = nil, nil
	old.Remote = &lock.Remote{URL: url, Transport: lock.TransportSSE}
	for _, c := range []struct{ probed, want string }{
		{lock.TransportSSE, ""},
		{lock.TransportStreamableHTTP, `REMOTE-TRANSPORT-CHANGED server.s.transport "sse" -> "streamable-http"`},
	} {
		live := withTools(t, "fetch")
		live.Command, live.EnvPassthrough = nil, nil
		live.Remote = &lock.Remote{URL: url, Transport: c.probed}
		var got string
		for _, ch := range configChanges("server.s", old, live) {
			if ch.Class != Config || ch.Grade != None {
				t.Errorf("%s: class %s grade %s, want config/none", ch.Rule, ch.Class, ch.Grade)
			}
			got += ch.Rule + " " + ch.Addr + " " + string(ch.Before) + " -> " + string(ch.After)
		}
		if got != c.want {
			t.Errorf("probed %s: config changes %q, want %q", c.probed, got, c.want)
		}
	}
}
