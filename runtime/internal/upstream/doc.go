// Package upstream is mcpform run's connection to a server it does not
// trust, over stdio: requests under ids of the proxy's own (the client's id
// never goes upstream), one timer for every deadline, cancellation that
// tells the server, progress only for requests in flight, and one bounded
// write queue, so that a server that stops reading fails its requests
// instead of holding their goroutines. Garbage, over-long lines and answers
// to ids nobody waits for are dropped and reported, never fatal.
//
// runtime reaches it through a small interface (runtime/upstream.go), so a
// Streamable HTTP upstream can sit beside this one without touching the
// chain. Call is a request's context, one allocation, which the proxy
// creates and this package watches.
package upstream
