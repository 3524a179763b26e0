// Package textdiff shows a person what a rewrite changes, as a unified diff:
// `mcpform fmt -diff` and `mcpform client-config -write` both print one. It
// is meant for reading, not for patch(1): a plain LCS, fine for
// configuration files, and the whole file shown as replaced beyond a bound.
package textdiff
