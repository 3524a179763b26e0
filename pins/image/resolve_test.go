package image

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/mcpform/mcpform/internal/imagetest"
)

// testRegistry is an in-process registry on 127.0.0.1 (internal/imagetest):
// the registry protocol for real, with no container engine. It returns the
// registry's host:port and the number of requests served.
func testRegistry(t testing.TB) (string, *atomic.Int64) {
	r := imagetest.Start(t)
	return r.Host, &r.Requests
}

// pushImage pushes a random image under ref and returns its digest.
func pushImage(t testing.TB, ref string) v1.Hash {
	t.Helper()
	h, err := v1.NewHash(imagetest.Push(t, ref))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustParse(t testing.TB, argv ...string) *Spec {
	t.Helper()
	spec, ok, err := Parse(argv)
	if !ok || err != nil {
		t.Fatalf("Parse(%q): %v %v", argv, ok, err)
	}
	return spec
}

// anonymous keeps the tests from reading this machine's docker config.
var anonymous = Options{Keychain: authn.NewMultiKeychain()}

// TestResolve: a tag resolves to the digest of the image pushed under it,
// a re-push under the same tag to the new image's, and the digest names
// the image the registry serves.
func TestResolve(t *testing.T) {
	reg, _ := testRegistry(t)
	ref := reg + "/acme/srv:1.2"
	first := pushImage(t, ref)
	spec := mustParse(t, "docker", "run", "-i", "--rm", ref, "stdio")
	start := time.Now()
	pin, err := Resolve(context.Background(), spec, anonymous)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Resolve against the in-process registry: %v", time.Since(start))
	if pin.Digest != first.String() || pin.Reference != ref || pin.FromReference {
		t.Fatalf("pin = %+v, want digest %s of %s", pin, first, ref)
	}
	if pin.MediaType != "application/vnd.docker.distribution.manifest.v2+json" {
		t.Errorf("media type %q", pin.MediaType)
	}
	argv := Argv(spec, pin)
	if want := reg + "/acme/srv@" + first.String(); argv[4] != want {
		t.Errorf("argv %q, want image %s", argv, want)
	}
	// The rewritten reference is one the registry serves, as that image.
	d, err := name.NewDigest(argv[4])
	if err != nil {
		t.Fatal(err)
	}
	got, err := remote.Image(d)
	if err != nil {
		t.Fatalf("pull by the pinned digest: %v", err)
	}
	if gd, _ := got.Digest(); gd != first {
		t.Errorf("pulled %s by digest, pushed %s", gd, first)
	}

	second := pushImage(t, ref)
	if second == first {
		t.Fatal("two random images with one digest")
	}
	pin2, err := Resolve(context.Background(), spec, anonymous)
	if err != nil {
		t.Fatal(err)
	}
	if pin2.Digest != second.String() {
		t.Errorf("after a re-push under the tag: %s, want %s (was %s)", pin2.Digest, second, first)
	}
}

// TestResolveIndex: a multi-platform index is pinned by the index's
// digest, which is what docker run pulls, with the index's media type.
func TestResolveIndex(t *testing.T) {
	reg, _ := testRegistry(t)
	idx, err := random.Index(128, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(reg + "/acme/multi:latest")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(tag, idx); err != nil {
		t.Fatal(err)
	}
	want, _ := idx.Digest()
	mt, _ := idx.MediaType()
	pin, err := Resolve(context.Background(), mustParse(t, "podman", "run", reg+"/acme/multi"), anonymous)
	if err != nil {
		t.Fatal(err)
	}
	if pin.Digest != want.String() || pin.MediaType != string(mt) {
		t.Errorf("pin = %+v, want the index %s (%s)", pin, want, mt)
	}
}

// TestResolveDigestReference: a reference that carries a digest is pinned
// by it with no request at all, its tag ignored as docker ignores it.
func TestResolveDigestReference(t *testing.T) {
	reg, n := testRegistry(t)
	ref := reg + "/acme/srv:1.2@" + sum
	pin, err := Resolve(context.Background(), mustParse(t, "docker", "run", ref), anonymous)
	if err != nil {
		t.Fatal(err)
	}
	if pin.Digest != sum || !pin.FromReference || pin.MediaType != "" {
		t.Errorf("pin = %+v", pin)
	}
	if n.Load() != 0 {
		t.Errorf("%d requests to the registry for a digest reference", n.Load())
	}
}

func TestResolveErrors(t *testing.T) {
	reg, _ := testRegistry(t)
	pushImage(t, reg+"/acme/srv:1.2")
	_, err := Resolve(context.Background(), mustParse(t, "docker", "run", reg+"/acme/srv:9.9"), anonymous)
	if err == nil || !strings.Contains(err.Error(), "mcpform cannot resolve the image "+reg+"/acme/srv:9.9") ||
		!strings.Contains(err.Error(), "the registry has no such image or tag") {
		t.Errorf("unknown tag: %v", err)
	}
	_, err = Resolve(context.Background(), mustParse(t, "docker", "run", reg+"/acme/none:1"), anonymous)
	if err == nil || !strings.Contains(err.Error(), "no such image or tag") {
		t.Errorf("unknown repository: %v", err)
	}

	// A registry that does not answer: the timeout bounds the wait.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	_, err = Resolve(context.Background(), mustParse(t, "docker", "run", l.Addr().String()+"/acme/srv:1"), Options{Keychain: anonymous.Keychain, Timeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "mcpform cannot resolve the image") || time.Since(start) > 5*time.Second {
		t.Errorf("a silent registry: %v after %v", err, time.Since(start))
	}
}

// TestResolvePlainHTTPRefused: a registry off the loopback interface is
// never asked over plain http, though go-containerregistry would fall back
// to http for a private address. Every connection goes to the in-process
// registry (plain http) whatever address the reference names, so a plain
// http request would succeed if it were sent: none reaches it.
func TestResolvePlainHTTPRefused(t *testing.T) {
	reg, n := testRegistry(t)
	pushImage(t, reg+"/acme/srv:1.2")
	var dialed atomic.Int64
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		dialed.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, reg)
	}
	for _, host := range []string{"192.168.77.1:5000", "10.1.2.3", "registry.example:5000"} {
		before := n.Load()
		_, err := Resolve(context.Background(), mustParse(t, "docker", "run", host+"/acme/srv:1.2"), Options{Keychain: anonymous.Keychain, Transport: tr, Timeout: 5 * time.Second})
		if err == nil {
			t.Errorf("%s: resolved over plain http", host)
			continue
		}
		if got := n.Load() - before; got != 0 {
			t.Errorf("%s: %d requests reached the plain http registry: %v", host, got, err)
		}
		if !strings.Contains(err.Error(), "mcpform cannot resolve the image "+host+"/acme/srv:1.2") {
			t.Errorf("%s: %v", host, err)
		}
	}
	if dialed.Load() == 0 {
		t.Error("no connection was tried: the test proves nothing")
	}
	// The same transport reaches a loopback registry over http.
	if _, err := Resolve(context.Background(), mustParse(t, "docker", "run", reg+"/acme/srv:1.2"), Options{Keychain: anonymous.Keychain, Transport: tr}); err != nil {
		t.Errorf("loopback over the same transport: %v", err)
	}
}

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "reg.localhost": true, "127.0.0.1": true, "127.8.9.1": true, "::1": true, "[::1]": true,
		"10.0.0.1": false, "192.168.1.1": false, "localhost.example": false, "example.com": false, "": false, "0.0.0.0": false,
	} {
		if got := Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v", host, got)
		}
	}
}

