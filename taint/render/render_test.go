package render

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpform/mcpform/runtime/taint"
)

// TestHuman: a tainted session with its events, what the server named
// escaped; a session with only a key is not listed.
func TestHuman(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	states := []*taint.State{
		{Session: "u1-ppid-2-3", Key: []byte("k")},
		{Session: "u1000-ppid-42-99", Created: at, Dropped: 2, Events: []taint.Event{
			{Time: at, Server: "notes\u202e", Source: "resources:*", Item: "file:///inbox/1\x1b", Digest: "sha256:aa", PID: 7},
			{Time: at.Add(time.Minute), Server: "web", Source: "fetch", Item: "fetch", Digest: "sha256:bb", PID: 8},
		}},
	}
	sessions := Tainted(states)
	if len(sessions) != 1 {
		t.Fatalf("%d sessions, want the tainted one only", len(sessions))
	}
	var b bytes.Buffer
	Human(&b, sessions)
	want := `u1000-ppid-42-99  tainted 2026-11-30T10:00:00Z
  2026-11-30T10:00:00Z  notes\u202e  resources:* file:///inbox/1\u001b  sha256:aa  pid 7
  2026-11-30T10:01:00Z  web  fetch  sha256:bb  pid 8
  (2 more events between the first and these)

After reviewing a session, clear it with: mcpform taint reset SESSION
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	b.Reset()
	Human(&b, Tainted(states[:1]))
	if b.String() != "No tainted sessions.\n" {
		t.Errorf("no tainted session: %q", b.String())
	}
}

// TestJSON: format 1, without the session's key.
func TestJSON(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	if err := JSON(&b, Tainted([]*taint.State{{Session: "s", Created: at, Key: []byte("secret"), Events: []taint.Event{{Time: at, Server: "web", Source: "fetch", Item: "fetch", Digest: "sha256:aa", PID: 1}}}})); err != nil {
		t.Fatal(err)
	}
	want := `{
  "format_version": "1",
  "sessions": [
    {
      "session": "s",
      "created": "2026-11-30T10:00:00Z",
      "tainted": true,
      "events": [
        {
          "time": "2026-11-30T10:00:00Z",
          "server": "web",
          "source": "fetch",
          "item": "fetch",
          "digest": "sha256:aa",
          "pid": 1
        }
      ]
    }
  ]
}
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	b.Reset()
	JSON(&b, Tainted(nil))
	if !strings.Contains(b.String(), `"sessions": []`) {
		t.Errorf("no sessions: %s", b.String())
	}
}

func TestCleared(t *testing.T) {
	var b bytes.Buffer
	Cleared(&b, 1)
	Cleared(&b, 2)
	ClearedSession(&b, "u1")
	if want := "Cleared 1 session.\nCleared 2 sessions.\nCleared session u1.\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
