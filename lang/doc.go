// Package lang is mcp.hcl: it parses the configuration, evaluates variables,
// locals, functions and modules ahead of time and returns plain Go values
// (Config) with no HCL left in them, so that plan never holds an expression.
// It also formats mcp.hcl files (fmt).
//
// lang imports none of mcpform's packages but policy.
package lang
