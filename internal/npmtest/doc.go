// Package npmtest finds the real MCP servers and client that testdata/npm
// pins (the npm reference servers and the MCP inspector) for the tests that
// run them, and decides what such a test does when they are absent.
//
// The project's test command (scripts/test.sh) installs them before it runs
// go test. A plain `go test ./...` on a fresh clone has no
// testdata/npm/node_modules: there the tests that need them skip, saying
// what is missing and how to get it. Under CI (CI=true) the test command
// has just installed them, so a missing one is a broken install and the
// test fails instead of skipping: fakes never stand in for real servers,
// and a skip would hide that nothing real ran.
package npmtest
