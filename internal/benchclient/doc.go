// Package benchclient is the JSON-RPC client the proxy's benchmarks drive it
// with: runtime's Go benchmarks (in process, over pipes) and
// internal/cmd/proxybench (the real binary, against a direct connection).
// It writes requests and matches responses by id, doing as little as it can,
// so that what a benchmark measures is the other side.
package benchclient
