package render

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/runtime/taint"
)

// FormatVersion is the version of the JSON form.
const FormatVersion = "1"

// Session is one tainted session as the JSON form prints it.
type Session struct {
	Session string        `json:"session"`
	Created time.Time     `json:"created"`
	Tainted bool          `json:"tainted"`
	Events  []taint.Event `json:"events"`
	Dropped int           `json:"dropped_events,omitempty"`
}

// Tainted is the sessions of states that a source's result reached; a
// session with only a key has nothing to review.
func Tainted(states []*taint.State) []Session {
	out := []Session{}
	for _, st := range states {
		if !st.Tainted() {
			continue
		}
		out = append(out, Session{Session: st.Session, Created: st.Created, Tainted: true, Events: st.Events, Dropped: st.Dropped})
	}
	return out
}

// JSON prints the sessions as {"format_version": "1", "sessions": [...]}.
func JSON(w io.Writer, sessions []Session) error {
	data, err := json.MarshalIndent(map[string]any{"format_version": FormatVersion, "sessions": sessions}, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

// Human prints the sessions for review: a session a line with when it was
// tainted, each event below it, and how to clear one.
func Human(w io.Writer, sessions []Session) {
	if len(sessions) == 0 {
		fmt.Fprintln(w, "No tainted sessions.")
		return
	}
	for _, s := range sessions {
		fmt.Fprintf(w, "%s  tainted %s\n", s.Session, s.Events[0].Time.Format(time.RFC3339))
		for _, ev := range s.Events {
			what := escape.String(ev.Source)
			if ev.Item != "" && ev.Item != ev.Source {
				what += " " + escape.String(ev.Item)
			}
			fmt.Fprintf(w, "  %s  %s  %s  %s  pid %d\n", ev.Time.Format(time.RFC3339), escape.String(ev.Server), what, ev.Digest, ev.PID)
		}
		if s.Dropped > 0 {
			fmt.Fprintf(w, "  (%d more events between the first and these)\n", s.Dropped)
		}
	}
	fmt.Fprintln(w, "\nAfter reviewing a session, clear it with: mcpform taint reset SESSION")
}

// Cleared says how many sessions taint reset -all cleared.
func Cleared(w io.Writer, n int) {
	s := "s"
	if n == 1 {
		s = ""
	}
	fmt.Fprintf(w, "Cleared %d session%s.\n", n, s)
}

// ClearedSession says that taint reset cleared the session name.
func ClearedSession(w io.Writer, name string) {
	fmt.Fprintf(w, "Cleared session %s.\n", name)
}
