// Package policy is the vocabulary of a server's policy, shared by the
// packages that read it from mcp.hcl (lang), store it in mcp.lock (lock) and
// enforce it (runtime, runtime/sandbox, runtime/egress): the sandbox's paths
// and network allow-list, and the taint labels.
//
// It is a leaf: it imports none of mcpform's packages, so lang and lock, which
// import none of each other, can share one definition of what a valid
// host:port entry or sandbox path is instead of two that drift apart.
package policy
