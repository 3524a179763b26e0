package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/mcpform/mcpform/approval"
	"github.com/mcpform/mcpform/internal/mutation"
	"github.com/mcpform/mcpform/pins/provenance"
)

// trustUsage is the -trust flag's help, the same for every command.
const trustUsage = "the trust file that says who must approve the lock (default $MCPFORM_TRUST, else $XDG_CONFIG_HOME/mcpform/trust.hcl, else /etc/mcpform/trust.hcl)"

func registerTrust(fs *flag.FlagSet, p *string) { fs.StringVar(p, "trust", "", trustUsage) }

// trustPolicy loads the trust policy in force: -trust, $MCPFORM_TRUST,
// the user's, the system's; nil without one. A trust file named by the
// flag or the variable that is missing, unreadable, writable by others
// or malformed is an error: never a fall back to no policy.
func trustPolicy(io *stdio, flagValue string) (*approval.Policy, error) {
	path, _, err := approval.Locate(flagValue, io.getenv)
	if err != nil || path == "" {
		return nil, err
	}
	return approval.LoadPolicy(path)
}

// approvals checks the signatures in sigPath over lockData against pol.
func approvals(pol *approval.Policy, sigPath string, lockData []byte) (*approval.Report, error) {
	payload, err := approval.Payload(lockData)
	if err != nil {
		return nil, err
	}
	sigs, err := approval.Load(sigPath)
	if err != nil {
		return nil, err
	}
	o := approval.CheckOptions{Now: time.Now()}
	if needsRoot(sigs, pol) {
		// Sigstore's public-good root, or the user's replacement; a
		// damaged replacement is an error, as for npm provenance.
		root, _, err := provenance.TrustedRoot()
		if err != nil {
			return nil, err
		}
		o.TrustedRoot = root
	}
	return approval.Check(payload, sigs, pol, o), nil
}

func needsRoot(sigs *approval.File, pol *approval.Policy) bool {
	if pol != nil && pol.TrustedRoot != nil {
		return false
	}
	for _, s := range sigs.Signatures {
		if s.Kind == approval.KindSigstore {
			return true
		}
	}
	return false
}

// lockApprovals is approvals for the lock at lockPath, with the policy in
// force.
func lockApprovals(io *stdio, trustFlag, lockPath string, lockData []byte) (*approval.Report, error) {
	pol, err := trustPolicy(io, trustFlag)
	if err != nil {
		return nil, err
	}
	return approvals(pol, approval.Path(lockPath), lockData)
}

// refused reports whether a lock with report r may not be used: its
// signatures are invalid (tampering, with or without a policy), or a
// trust policy is in force and they are not valid.
func refused(r *approval.Report) bool {
	if mutation.Off("approvals") {
		return false
	}
	return r.State == approval.Invalid || r.Policy != "" && r.State != approval.Valid
}

// approvalError is the refusal of a lock that is not approved: the state,
// then a line per signature that does not count.
func approvalError(lockPath string, r *approval.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is not approved: %s", lockPath, r.Summary())
	for _, p := range r.Problems() {
		fmt.Fprintf(&b, "\n  %s", p)
	}
	switch r.State {
	case approval.Invalid:
		fmt.Fprintf(&b, "\nRestore %s and %s from review, or have the lock signed again with mcpform sign.", lockPath, approval.Path(lockPath))
	case approval.Unsigned, approval.Insufficient:
		fmt.Fprintf(&b, "\nHave the lock approved with mcpform sign by the signers %s allows.", r.Policy)
	}
	return errors.New(b.String())
}

// noteApprovals prints who approved the lock, for plan and show: nothing
// for an unsigned lock without a policy, a warning for a lock signed but
// unchecked.
func noteApprovals(io *stdio, lockPath string, r *approval.Report) {
	switch {
	case r.State == approval.Unsigned && r.Policy == "":
	case refused(r):
		fmt.Fprintf(io.err, "Warning: %v\n", approvalError(lockPath, r))
	case r.State == approval.Unverified:
		fmt.Fprintf(io.err, "Warning: %s: %s\n", lockPath, r.Summary())
	default:
		fmt.Fprintf(io.err, "%s: %s\n", lockPath, r.Summary())
	}
}
