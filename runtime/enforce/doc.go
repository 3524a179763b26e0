// Package enforce decides whether one client request matches a lock entry:
// only locked tools, prompts and resources (resource templates through an
// RFC 6570 matcher that never lets a match leave its directory), arguments
// checked against the locked input schema (compiled once per tool, no
// schema loading, closed schemas refuse unknown arguments), keys that
// differ only in case refused, no method mcpform does not forward; and, on
// the way back, a tools/call result checked against its tool's locked
// output schema (CheckResult: structuredContent required and valid, with
// the input schemas' draft rules, compiled once per tool).
//
// It is pure: lock entry and request in, a Refusal or nil out, no I/O and
// no state but the compiled schemas. runtime's enforce and results links
// are its only callers (docs/ARCHITECTURE.md, section 5;
// docs/GUARANTEES.md, section 2).
package enforce
