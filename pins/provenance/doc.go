// Package provenance verifies an npm package's provenance attestation: the
// Sigstore bundle in which the GitHub Actions workflow that built the
// tarball signed, with a short-lived Fulcio certificate logged in Rekor,
// an in-toto statement naming the package, its version and the tarball's
// sha512. A verified attestation says which source repository and which
// workflow the pinned tarball came from.
//
//   - Fetch reads the attestations the registry publishes for one version
//     (GET <registry>-/npm/v1/attestations/<name>@<version>, bounded by
//     MaxBody, strict JSON); a 404 is a version without attestations.
//   - Verify checks the SLSA provenance attestation among them with
//     sigstore-go, the reference verifier of Sigstore bundles: the
//     certificate chains to a Fulcio CA of the trusted root, the signature
//     and its Rekor inclusion and the certificate's SCT verify, the
//     certificate was issued by GitHub Actions' OIDC issuer to a workflow
//     (its SAN), and the statement's subject is pkg:npm/<name>@<version>
//     with the tarball's sha512. It returns the Provenance: repository,
//     workflow and commit, read from the certificate's Fulcio extensions.
//   - TrustedRoot is the Sigstore trusted root Verify checks against: the
//     file MCPFORM_TRUSTED_ROOT names, else trusted_root.json in mcpform's
//     configuration directory, else the public-good root embedded in
//     mcpform (sigstore/root-signing's targets/trusted_root.json). No TUF
//     client refreshes it: replacing the file is the refresh.
//
// npm's publish attestation (signed with the registry's key, not by a
// build) is read but not verified: it says the registry saw the publish,
// which the tarball's integrity already pins.
//
// Its neighbours: plan calls Fetch and Verify after pins/npm resolved the
// package's tarball integrity, and records the Provenance in the lock
// (mcpform.npm.provenance); nothing else imports it.
package provenance
