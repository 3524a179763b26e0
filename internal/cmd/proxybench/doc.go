// Command proxybench measures what `mcpform run` adds to a tools/call, side
// by side in one run (speed is shown by benchmarks measured side by side,
// not asserted by timed tests; CONTRIBUTING.md, "Benchmark"):
//
//   - round-trip latency p50/p99 of tools/call, direct to a fast Go echo
//     server, through a bare line relay (a process that only copies lines
//     both ways: the floor for any stdio proxy on the machine), through
//     mcpform run, and through mcpform run -spin 0 (no polling: what the
//     polling buys, and what it costs in CPU);
//   - throughput with 1 and with 64 requests in flight, all four ways;
//   - the CPU time the relay and the proxy spend per call;
//   - the proxy's peak memory (RSS) serving a lock of 1,000 tools;
//   - with -http, the same calls to a local Streamable HTTP server, from a
//     direct HTTP client and through mcpform run locked to that server.
//
// Usage:
//
//	go run ./internal/cmd/proxybench [-n 20000] [-tools 1000] [-mcpform PATH] [-http]
//
// Without -mcpform it builds ./cmd/mcpform first. The proxied runs write a
// real audit log (to a temporary directory, or to PROXYBENCH_AUDIT_DIR), as
// a client's run would: every call is in the log before it is forwarded.
package main