// BenchmarkResolve: one tag resolution against the in-process registry
// (a HEAD of the manifest after the registry's ping), what plan adds per
// container server before its probe, without the network's latency.
func BenchmarkResolve(b *testing.B) {
	reg, _ := testRegistry(b)
	ref := reg + "/acme/srv:1.2"
	pushImage(b, ref)
	spec := mustParse(b, "docker", "run", "-i", ref)
	for b.Loop() {
		if _, err := Resolve(context.Background(), spec, anonymous); err != nil {
			b.Fatal(err)
		}
	}
}

// noDigest hides Docker-Content-Digest from a response.
type noDigest struct{ http.ResponseWriter }

func (w noDigest) WriteHeader(code int) {
	w.Header().Del("Docker-Content-Digest")
	w.ResponseWriter.WriteHeader(code)
}

// TestResolveHeadWithoutDigest: a registry whose HEAD of a manifest gives
// no digest is asked with a GET, and the digest is the one of the manifest
// it serves (go-containerregistry computes it from the bytes).
func TestResolveHeadWithoutDigest(t *testing.T) {
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	var heads, gets atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/manifests/") {
			switch r.Method {
			case http.MethodHead:
				heads.Add(1)
				w = noDigest{w}
			case http.MethodGet:
				gets.Add(1)
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/acme/srv:1.2"
	want := pushImage(t, ref)
	heads.Store(0) // the push asks too
	gets.Store(0)
	pin, err := Resolve(context.Background(), mustParse(t, "docker", "run", ref), anonymous)
	if err != nil {
		t.Fatal(err)
	}
	if pin.Digest != want.String() || heads.Load() != 1 || gets.Load() != 1 {
		t.Errorf("pin %s (pushed %s) after %d HEAD and %d GET of the manifest; want one of each", pin.Digest, want, heads.Load(), gets.Load())
	}
}
