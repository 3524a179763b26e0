// Package audit is mcpform run's audit log: hash-chained JSON lines that
// several run processes append to at once (an exclusive flock per append,
// O_APPEND, the previous line's digest read from the file when another
// process wrote since), the verifier `mcpform audit verify` runs, and the
// records the runtime writes (argument values only as digests).
//
// It knows nothing of the proxy: runtime queues a request's record before
// anything leaves for the server and commits the log before each write to
// either stream (docs/ARCHITECTURE.md, section 5; docs/GUARANTEES.md,
// section 9).
package audit
