package image

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/mcpform/mcpform/internal/escape"
)

// digestRE is the only digest a pin holds: sha256, lowercase hex.
var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// Pin is what Resolve pinned of a Spec's image.
type Pin struct {
	// Reference is IMAGE as written in the argv.
	Reference string
	// Digest is the manifest's or index's digest ("sha256:…").
	Digest string
	// MediaType is the manifest's media type as the registry gave it (an
	// OCI or Docker image manifest or index); "" when the reference
	// carried the digest and the registry was not asked.
	MediaType string
	// FromReference is true when the digest came from the reference
	// itself (IMAGE@sha256:…); a tag beside it is ignored, as docker
	// ignores it.
	FromReference bool
}

// DefaultTimeout bounds Resolve when Options.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Options tune Resolve.
type Options struct {
	// Timeout bounds the whole resolution; 0 means DefaultTimeout.
	Timeout time.Duration
	// Keychain gives the registry's credentials; nil means
	// authn.DefaultKeychain (docker's config.json and credential helpers).
	Keychain authn.Keychain
	// Transport carries the requests; nil means remote.DefaultTransport.
	// Resolve wraps it so that nothing but a loopback registry is asked
	// over plain http.
	Transport http.RoundTripper
}

// manifestTypes are the media types a pinned digest may name: what docker
// run pulls. Schema 1 manifests are refused: their digest is not stable.
var manifestTypes = map[types.MediaType]bool{
	types.OCIImageIndex:         true,
	types.OCIManifestSchema1:    true,
	types.DockerManifestList:    true,
	types.DockerManifestSchema2: true,
}

// Resolve pins spec's image: the digest its reference names today. A
// reference with a digest is pinned by it without the network.
func Resolve(ctx context.Context, spec *Spec, opts Options) (*Pin, error) {
	if d, ok := spec.Ref.(name.Digest); ok {
		return &Pin{Reference: spec.Image, Digest: d.DigestStr(), FromReference: true}, nil
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	kc := opts.Keychain
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	base := opts.Transport
	if base == nil {
		base = remote.DefaultTransport
	}
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(kc), remote.WithTransport(httpsOnly{base}),
		remote.WithUserAgent("mcpform")}
	img := escape.String(spec.Image)
	registry := escape.String(spec.Ref.Context().RegistryStr())
	desc, err := remote.Head(spec.Ref, ropts...)
	if err != nil && !definite(err) {
		// A registry that answers HEAD without a digest (or not at all):
		// read the manifest, whose digest remote computes itself.
		var got *remote.Descriptor
		if got, err = remote.Get(spec.Ref, ropts...); err == nil {
			desc = &got.Descriptor
		}
	}
	if err != nil {
		what := "check that the image exists and the tag is right (docker pull " + img + "), that the registry is reachable, and that docker login " + registry + " was done if it is private; then plan again"
		var te *transport.Error
		if errors.As(err, &te) {
			switch te.StatusCode {
			case http.StatusNotFound:
				what = "the registry has no such image or tag: check the name and tag in mcp.hcl (docker pull " + img + ")"
			case http.StatusUnauthorized, http.StatusForbidden:
				what = "the registry refused mcpform's credentials: docker login " + registry + " (mcpform reads docker's credentials), then plan again"
			}
		}
		if errors.Is(err, errPlainHTTP) {
			what = "a registry is reached over https, or over plain http only on this machine's loopback interface (localhost, 127.0.0.1, [::1]), as docker does by default"
		}
		return nil, fmt.Errorf("mcpform cannot resolve the image %s to a digest (%s): %s", img, escape.String(err.Error()), what)
	}
	dg := desc.Digest.String()
	if !digestRE.MatchString(dg) {
		return nil, fmt.Errorf("the registry %s names the image %s by %s, not a sha256 digest: mcpform cannot pin it", registry, img, escape.String(dg))
	}
	if !manifestTypes[desc.MediaType] {
		return nil, fmt.Errorf("the registry %s serves the image %s as %s, not an OCI or Docker image manifest or index: mcpform cannot pin it", registry, img, escape.String(string(desc.MediaType)))
	}
	return &Pin{Reference: spec.Image, Digest: dg, MediaType: string(desc.MediaType)}, nil
}

// definite is a registry's answer that another request would not change:
// no such manifest, or no access to it.
func definite(err error) bool {
	var te *transport.Error
	if errors.As(err, &te) {
		switch te.StatusCode {
		case http.StatusNotFound, http.StatusUnauthorized, http.StatusForbidden:
			return true
		}
	}
	return errors.Is(err, errPlainHTTP) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

var errPlainHTTP = errors.New("plain http to a registry off the loopback interface is refused")

// httpsOnly refuses every plain http request to a host that is not on the
// loopback interface: go-containerregistry would also try plain http for a
// registry on a private (RFC 1918) address, and follow a redirect to one.
type httpsOnly struct{ base http.RoundTripper }

func (h httpsOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" && !(req.URL.Scheme == "http" && Loopback(req.URL.Hostname())) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Redacted(), errPlainHTTP)
	}
	return h.base.RoundTrip(req)
}

// Loopback says whether host (without a port) is this machine's loopback
// interface: localhost (or a name under .localhost), 127.0.0.0/8 or ::1.
func Loopback(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
