package approval

import (
	"fmt"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
)

// Summary says in one line what the report amounts to, for the checking
// commands' output. Signer names come from the signature file and are
// escaped.
func (r *Report) Summary() string {
	switch r.State {
	case Valid:
		return fmt.Sprintf("approved by %s (%d of %d required; trust file %s)", names(r.Approvers), len(r.Approvers), r.Required, r.Policy)
	case Insufficient:
		got := "no allowed signer"
		if len(r.Approvers) > 0 {
			got = names(r.Approvers)
		}
		return fmt.Sprintf("not approved: %d of %d required approvals (%s); %d more needed (trust file %s)", len(r.Approvers), r.Required, got, r.Missing(), r.Policy)
	case Invalid:
		return "invalid signatures: the lock or mcp.lock.sig was changed after it was signed"
	case Unverified:
		var claimed []string
		for _, f := range r.Findings {
			claimed = append(claimed, f.Signer)
		}
		return fmt.Sprintf("signed by %s, unverified: no trust policy here says who may approve (pass -trust FILE or set %s)", names(claimed), EnvTrust)
	}
	if r.Policy != "" {
		return fmt.Sprintf("unsigned: no approvals (%d required; trust file %s)", r.Required, r.Policy)
	}
	return "unsigned"
}

// Problems lists the signatures that do not count, a line each: which,
// by whom and why.
func (r *Report) Problems() []string {
	var out []string
	for _, f := range r.Findings {
		if f.Status == Approved || f.Status == Verified {
			continue
		}
		out = append(out, fmt.Sprintf("signature %d by %q (%s %s): %s: %s", f.Index, escape.String(f.Signer), f.Signature.Kind, escape.String(f.Signature.Key), f.Status, escape.String(f.Reason)))
	}
	return out
}

func names(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = escape.String(s)
	}
	switch len(q) {
	case 0:
		return "nobody"
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}
