// Package mutation switches off one of mcpform's protections at a time, so
// that scripts/mutation.sh can show that a test fails without it (the
// mutation is "killed"). It exists only for that script.
//
// In a normal build Off is a constant false: every hook is dead code the
// compiler removes, and no flag, variable or file can reach it. Only a
// build with the tag mcpform_mutation reads MCPFORM_MUTATION, the name of
// the one protection to switch off:
//
//	lockserve   answer list requests with the server's own lists instead of the lock's
//	argcheck    skip the check of arguments against the locked input schema
//	outputcheck  forward tools/call results unchecked against the locked output schema
//	casekeys    let wrong-case twins of protocol and argument keys through
//	inputrequests  pass a 2026-07-28 server's input_required requests unchecked
//	quarantine  never quarantine a drifted server
//	taint       pass every call past the taint gate
//	landlock    do not apply the Landlock ruleset
//	seccomp     do not install the seccomp filter
//	netns       do not give the server its own network namespace
//	egress      let the egress proxy connect anywhere
//	auditchain  write every audit record with an empty "prev"
//	envwithheld pass mcpform's whole environment to the server
//	mountns     leave the server the host's filesystem tree (no private root)
//	memfd       let the server's memfds stay executable
//	limits      set no resource limit (no cgroup, no rlimits)
//	dupcloexec  make run's copy of the client's stream inheritable
//	fdsweep     do not mark mcpform's descriptors close-on-exec before a server starts
//	reaptree    leave a server's descendants running when it exits
//	watchexit   notice a server's exit only by its output's end
//	outcomefirst  release a call's result before its outcome is in the audit log
//	sessionverify  serve a remote server's new session (its old one ended) unverified
//	pins        start a server without checking its pinned executable and script
package mutation
