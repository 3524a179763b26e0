package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpform/mcpform/internal/lockedfile"
	"golang.org/x/oauth2"
)

// A Store keeps one Record per remote server URL, each in a file of its
// own under Dir: mode 0600 in a 0700 directory, written whole (a temporary
// file renamed over the old one), never in the repository. A file another
// user could read is refused, as ssh refuses a readable private key.
type Store struct{ Dir string }

// DefaultDir returns $XDG_STATE_HOME/mcpform/oauth, or
// ~/.local/state/mcpform/oauth when XDG_STATE_HOME is unset (beside the
// audit log and the taint state).
func DefaultDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mcpform", "oauth"), nil
	}
	home := getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return "", errors.New("no place for OAuth tokens: set XDG_STATE_HOME or HOME")
	}
	return filepath.Join(home, ".local", "state", "mcpform", "oauth"), nil
}

// Record is what a login got for one server.
type Record struct {
	// URL is the server's endpoint, as mcp.hcl names it.
	URL string `json:"url"`
	// Resource is the protected resource the token was issued for, and
	// Issuer the authorization server that issued it.
	Resource string `json:"resource"`
	Issuer   string `json:"issuer"`
	// ResourceMetadata is where the server's challenge said its
	// protected resource metadata is ("" for the well-known places).
	ResourceMetadata string `json:"resourceMetadata,omitempty"`
	// ClientID, ClientSecret (dynamic registration may issue one),
	// TokenURL and AuthStyle are what a refresh needs.
	ClientID     string           `json:"clientId"`
	ClientSecret string           `json:"clientSecret,omitempty"`
	TokenURL     string           `json:"tokenUrl"`
	AuthStyle    oauth2.AuthStyle `json:"authStyle,omitempty"`
	// Scopes are the scopes the login asked for; StepUp the ones a
	// server asked for since (403 insufficient_scope), which the next
	// login asks for too.
	Scopes []string `json:"scopes,omitempty"`
	StepUp []string `json:"stepUp,omitempty"`
	// Token is the access token, with its refresh token and expiry.
	Token Token `json:"token"`
}

// Token is the part of an oauth2.Token the store keeps.
type Token struct {
	AccessToken  string    `json:"accessToken"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
}

func tokenOf(t *oauth2.Token) Token {
	return Token{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, Expiry: t.Expiry}
}

func (t Token) oauth2() *oauth2.Token {
	return &oauth2.Token{AccessToken: t.AccessToken, TokenType: "Bearer", RefreshToken: t.RefreshToken, Expiry: t.Expiry}
}

// ErrNoLogin is Load's error for a server nobody has logged in to.
var ErrNoLogin = errors.New("no login")

// path is where url's record lives: a digest of the URL names the file,
// so that no URL can name a path of its own.
func (s Store) path(url string) string {
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:12])+".json")
}

// Load reads url's record.
func (s Store) Load(url string) (*Record, error) {
	path := s.path(url)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoLogin
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s holds OAuth tokens and others can read it (mode %v): remove it and run mcpform login again", path, fi.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxRecord {
		return nil, fmt.Errorf("%s is larger than a login record can be: remove it and run mcpform login again", path)
	}
	r, err := parseRecord(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v: remove it and run mcpform login again", path, err)
	}
	if r.URL != url {
		return nil, fmt.Errorf("%s is the login of %q, not of %q: remove it and run mcpform login again", path, r.URL, url)
	}
	return r, nil
}

// maxRecord bounds a record file.
const maxRecord = 1 << 20

// parseRecord reads a record file: JSON with the fields a refresh needs.
func parseRecord(b []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("not a login record: %v", err)
	}
	switch {
	case r.URL == "":
		return nil, errors.New("the login record names no server")
	case r.Token.AccessToken == "":
		return nil, errors.New("the login record holds no access token")
	case r.Token.RefreshToken != "" && (r.TokenURL == "" || r.ClientID == ""):
		return nil, errors.New("the login record holds a refresh token but not where to refresh it")
	case r.TokenURL != "" && !httpsOrLoopback(r.TokenURL):
		return nil, errors.New("the login record's token endpoint is not an https URL")
	}
	return &r, nil
}

// Save writes r (replacing url's record, if any).
func (s Store) Save(r *Record) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(s.Dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.Dir, ".login-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path(r.URL))
}

// lock holds url's record for one process (a refresh), until the
// returned func is called. Where no file lock is to be had, it holds
// nothing: a refresh then races, as it would without mcpform.
func (s Store) lock(url string) (unlock func()) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return func() {}
	}
	f, err := os.OpenFile(s.path(url)+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return func() {}
	}
	if lockedfile.Lock(f) != nil {
		f.Close()
		return func() {}
	}
	return func() {
		lockedfile.Unlock(f)
		f.Close()
	}
}

// Delete removes url's record; it reports whether there was one.
func (s Store) Delete(url string) (bool, error) {
	err := os.Remove(s.path(url))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
