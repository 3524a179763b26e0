package provenance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/strictjson"
)

// MaxBody bounds what Fetch reads of the registry's answer: a version's
// attestations are two bundles of about 10 KiB each.
const MaxBody = 8 << 20

// The predicate types of the attestations npm's registry serves.
const (
	// SLSAv1 and SLSAv02 are the build provenance npm publish
	// --provenance writes (v0.2 before npm 9.7).
	SLSAv1  = "https://slsa.dev/provenance/v1"
	SLSAv02 = "https://slsa.dev/provenance/v0.2"
	// Publish is the registry's own publish attestation.
	Publish = "https://github.com/npm/attestation/tree/main/specs/publish/v0.1"
)

// MaxAttestations bounds how many attestations one answer may hold.
const MaxAttestations = 16

// Attestation is one entry of the registry's answer: the predicate type it
// declares and the Sigstore bundle, as served.
type Attestation struct {
	PredicateType string          `json:"predicateType"`
	Bundle        json.RawMessage `json:"bundle"`
}

// URL is where registry serves the attestations of name@version, with a
// scoped name's slash escaped as npm escapes it (%2f); registry ends in
// "/".
func URL(registry, name, version string) string {
	return registry + "-/npm/v1/attestations/" + strings.Replace(name, "/", "%2f", 1) + "@" + version
}

// Fetch reads the attestations registry publishes for name@version. A 404
// is a version without attestations: nil and no error. Any other status,
// a body over MaxBody or one Parse refuses is an error.
func Fetch(ctx context.Context, client *http.Client, registry, name, version string) ([]Attestation, error) {
	if client == nil {
		client = http.DefaultClient
	}
	u := URL(registry, name, version)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", escape.String(u), err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, nil
	default:
		return nil, fmt.Errorf("GET %s: %s", escape.String(u), escape.String(resp.Status))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", escape.String(u), err)
	}
	if len(data) > MaxBody {
		return nil, fmt.Errorf("GET %s: the answer is larger than %d MiB", escape.String(u), MaxBody>>20)
	}
	atts, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", escape.String(u), err)
	}
	return atts, nil
}

// Parse decodes the registry's answer strictly: strict JSON (no duplicate
// keys, valid UTF-8), an object with exactly the key "attestations", a
// list of 1 to MaxAttestations objects with exactly the keys
// predicateType (a non-empty string) and bundle (an object). The bundles
// themselves are decoded by Verify.
func Parse(data []byte) ([]Attestation, error) {
	if err := strictjson.Check(data); err != nil {
		return nil, fmt.Errorf("the attestations are not strict JSON: %w", err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, errors.New("the attestations are not a JSON object")
	}
	list, ok := doc["attestations"]
	if !ok || len(doc) != 1 {
		return nil, errors.New(`the attestations are not an object with exactly the key "attestations"`)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(list, &raws); err != nil || !startsWith(list, '[') {
		return nil, errors.New(`"attestations" is not a list`)
	}
	if len(raws) == 0 || len(raws) > MaxAttestations {
		return nil, fmt.Errorf(`"attestations" holds %d entries, not 1 to %d`, len(raws), MaxAttestations)
	}
	out := make([]Attestation, 0, len(raws))
	for i, raw := range raws {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil || m == nil {
			return nil, fmt.Errorf("attestation %d is not an object", i)
		}
		pt, hasPT := m["predicateType"]
		b, hasB := m["bundle"]
		if len(m) != 2 || !hasPT || !hasB {
			return nil, fmt.Errorf(`attestation %d is not an object with exactly the keys "predicateType" and "bundle"`, i)
		}
		a := Attestation{Bundle: b}
		if err := json.Unmarshal(pt, &a.PredicateType); err != nil || !startsWith(pt, '"') || a.PredicateType == "" {
			return nil, fmt.Errorf("attestation %d: predicateType is not a non-empty string", i)
		}
		if !startsWith(b, '{') {
			return nil, fmt.Errorf("attestation %d (%s): bundle is not an object", i, escape.String(a.PredicateType))
		}
		out = append(out, a)
	}
	return out, nil
}

func startsWith(raw json.RawMessage, c byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == c
}
