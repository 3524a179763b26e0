package lock

import (
	"encoding/json"

	"github.com/mcpform/mcpform/policy"
)

// Limits of the format (docs/LOCKFILE.md).
const (
	// maxItems is the most items of one kind an entry may hold.
	maxItems = 1000
	// ModernVersion is the protocol version whose entries need lockfile
	// version 2.
	ModernVersion = "2026-07-28"
	// DefaultPath is the lock's file name when mcp.hcl names no other.
	DefaultPath = "mcp.lock"
)

// File is a whole mcp.lock.
type File struct {
	// Version is lockfileVersion: 1, 2 when an entry was locked over
	// 2026-07-28, 3 when an entry is remote. Marshal derives it from the
	// entries.
	Version int
	// Generator names the tool that wrote the file. Informational.
	Generator string
	// Servers maps a server's name (what `mcpform run NAME` takes) to its
	// entry.
	Servers map[string]*Entry
	// Notes are what the loader has to say of a lock it accepted, one
	// sentence each, in server order: an entry without a configDigest
	// (written by another tool of the format, or an older mcpform), whose
	// command, environment, policy and mcpform settings no digest checks.
	// Commands print them as "Note: …" lines; Marshal ignores them.
	Notes []string
}

// Entry is one server's locked surface and the settings it was locked with.
type Entry struct {
	// Command and EnvPassthrough are a local server's (nil for a remote
	// one); Remote is a remote server's (nil for a local one).
	Command        []string
	EnvPassthrough []string
	Remote         *Remote

	ProtocolVersion string
	// SupportedVersions is non-nil exactly for an entry locked over
	// 2026-07-28 server/discover: the versions the server listed.
	SupportedVersions []string
	ServerInfo        json.RawMessage
	// Instructions is nil when the server sent none.
	Instructions *string
	Capabilities json.RawMessage

	// Lists, each sorted by its key once the entry is sealed.
	Tools             []Item
	Prompts           []Item
	Resources         []Item
	ResourceTemplates []Item

	// Digests are recomputed by Seal and checked by the loader.
	Digests Digests

	// Policy is written by the user (from mcp.hcl), never by the server,
	// and is outside the surface digests.
	Policy *policy.Policy
	// Mcpform holds mcpform-only settings under the "mcpform" key, which
	// other readers of the format can ignore.
	Mcpform *Settings

	// ConfigDigest is mcpform.configDigest as the loader read and checked
	// it: the digest of what the surface digests leave out (command,
	// envPassthrough, remote, policy, the mcpform settings; see
	// ComputeConfigDigest). "" for an entry built in memory and for one
	// read from a lock without it. Marshal ignores it and writes the
	// digest of the entry's values as they are then.
	ConfigDigest string
}

// Remote is how mcpform reaches a server over the network: what makes it
// that server, besides its surface. A change of any is definitional
// drift: a server that moves must be reviewed.
type Remote struct {
	// URL is the server's endpoint, normalised (lang checks and
	// normalises it: https, or http to a loopback address).
	URL string `json:"url"`
	// Transport is how the probe reached the server: "streamable-http",
	// or "sse" for the deprecated HTTP+SSE transport of 2024-11-05.
	Transport string `json:"transport"`
	// Headers are fixed headers mcpform sends (never credentials).
	Headers map[string]string `json:"headers,omitempty"`
	// Auth is how mcpform authenticated when it locked the server (the
	// surface can depend on the caller); nil for none. Never a token.
	Auth *RemoteAuth `json:"auth,omitempty"`
}

// RemoteAuth says which credentials a remote server was locked with.
type RemoteAuth struct {
	// BearerEnv names the environment variable holding a static token.
	BearerEnv string `json:"bearerEnv,omitempty"`
	// OAuth is true for MCP authorization (OAuth 2.1), with Scopes.
	OAuth  bool     `json:"oauth,omitempty"`
	Scopes []string `json:"scopes,omitempty"`
	// Resource is the protected resource an OAuth server names (RFC 9728)
	// and Issuers the authorization servers it names, as its metadata
	// lists them: a change of either is definitional drift.
	Resource string   `json:"resource,omitempty"`
	Issuers  []string `json:"issuers,omitempty"`
}

// Configured is what mcp.hcl says of the auth (the method and scopes),
// without what the server advertised; nil for nil.
func (a *RemoteAuth) Configured() *RemoteAuth {
	if a == nil {
		return nil
	}
	return &RemoteAuth{BearerEnv: a.BearerEnv, OAuth: a.OAuth, Scopes: a.Scopes}
}

// Authorization is what the server advertised of its authorization.
func (a *RemoteAuth) Authorization() map[string]any {
	return map[string]any{"resource": a.Resource, "issuers": a.Issuers}
}

// The remote transports mcpform speaks.
const (
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
)

// Modern reports whether the entry was locked over 2026-07-28.
func (e *Entry) Modern() bool { return e.SupportedVersions != nil }

