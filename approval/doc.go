// Package approval binds a lock to the people who approved it: detached
// signatures over a lock's canonical content (mcp.lock.sig, beside the
// lock), made with SSH keys (the sshsig format of ssh-keygen -Y sign,
// namespace "mcpform") or carried as Sigstore bundles, and the trust policy
// (trust.hcl, outside the repository) that says whose signatures count and
// how many a lock needs. Check turns the two into one of the states the
// commands report: valid, invalid, insufficient, unverified or unsigned
// (docs/GUARANTEES.md, "Signed approvals").
package approval
