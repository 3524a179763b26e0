package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"slices"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/oauth"
)

// serverFlags is the command line of login and logout: variables for
// mcp.hcl, and one server name.
type serverFlags struct {
	varFlags
	name string
}

func parseLoginFlags(args []string, stderr io.Writer) (serverFlags, error) {
	return parseServerFlags("login", `Usage: mcpform login [flags] NAME

Signs mcpform in to the remote server NAME of mcp.hcl, declared with
auth { oauth = true }: the OAuth authorization code flow of MCP authorization,
in a browser (the URL is printed; $BROWSER, or xdg-open or open, opens it), with
the answer taken on a loopback address. The tokens go to
$XDG_STATE_HOME/mcpform/oauth (default ~/.local/state/mcpform/oauth), mode 0600,
never to mcp.hcl or mcp.lock; plan, verify and run use and refresh them.
`, args, stderr)
}

func parseLogoutFlags(args []string, stderr io.Writer) (serverFlags, error) {
	return parseServerFlags("logout", `Usage: mcpform logout [flags] NAME

Removes the OAuth tokens mcpform login stored for the remote server NAME of mcp.hcl.
`, args, stderr)
}

func parseServerFlags(command, usage string, args []string, stderr io.Writer) (serverFlags, error) {
	var f serverFlags
	fs := newFlagSet(command, stderr, usage)
	f.varFlags.register(fs)
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	if fs.NArg() != 1 {
		return f, usageFailure(fs, stderr, "mcpform %s takes one argument, a server name of mcp.hcl", command)
	}
	f.name = fs.Arg(0)
	return f, nil
}

func runLogin(ctx context.Context, io *stdio, f serverFlags) int {
	s, store, ok := oauthServer(io, "login", &f.varFlags, f.name)
	if !ok {
		return exitError
	}
	a := s.Auth
	secret := ""
	if a.ClientSecretEnv != "" {
		if secret = io.getenv(a.ClientSecretEnv); secret == "" {
			fmt.Fprintf(io.err, "mcpform login: %s's client_secret_env names %s, which is not set: export the client secret in %s\n", f.name, a.ClientSecretEnv, a.ClientSecretEnv)
			return exitError
		}
	}
	rec, err := oauth.Login(ctx, oauth.LoginConfig{
		Name: f.name, URL: s.URL, Headers: s.Headers, Scopes: a.Scopes,
		ClientID: a.ClientID, ClientSecret: secret, ClientMetadataURL: a.ClientMetadataURL,
		Store: store, Open: browser(io.getenv), Out: io.err,
	})
	if err != nil {
		fmt.Fprintf(io.err, "mcpform login: %s: %v\n", f.name, err)
		return exitError
	}
	scopes := "the server's default scopes"
	if len(rec.Scopes) > 0 {
		scopes = "scopes " + escape.String(strings.Join(rec.Scopes, " "))
	}
	fmt.Fprintf(io.out, "Logged in to %s: a token from %s for %s. mcpform plan, verify and run use it from now on.\n", f.name, escape.String(rec.Issuer), scopes)
	return exitOK
}

func runLogout(_ context.Context, io *stdio, f serverFlags) int {
	s, store, ok := oauthServer(io, "logout", &f.varFlags, f.name)
	if !ok {
		return exitError
	}
	had, err := store.Delete(s.URL)
	if err != nil {
		fmt.Fprintf(io.err, "mcpform logout: %v\n", err)
		return exitError
	}
	if !had {
		fmt.Fprintf(io.out, "mcpform holds no login for %s.\n", f.name)
		return exitOK
	}
	fmt.Fprintf(io.out, "Logged out of %s: its tokens are removed.\n", f.name)
	return exitOK
}

// oauthServer finds the server name of mcp.hcl, which must sign in with
// OAuth, and the store of its tokens.
func oauthServer(io *stdio, command string, v *varFlags, name string) (*lang.Server, oauth.Store, bool) {
	cfg, diags := lang.Load(".", v.options(io))
	writeLoadDiagnostics(io, diags, cfg.Files, useColor(io, io.err, false), true)
	if diags.HasErrors() {
		return nil, oauth.Store{}, false
	}
	var s *lang.Server
	for _, c := range cfg.Servers {
		if c.Name == name {
			s = c
		}
	}
	switch {
	case s == nil:
		fmt.Fprintf(io.err, "mcpform %s: mcp.hcl declares no server %q\n", command, escape.String(name))
		return nil, oauth.Store{}, false
	case s.URL == "" || s.Auth == nil || !s.Auth.OAuth:
		fmt.Fprintf(io.err, "mcpform %s: %s does not sign in with OAuth: only a remote server with auth { oauth = true } has a login\n", command, name)
		return nil, oauth.Store{}, false
	}
	dir, err := oauth.DefaultDir(io.getenv)
	if err != nil {
		fmt.Fprintf(io.err, "mcpform %s: %v\n", command, err)
		return nil, oauth.Store{}, false
	}
	return s, oauth.Store{Dir: dir}, true
}

// browser returns how login opens a URL: $BROWSER (a list separated by
// colons, each a command that gets the URL as its argument, or in place
// of %s), else xdg-open where there is a display, or open on macOS. The
// browser is started, not waited for: the answer comes to the loopback
// address.
func browser(getenv func(string) string) func(string) error {
	return func(url string) error {
		var tries [][]string
		if b := getenv("BROWSER"); b != "" {
			for _, c := range strings.Split(b, ":") {
				args := strings.Fields(c)
				if len(args) == 0 {
					continue
				}
				if i := slices.Index(args, "%s"); i >= 0 {
					args[i] = url
				} else {
					args = append(args, url)
				}
				tries = append(tries, args)
			}
		} else if runtime.GOOS == "darwin" {
			tries = append(tries, []string{"open", url})
		} else if getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != "" {
			tries = append(tries, []string{"xdg-open", url})
		}
		for _, args := range tries {
			cmd := exec.Command(args[0], args[1:]...)
			if err := cmd.Start(); err == nil {
				go cmd.Wait()
				return nil
			}
		}
		return errors.New("no browser here (set BROWSER, or open the URL on a machine with one: the answer must reach this one's loopback address)")
	}
}

// oauthTokens is plan.Options.OAuth: the stored login of each OAuth
// server, and what its metadata says now.
func oauthTokens(io *stdio) func(ctx context.Context, name string, r *lock.Remote) (mcp.OAuthHandler, error) {
	return func(ctx context.Context, name string, r *lock.Remote) (mcp.OAuthHandler, error) {
		store, client, err := oauthStore(io, r.URL)
		if err != nil {
			return nil, err
		}
		h, id, err := oauth.ForProbe(ctx, name, r.URL, store, client)
		if err != nil {
			return nil, err
		}
		r.Auth.Resource, r.Auth.Issuers = id.Resource, id.Issuers
		return h, nil
	}
}

// oauthStore is the token store, and the client that reaches what the
// server at serverURL hands out.
func oauthStore(io *stdio, serverURL string) (oauth.Store, *http.Client, error) {
	dir, err := oauth.DefaultDir(io.getenv)
	if err != nil {
		return oauth.Store{}, nil, err
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return oauth.Store{}, nil, err
	}
	return oauth.Store{Dir: dir}, mcp.HTTPClient(u), nil
}
