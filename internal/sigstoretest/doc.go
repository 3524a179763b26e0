// Package sigstoretest makes Sigstore bundles inside a test process, for
// the tests of Sigstore approvals: no Fulcio, Rekor or timestamping
// authority is reachable where mcpform is tested, and what the code under
// test reads is a real bundle's protobuf-specs JSON.
//
// Its one job is the test Sigstore: sigstore-go's in-process one
// (ca.VirtualSigstore: its Rekor signs entries' promises and checkpoints,
// its TSA RFC 3161 timestamps) with a Fulcio of its own in front, whose
// certificates embed an SCT of a CT log the trusted material lists (the
// virtual one's carry none, and a keyless approval requires one). New
// makes one; Keyless and Keyed build the bundle cosign sign-blob --bundle
// would write, field by field, so a test can damage any part of it before
// JSON; TrustedRootJSON is the trusted root a trust file's trusted_root
// names.
//
// Its neighbours: the tests of approval (verifySigstore, Check) and of
// cmd/mcpform (sign -import, verify, show with a trust file).
package sigstoretest
