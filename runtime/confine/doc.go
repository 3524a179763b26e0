// Package confine starts a server the way its lock entry's sandbox policy
// says: a fresh private ${TMP} per start, an audited egress proxy on a unix
// socket when the policy allows any network (runtime/egress), and the
// sandbox itself (runtime/sandbox), with mcpform's own state protected from
// every write path. It turns a policy into runtime.Options.Prepare; without
// kernel support the hook fails and the server does not start.
package confine
