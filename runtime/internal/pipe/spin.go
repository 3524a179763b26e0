package pipe

import (
	"io"
	"sync/atomic"
	"time"
)

// Readers returns a run's two readers, the client's and the server's, as
// raw pipes sharing one spinner when they are pipes and spinning can help
// (see spinner); a window of 0 or less never spins.
func Readers(window time.Duration, client, server io.Reader) (io.Reader, io.Reader) {
	client, server = Raw(client), Raw(server)
	newSpinner(window, client, server)
	return client, server
}

// MaxSpin is the longest spin window (runtime.Options.Spin): a longer spin would only burn CPU
// while a Close or shutdown waits for the reader to come back.
const MaxSpin = time.Millisecond

// maxBusy is how long a reader may go on without parking on the poller.
// While a reader spins, nothing else that waits on the poller (a write
// waiting for room, the server's stderr, the egress proxy's sockets) is
// looked at, at GOMAXPROCS=1, until the processor goes idle or the
// runtime's monitor looks (every 10 ms at best): a reader whose messages
// keep coming within the window parks at least this often.
const maxBusy = time.Millisecond

// spinState is what a spinning read must see at once, kept beside the
// pipe: its Close, its read deadline, and since when its reader has run
// without parking.
type spinState struct {
	closed   atomic.Bool
	deadline atomic.Int64 // unix nanoseconds; 0: none
	awake    time.Time    // touched only by the reader, in Read
}

// setDeadline records t for the spinning reader (before the file's own
// deadline is set).
func (s *spinState) setDeadline(t time.Time) {
	var ns int64
	if !t.IsZero() {
		ns = max(t.UnixNano(), 1)
	}
	s.deadline.Store(ns)
}