// Item is one tool, prompt, resource or resource template, exactly as the
// server sent it (unknown fields and number literals kept), without
// insignificant whitespace.
type Item struct {
	Key  string
	JSON json.RawMessage
	// Digest is "sha256:…" over the RFC 8785 form of JSON; set by Seal.
	Digest string
}

// Digests is the "digests" object of an entry.
type Digests struct {
	Surface           string
	Instructions      *string
	Tools             map[string]string
	Prompts           map[string]string
	Resources         map[string]string
	ResourceTemplates map[string]string
}

// Settings are the mcpform-only settings of an entry.
type Settings struct {
	// Version is the declared surface version (the bump gate).
	Version string `json:"version,omitempty"`
	// Tools holds per-tool declared versions.
	Tools map[string]ToolSettings `json:"tools,omitempty"`
	// ClientCapabilities are the capabilities the probe and the proxy
	// declare upstream; absent means none.
	ClientCapabilities json.RawMessage `json:"clientCapabilities,omitempty"`
	// Protocol is "legacy" or "2026-07-28" when mcp.hcl forced an era;
	// empty for auto.
	Protocol string `json:"protocol,omitempty"`
	// Timeout is the probe timeout as a Go duration ("30s"); empty for the
	// default.
	Timeout string `json:"timeout,omitempty"`
	// Pins are the files a command server's argv starts, by digest, so
	// that run starts only the code plan saw (package pins); nil for a
	// remote server and for an entry locked before pins existed.
	Pins *Pins `json:"pins,omitempty"`
	// NPM pins the whole tree of an npm package runner's server (npx,
	// npm exec, pnpm dlx, bunx): run starts its bin with node from an
	// installed copy of that tree, never the runner. nil for any other
	// server and for an entry locked before npm trees were pinned.
	NPM *NPM `json:"npm,omitempty"`
	// Image pins the image of a container server (docker run, podman
	// run) by its digest: run starts the argv with the image written as
	// REPOSITORY@DIGEST, never the tag. nil for any other server and for
	// an entry locked before images were pinned.
	Image *Image `json:"image,omitempty"`
	// PyPI pins the whole tree of a PyPI package runner's server (uvx, uv
	// tool run, pipx run): run starts its console script with the venv's
	// python from an installed copy of that tree, never the runner. nil
	// for any other server and for an entry locked before PyPI trees were
	// pinned.
	PyPI *PyPI `json:"pypi,omitempty"`
	// Samples are the sample calls of mcp.hcl's sample blocks, by tool,
	// with the shape of the result each gave (lock.Sample); nil when the
	// server declares none.
	Samples map[string]Sample `json:"samples,omitempty"`
}

// PyPI is what an entry pins of a PyPI package and its dependency tree
// (package pins/pypi): the exact package, its wheel's sha256, and the
// tree by the digest of a requirements file stored beside the lock.
type PyPI struct {
	// Package is the package's normalised name (PEP 503), Version its
	// exact version.
	Package string `json:"package"`
	Version string `json:"version"`
	// SHA256 is the package's wheel's digest, lowercase hex.
	SHA256 string `json:"sha256"`
	// Index is the index pip resolved the tree from (passwords redacted),
	// "" when it used find-links only: a record for review, since every
	// wheel is installed by its hash.
	Index string `json:"index"`
	// Requirements is the tree's requirements.txt (name==version
	// --hash=sha256:…, sorted), by path relative to the lock's directory
	// and SHA-256; run installs exactly it and names the cache entry by
	// its digest.
	Requirements FilePin `json:"requirements"`
	// Script is the console script run starts and EntryPoint its object
	// reference (module:function), which run calls with the venv's python.
	Script     string `json:"script"`
	EntryPoint string `json:"entryPoint"`
}

// Image is what an entry pins of a container server's image (package
// pins/image).
type Image struct {
	// Reference is the image as written in the command (mcp.hcl), tag
	// and all: run checks the locked command still names it.
	Reference string `json:"reference"`
	// Digest is the manifest's (or multi-platform index's) digest the
	// reference resolved to when planned: "sha256:" and 64 lowercase hex.
	Digest string `json:"digest"`
	// MediaType is the manifest's media type as the registry gave it;
	// empty when the reference carried the digest itself.
	MediaType string `json:"mediaType,omitempty"`
}

