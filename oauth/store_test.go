package oauth

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func testRecord(url string) *Record {
	return &Record{
		URL: url, Resource: url, Issuer: "https://as.example.com",
		ClientID: "client-1", ClientSecret: "client-secret", TokenURL: "https://as.example.com/token",
		Scopes: []string{"read"}, StepUp: []string{"write"},
		Token: Token{AccessToken: "access-1", RefreshToken: "refresh-1", Expiry: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)},
	}
}

// A record saved is the record loaded, in a 0600 file in a 0700
// directory; Delete removes it, and reports whether there was one.
func TestStoreRoundTrip(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "state", "oauth")}
	const url = "https://mcp.example.com/mcp"
	if _, err := s.Load(url); !errors.Is(err, ErrNoLogin) {
		t.Fatalf("Load before any login: %v, want ErrNoLogin", err)
	}
	want := testRecord(url)
	if err := s.Save(want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(url)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("loaded %+v, saved %+v", got, want)
	}
	fi, err := os.Stat(s.path(url))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the record's mode is %v, want 0600", fi.Mode().Perm())
	}
	di, err := os.Stat(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Errorf("the store's directory's mode is %v, want 0700", di.Mode().Perm())
	}
	if entries, _ := os.ReadDir(s.Dir); len(entries) != 1 {
		t.Errorf("the store holds %d files after one save, want 1 (no temporary file left)", len(entries))
	}
	// Another server's record is another file.
	if err := s.Save(testRecord(url + "?tenant=2")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(url); err != nil || got.URL != url {
		t.Errorf("after another server's save, Load(%q) = %v, %v", url, got, err)
	}

	had, err := s.Delete(url)
	if err != nil || !had {
		t.Fatalf("Delete = %v, %v; want true, nil", had, err)
	}
	if _, err := s.Load(url); !errors.Is(err, ErrNoLogin) {
		t.Errorf("Load after Delete: %v, want ErrNoLogin", err)
	}
	if had, err := s.Delete(url); err != nil || had {
		t.Errorf("a second Delete = %v, %v; want false, nil", had, err)
	}
}

// A directory that exists with a looser mode is tightened by Save.
func TestStoreSaveTightensDir(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "oauth")}
	if err := os.Mkdir(s.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(testRecord("https://mcp.example.com/mcp")); err != nil {
		t.Fatal(err)
	}
	if di, _ := os.Stat(s.Dir); di.Mode().Perm() != 0o700 {
		t.Errorf("the store's directory's mode is %v after Save, want 0700", di.Mode().Perm())
	}
}

// Load refuses, saying to remove the file and log in again: a record
// others can read (as ssh refuses a readable key), a record of another
// server at the path, a file larger than a record can be, and one that
// is no record.
func TestStoreLoadRefuses(t *testing.T) {
	const url = "https://mcp.example.com/mcp"
	for name, setup := range map[string]func(t *testing.T, s Store){
		"readable by group": func(t *testing.T, s Store) { chmod(t, s.path(url), 0o640) },
		"readable by all":   func(t *testing.T, s Store) { chmod(t, s.path(url), 0o644) },
		"writable by group": func(t *testing.T, s Store) { chmod(t, s.path(url), 0o620) },
		"another server's": func(t *testing.T, s Store) {
			other := testRecord("https://evil.example.com/mcp")
			if err := s.Save(other); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(s.path(other.URL), s.path(url)); err != nil {
				t.Fatal(err)
			}
		},
		"oversized": func(t *testing.T, s Store) {
			big := testRecord(url)
			big.Scopes = []string{strings.Repeat("s", maxRecord)}
			if err := s.Save(big); err != nil {
				t.Fatal(err)
			}
		},
		"no record": func(t *testing.T, s Store) {
			if err := os.WriteFile(s.path(url), []byte(`{"url":"`+url+`"}`), 0o600); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := Store{Dir: t.TempDir()}
			if err := s.Save(testRecord(url)); err != nil {
				t.Fatal(err)
			}
			setup(t, s)
			r, err := s.Load(url)
			if err == nil {
				t.Fatalf("Load accepted it: %+v", r)
			}
			if errors.Is(err, ErrNoLogin) || !strings.Contains(err.Error(), "remove it and run mcpform login again") || !strings.Contains(err.Error(), s.path(url)) {
				t.Errorf("the error does not name the file and what to do: %v", err)
			}
		})
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// The file's name is a digest of the URL: no URL names a path of its own.
func TestStorePathIsDigest(t *testing.T) {
	s := Store{Dir: "/state/oauth"}
	for _, url := range []string{"https://x.example.com/../../etc/passwd", "https://x.example.com/a/b", "../../x"} {
		p := s.path(url)
		if filepath.Dir(p) != s.Dir || strings.Contains(filepath.Base(p), "/") || !strings.HasSuffix(p, ".json") || len(filepath.Base(p)) != 24+len(".json") {
			t.Errorf("path(%q) = %q, not a digest in the store's directory", url, p)
		}
	}
	if s.path("https://a.example.com") == s.path("https://b.example.com") {
		t.Error("two URLs share a path")
	}
}

func TestDefaultDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if d, err := DefaultDir(env(map[string]string{"XDG_STATE_HOME": "/xdg", "HOME": "/home/u"})); err != nil || d != "/xdg/mcpform/oauth" {
		t.Errorf("with XDG_STATE_HOME: %q, %v", d, err)
	}
	if d, err := DefaultDir(env(map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/home/u"})); err != nil || d != "/home/u/.local/state/mcpform/oauth" {
		t.Errorf("with a relative XDG_STATE_HOME: %q, %v", d, err)
	}
	if _, err := DefaultDir(env(nil)); err == nil || !strings.Contains(err.Error(), "set XDG_STATE_HOME or HOME") {
		t.Errorf("with neither: %v", err)
	}
}
