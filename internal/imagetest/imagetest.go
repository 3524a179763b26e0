package imagetest

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Registry is a running in-process registry.
type Registry struct {
	// Host is its host:port (127.0.0.1:N), the registry part of an image
	// reference.
	Host string
	// Requests counts the requests it has served.
	Requests atomic.Int64
	srv      *httptest.Server
}

// Start serves a fresh, empty registry until the test ends.
func Start(t testing.TB) *Registry {
	t.Helper()
	r := &Registry{}
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.Requests.Add(1)
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	r.Host = strings.TrimPrefix(r.srv.URL, "http://")
	return r
}

// Close stops the registry: a resolution then fails to connect.
func (r *Registry) Close() { r.srv.Close() }

// Push pushes a new random image under ref (a tag reference) and returns
// its digest ("sha256:…"): pushing again under the same tag moves the tag
// to another image, as a re-tag on a real registry does.
func Push(t testing.TB, ref string) string {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}
