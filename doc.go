// Package mcpform is the module's root. It holds no code: the CLI is
// cmd/mcpform, and the packages are laid out as DESIGN.md section 1 says.
// Its test, deps_test.go, states and enforces which of them may import
// which.
package mcpform
