// Package lang is mcp.hcl: it parses the configuration, evaluates variables,
// locals, functions and modules ahead of time and returns plain Go values
// (Config) with no HCL left in them, so that plan never holds an expression.
// It also formats mcp.hcl files (Format, for mcpform fmt) and fetches git
// modules (InstallModules, for mcpform init).
//
// Its neighbours: cmd/mcpform wires validate, fmt and init straight to
// lang; plan takes a Config and compares it with the lock (lock) and the
// live servers (mcp); nothing downstream sees hcl or cty except the
// hcl.Diagnostics and hcl.Range that point into the user's files.
//
// # Files
//
// A configuration directory (the root, or a module) is mcp.hcl plus every
// *.mcp.hcl file in it, merged. mcp.hcl.example at the repository root
// documents every block and argument.
//
// # Evaluation
//
// Load evaluates everything once. Variables come from defaults,
// MCPFORM_VAR_<name> (through Options.Getenv, which is asked for nothing
// else), -var-file and -var, in rising precedence. The functions are
// go-cty's standard library under terraform's names, plus path.root
// ("."), path.module (relative to the root) and path.tmp (the literal
// "${TMP}"); none reads the machine or the network, so one configuration
// gives one lock everywhere. Sensitive values are marked and never reach a
// diagnostic; a server setting that uses one is an error, because mcp.lock
// is plain text.
//
// # Modules
//
// Local sources ("./x", "../x") are read in place. Git sources
// ("git::URL//subdir?ref=TAG") are read only from .mcpform/modules, where
// InstallModules fetched them and recorded source, ref and commit in
// .mcpform/modules/modules.json; Load reports "Module not installed ... run
// mcpform init" otherwise, and never fetches.
//
// # Limits
//
// Configuration is untrusted input. Before any parser reads a file (or a
// -var value) it is refused past MaxFileBytes or when it nests past
// MaxNesting levels (limits.go: a linear scan that mirrors the lexer's
// strings, heredocs and comments); functions whose result can outgrow
// their arguments check its size first, against MaxElements and
// MaxStringBytes (bounds.go). Each answer is a diagnostic, never a crash
// (docs/GUARANTEES.md).
//
// # Diagnostics
//
// Every problem is an hcl.Diagnostic with a summary, a detail that says
// what to do (with "Did you mean" where a name is misspelled) and the
// source range. WriteDiagnostics renders them as terraform does;
// WriteDiagnosticsJSON writes the validate -json document (JSONDiagnostics:
// terraform validate -json's shape plus format_version "1.0").
//
// lang imports none of mcpform's packages but policy (and internal/escape).
package lang
