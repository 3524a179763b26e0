package lang

import (
	"encoding/json"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/mcpform/mcpform/policy"
)

// Options are the inputs to Load that do not come from the configuration's
// own files.
type Options struct {
	// Vars holds -var NAME=VALUE arguments. A value is taken literally for a
	// string variable and parsed as an HCL expression for any other type, as
	// terraform does. Vars win over VarFiles, which win over the
	// environment, which wins over defaults.
	Vars map[string]string
	// VarFiles are -var-file paths, applied in order (later files win). A
	// file ending in ".json" is read as JSON, any other as HCL attributes.
	VarFiles []string
	// Getenv looks up MCPFORM_VAR_<name> for each root variable, and
	// nothing else. Nil means no environment.
	Getenv func(string) string
	// Version is the running mcpform's version, checked against
	// required_version. Empty skips the check.
	Version string
	// LookPath finds a bare program name (command[0] = "mcp-server-x") as
	// run will, on mcpform's own PATH, so that Load can warn about a
	// #!/usr/bin/env script started without PATH (see LauncherOf). It
	// returns "" when the name is not found; nil looks at no bare name.
	// Only warnings depend on it, never a value.
	LookPath func(prog string) string
	// Validate evaluates without values for root variables, as terraform
	// validate checks a configuration "regardless of any provided
	// variables": a required variable without a value is unknown (of its
	// declared type), not an error, and the checks that need its value are
	// skipped; values that are given are still checked. plan and apply
	// leave it false: they need every value.
	Validate bool
}

// Config is an evaluated configuration: plain values, no HCL.
//
// Load returns a Config even when it reports errors, so that Files can be
// used to render the diagnostics; the other fields are complete only when
// there are no errors.
type Config struct {
	// Dir is the root module's directory, as given to Load.
	Dir string
	// Lockfile is the path of mcp.lock: the mcpform block's lockfile
	// resolved against Dir (default "mcp.lock").
	Lockfile string
	// Servers holds every server of the root module and of its modules,
	// sorted by Name.
	Servers []*Server
	// Judges are the judge blocks of the root mcpform block, in the order
	// written; nil without any. They grade text changes in a plan and are
	// not part of plan.ConfigDigest (see Judge).
	Judges []Judge
	// Files holds the source of every file read (configuration, modules,
	// variable files), by the file name diagnostics use.
	Files map[string][]byte
}

// Server is one evaluated server block.
type Server struct {
	// Name is the lock name: "time" for a root server, "<m>.<s>" for a
	// server of module m, "<m1>.<m2>.<s>" for nested modules.
	Name string
	// Addr is the address plans show: "server.time",
	// "module.github.server.issues".
	Addr string
	// Command is the argv of a local server, never a shell string. It is
	// empty (nil) exactly for a remote server, which has URL instead.
	Command []string
	// URL is the endpoint of a remote (Streamable HTTP) server, normalised:
	// https (http only for a loopback host), lower-case scheme and host,
	// no default port, an empty path written "/", the query as written;
	// "" for a command server.
	URL string `json:",omitempty"`
	// Headers are the fixed HTTP headers sent to a remote server, by name
	// as written. They are never credentials (Auth carries those) nor
	// headers mcpform sets itself; nil when there are none.
	Headers map[string]string `json:",omitempty"`
	// Auth is how mcpform authorizes to a remote server, from its auth
	// block; nil when it has none (always for a command server).
	Auth *Auth `json:",omitempty"`
	// Env lists the names of the environment variables passed to the
	// server, in the order written. Values are never part of the config.
	Env []string
	// Protocol is "auto", "legacy" or "2026-07-28".
	Protocol string
	// Timeout is the probe timeout (default 30s).
	Timeout time.Duration
	// AllowInstallScripts lets the install scripts of an npm server's
	// pinned tree run when mcpform installs it (they never run otherwise).
	AllowInstallScripts bool `json:",omitempty"`
	// Version is the declared surface version (strict semver), "" when
	// not declared.
	Version string
	// ToolVersions maps tool names to their declared versions, from
	// tool "NAME" { version = "…" } blocks; nil when there are none.
	ToolVersions map[string]string
	// ClientCapabilities is the JSON object the probe and the proxy
	// declare upstream as the client's capabilities; nil declares none.
	ClientCapabilities json.RawMessage
	// Samples are the sample blocks, by tool name: the calls plan makes
	// to fingerprint each result's shape; nil when there are none.
	Samples []Sample `json:",omitempty"`
	// Policy holds the sandbox and taint blocks.
	Policy policy.Policy
	// DeclRange is the range of the block header (`server "time"`). It
	// says where the server is written, not what it is, so it is left out
	// of the server's JSON, which plan.ConfigDigest hashes.
	DeclRange hcl.Range `json:"-"`
}

// Auth is a remote server's auth block: exactly one of OAuth and BearerEnv
// is set. The new fields of Server and these are left out of the JSON when
// empty, so that a command server's JSON, which plan.ConfigDigest hashes,
// is what it was before remote servers.
type Auth struct {
	// OAuth is true for MCP authorization (OAuth 2.1): mcpform signs in
	// through the authorization server the remote server names.
	OAuth bool `json:",omitempty"`
	// Scopes are the OAuth scopes to request, in the order written; nil
	// requests the server's default. Only with OAuth.
	Scopes []string `json:",omitempty"`
	// BearerEnv is the name of the environment variable that holds a
	// static token, sent as "Authorization: Bearer …"; "" with OAuth.
	// The value is read when mcpform connects and is never stored.
	BearerEnv string `json:",omitempty"`
	// ClientID is a client registered with the authorization server
	// beforehand, and ClientSecretEnv the variable holding its secret, if
	// it has one; ClientMetadataURL is a client ID metadata document
	// mcpform is known by. Without them mcpform registers itself (RFC
	// 7591) where the authorization server allows it. Only with OAuth.
	ClientID          string `json:",omitempty"`
	ClientSecretEnv   string `json:",omitempty"`
	ClientMetadataURL string `json:",omitempty"`
}

// Defaults for optional server arguments.
const (
	defaultLockfile = "mcp.lock"
	defaultProtocol = "auto"
	defaultTimeout  = 30 * time.Second
	// maxTimeout bounds timeout so a typo ("300m") cannot hang a plan.
	maxTimeout = 10 * time.Minute
)

// protocols are the values protocol accepts.
var protocols = []string{"auto", "legacy", "2026-07-28"}
