// Package escape makes untrusted text safe to print: every character that
// could hide or reorder what a reviewer sees (C0 and C1 controls, bidi
// overrides and isolates, zero-width characters, Unicode tag characters,
// invalid UTF-8) is shown as a visible Go-style escape such as \u200b.
//
// Everything a server sends (descriptions, names, stderr, error messages)
// passes through String before it reaches a terminal, a plan or a log line a
// human reads. It is a leaf package any of mcpform's packages may import.
package escape
