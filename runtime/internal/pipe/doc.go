// Package pipe moves lines between a run's pipes with as few wake-ups as it
// can: raw non-blocking pipe I/O that spares the runtime's monitor thread
// (Raw), a short spin over the run's pipes before a reader parks (Readers,
// sized by the CPUs the process may use, its cgroup's quota included), and
// a line writer that combines the lines of many goroutines and lets one
// batcher hold its own back while it handles a burst (Writer). A line
// buffer pool serves both directions.
//
// There is no MCP in it: runtime frames the messages, pipe moves bytes.
package pipe
