// Package mcpform is the module's root. It holds no code: the CLI is
// cmd/mcpform, and the packages are laid out as docs/ARCHITECTURE.md
// describes. Its test, deps_test.go, states and enforces which of them may
// import which, and checks that the document's import table says the same.
package mcpform