// NPM is what an entry pins of an npm package and its dependency tree
// (package pins/npm): the exact package, its tarball's integrity, and the
// tree by the digest of a lockfile stored beside the lock.
type NPM struct {
	Package string `json:"package"`
	Version string `json:"version"`
	// Integrity is the package tarball's SRI sha512 from the registry.
	Integrity string `json:"integrity"`
	// Registry is the registry URL every package of the tree comes from
	// (http or https, ending in "/").
	Registry string `json:"registry"`
	// Lockfile is the tree's package-lock.json (v3, RFC 8785 canonical),
	// by path relative to the lock's directory and SHA-256; run installs
	// exactly it and names the cache entry by its digest.
	Lockfile FilePin `json:"lockfile"`
	// Bin is the file inside the package that run starts with node
	// ("dist/index.js").
	Bin string `json:"bin"`
	// InstallScripts are the lockfile paths of the tree's packages that
	// have install scripts, which are never run unless
	// AllowInstallScripts; empty is left out.
	InstallScripts []string `json:"installScripts,omitempty"`
	// AllowInstallScripts is mcp.hcl's allow_install_scripts: the tree is
	// installed with its install scripts run. false is left out.
	AllowInstallScripts bool `json:"allowInstallScripts,omitempty"`
	// Provenance is where the package's tarball was built, from the
	// provenance attestation the registry publishes for it, verified
	// (pins/provenance); nil when the registry publishes none.
	Provenance *Provenance `json:"provenance,omitempty"`
}

// Provenance is the verified origin of an npm package's tarball: the
// source repository and the workflow whose Sigstore certificate signed
// its SLSA provenance. A changed repository is other code's origin.
type Provenance struct {
	// Repository is the source repository's URL
	// ("https://github.com/OWNER/REPO").
	Repository string `json:"repository"`
	// Workflow is the build workflow, path@ref inside Repository
	// (".github/workflows/release.yml@refs/heads/main"), or its URL when
	// it is in another repository.
	Workflow string `json:"workflow"`
	// Commit is the source commit built; "" (left out) when the
	// certificate does not say.
	Commit string `json:"commit,omitempty"`
}

// Pins are what an entry pins of the code behind its command: the surface
// digest says what the server answered, these say which files answered it.
type Pins struct {
	// Executable is command[0] as os/exec resolves it, symlinks followed.
	Executable *FilePin `json:"executable"`
	// Script is the file an interpreter (node, python3, bash…) runs,
	// when command[1] names one; nil otherwise.
	Script *FilePin `json:"script,omitempty"`
}

// FilePin is one file by content. Path says where it was found, for
// messages and review: relative (slash-separated) to the lock's directory
// when the file is inside it, so a lock stays portable, else absolute. Run
// resolves the command again and compares SHA256, not Path.
type FilePin struct {
	Path string `json:"path"`
	// SHA256 is the lowercase hex SHA-256 of the file's bytes, as
	// sha256sum prints it.
	SHA256 string `json:"sha256"`
}

// ToolSettings are the mcpform-only settings of one tool.
type ToolSettings struct {
	Version string `json:"version,omitempty"`
}

// Kind is one of the four lists of an entry.
type Kind int

// The four kinds, in the order the format lists them.
const (
	Tools Kind = iota
	Prompts
	Resources
	ResourceTemplates
)

// Kinds lists every Kind in format order.
var Kinds = [...]Kind{Tools, Prompts, Resources, ResourceTemplates}

var kindInfo = [...]struct {
	field    string // the entry's key for the list
	key      string // the item field that names it
	singular string // for messages
}{
	Tools:             {"tools", "name", "tool"},
	Prompts:           {"prompts", "name", "prompt"},
	Resources:         {"resources", "uri", "resource"},
	ResourceTemplates: {"resourceTemplates", "uriTemplate", "resource template"},
}

// Field returns the kind's key in an entry ("tools", "resourceTemplates").
func (k Kind) Field() string { return kindInfo[k].field }

// KeyField returns the item field that identifies an item of this kind.
func (k Kind) KeyField() string { return kindInfo[k].key }

// String returns the singular noun for messages ("tool").
func (k Kind) String() string { return kindInfo[k].singular }

// List returns the entry's items of kind k.
func (e *Entry) List(k Kind) []Item { return *e.list(k) }

// SetList replaces the entry's items of kind k.
func (e *Entry) SetList(k Kind, items []Item) { *e.list(k) = items }

// list is the entry's field for items of kind k.
func (e *Entry) list(k Kind) *[]Item {
	switch k {
	case Tools:
		return &e.Tools
	case Prompts:
		return &e.Prompts
	case Resources:
		return &e.Resources
	}
	return &e.ResourceTemplates
}

// digestMap returns the digests map of kind k.
func (d *Digests) digestMap(k Kind) map[string]string { return *d.field(k) }

func (d *Digests) setDigestMap(k Kind, m map[string]string) { *d.field(k) = m }

// field is the digests' field for kind k.
func (d *Digests) field(k Kind) *map[string]string {
	switch k {
	case Tools:
		return &d.Tools
	case Prompts:
		return &d.Prompts
	case Resources:
		return &d.Resources
	}
	return &d.ResourceTemplates
}

// Find returns the item of kind k named key, using binary search over the
// sorted list of a sealed entry.
func (e *Entry) Find(k Kind, key string) (Item, bool) {
	list := e.List(k)
	lo, hi := 0, len(list)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if list[m].Key < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(list) && list[lo].Key == key {
		return list[lo], true
	}
	return Item{}, false
}
