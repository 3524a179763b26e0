package provenance

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"

	"github.com/mcpform/mcpform/internal/escape"
)

// Issuer is the OIDC issuer of GitHub Actions' workflow tokens, the only
// issuer whose certificates Verify accepts: npm publishes provenance from
// GitHub Actions (and GitLab CI, which mcpform does not accept yet).
const Issuer = "https://token.actions.githubusercontent.com"

// workflowSAN is a certificate's SAN for a GitHub Actions workflow:
// https://github.com/OWNER/REPO/.github/workflows/FILE@REF.
var workflowSAN = regexp.MustCompile(`^https://github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/(\.github/workflows/[^@\s]+@[^\s]+)$`)

// repositoryURI is a GitHub repository's URL, as Fulcio records it.
var repositoryURI = regexp.MustCompile(`^https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// gitCommit is a git commit id, as Fulcio records the source digest.
var gitCommit = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// Provenance is what a verified attestation says of a tarball's origin.
type Provenance struct {
	// Repository is the source repository's URL
	// (https://github.com/OWNER/REPO).
	Repository string
	// Workflow is the workflow that built and signed it, as path@ref
	// (".github/workflows/release.yml@refs/heads/main") when it is in
	// Repository, else its full URL (a reusable workflow elsewhere).
	Workflow string
	// Commit is the source commit built, "" when the certificate does not
	// say.
	Commit string
}

// Purl is the package URL npm's provenance names a package version by:
// pkg:npm/<name>@<version>, a scope's "@" escaped as %40.
func Purl(name, version string) string {
	return "pkg:npm/" + strings.Replace(name, "@", "%40", 1) + "@" + version
}

// Verify checks the SLSA provenance among atts for name@version, whose
// tarball has the SRI sha512 integrity, against trusted, and returns what
// it says. atts without a provenance attestation (none at all, or only
// the registry's publish attestation) are nil and no error: the registry
// publishes no provenance for the version. Every failure is an error that
// names the check that failed: the version's provenance does not hold.
func Verify(atts []Attestation, name, version, integrity string, trusted root.TrustedMaterial) (*Provenance, error) {
	var provs []*Attestation
	for i := range atts {
		switch atts[i].PredicateType {
		case SLSAv1, SLSAv02:
			provs = append(provs, &atts[i])
		}
	}
	if len(provs) == 0 {
		return nil, nil
	}
	p, err := (*Provenance)(nil), fmt.Errorf("the registry serves %d provenance attestations for it, and mcpform verifies exactly one", len(provs))
	if len(provs) == 1 {
		p, err = verifyOne(provs[0], name, version, integrity, trusted)
	}
	if err != nil {
		return nil, fmt.Errorf("the provenance attestation of %s@%s does not verify: %w; the registry serves a tarball whose claimed origin mcpform cannot confirm: do not lock this version (pin another, or report it to the package's maintainers); if the trusted root is out of date, refresh it (MCPFORM_TRUSTED_ROOT or %s, docs/LOCKFILE.md)",
			escape.String(name), escape.String(version), err, ConfigFile)
	}
	return p, nil
}

func verifyOne(a *Attestation, name, version, integrity string, trusted root.TrustedMaterial) (*Provenance, error) {
	digest, err := sha512Of(integrity)
	if err != nil {
		return nil, err
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(a.Bundle); err != nil {
		return nil, fmt.Errorf("its bundle is not a Sigstore bundle: %s", escape.String(err.Error()))
	}
	if b.GetDsseEnvelope() == nil {
		return nil, errors.New("its bundle holds no DSSE envelope (an in-toto statement)")
	}
	v, err := verify.NewVerifier(trusted,
		verify.WithSignedCertificateTimestamps(1), verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1))
	if err != nil {
		return nil, fmt.Errorf("the trusted root cannot verify bundles: %s", escape.String(err.Error()))
	}
	id, err := verify.NewShortCertificateIdentity(Issuer, "", "", workflowSAN.String())
	if err != nil {
		return nil, err
	}
	res, err := v.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha512", digest), verify.WithCertificateIdentity(id)))
	if err != nil {
		return nil, fmt.Errorf("sigstore: %s", escape.String(err.Error()))
	}
	st := res.Statement
	if st == nil {
		return nil, errors.New("its bundle's envelope holds no in-toto statement")
	}
	if st.GetPredicateType() != a.PredicateType {
		return nil, fmt.Errorf("its statement's predicate type %s is not the %s the registry lists it as", escape.String(st.GetPredicateType()), escape.String(a.PredicateType))
	}
	purl, want := Purl(name, version), hex.EncodeToString(digest)
	subjects := st.GetSubject()
	if len(subjects) != 1 || subjects[0].GetName() != purl || subjects[0].GetDigest()["sha512"] != want {
		var got []string
		for _, s := range subjects {
			got = append(got, s.GetName()+" sha512 "+s.GetDigest()["sha512"])
		}
		return nil, fmt.Errorf("its statement's subject is %s, not %s with the tarball's sha512 %s", escape.String(strings.Join(got, ", ")), escape.String(purl), want)
	}
	if res.Signature == nil || res.Signature.Certificate == nil {
		return nil, errors.New("it was not signed with a certificate")
	}
	c := res.Signature.Certificate
	m := workflowSAN.FindStringSubmatch(c.SubjectAlternativeName)
	if m == nil {
		return nil, fmt.Errorf("its certificate's SAN %s is not a GitHub Actions workflow", escape.String(c.SubjectAlternativeName))
	}
	p := &Provenance{Repository: c.SourceRepositoryURI, Commit: c.SourceRepositoryDigest}
	if p.Repository == "" && c.GithubWorkflowRepository != "" {
		// Certificates issued before Fulcio's 2023 extensions name the
		// repository as OWNER/REPO only.
		p.Repository = "https://github.com/" + c.GithubWorkflowRepository
	}
	if p.Commit == "" {
		p.Commit = c.GithubWorkflowSHA
	}
	if !repositoryURI.MatchString(p.Repository) {
		return nil, fmt.Errorf("its certificate names no GitHub source repository (%s)", escape.String(p.Repository))
	}
	if p.Commit != "" && !gitCommit.MatchString(p.Commit) {
		return nil, fmt.Errorf("its certificate's source commit %s is not a git commit id", escape.String(p.Commit))
	}
	p.Workflow = c.SubjectAlternativeName
	if strings.EqualFold("https://github.com/"+m[1], p.Repository) {
		p.Workflow = m[2]
	}
	return p, nil
}

// sha512Of decodes an SRI sha512 integrity's digest.
func sha512Of(integrity string) ([]byte, error) {
	b64, ok := strings.CutPrefix(integrity, "sha512-")
	d, err := base64.StdEncoding.DecodeString(b64)
	if !ok || err != nil || len(d) != 64 {
		return nil, fmt.Errorf("the tarball's integrity %s is not an SRI sha512 digest", escape.String(integrity))
	}
	if !bytes.Equal([]byte(base64.StdEncoding.EncodeToString(d)), []byte(b64)) {
		return nil, fmt.Errorf("the tarball's integrity %s is not canonical base64", escape.String(integrity))
	}
	return d, nil
}
