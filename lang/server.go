package lang

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/dynblock"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/mcpform/mcpform/policy"
)

var serverSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "command"},
		{Name: "url"},
		{Name: "headers"},
		{Name: "env"},
		{Name: "protocol"},
		{Name: "timeout"},
		{Name: "version"},
		{Name: "client_capabilities"},
		{Name: "allow_install_scripts"},
		{Name: "on_drift"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "auth"},
		{Type: "sandbox"},
		{Type: "taint"},
		{Type: "tool", LabelNames: []string{"name"}},
		{Type: "sample", LabelNames: []string{"tool"}},
		{Type: "expose"},
	},
}

var sandboxSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "filesystem"}, {Type: "network"}, {Type: "limits"}}}
var filesystemSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "read"}, {Name: "write"}}}
var networkSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "allow", Required: true}}}
var limitsSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "memory"}, {Name: "processes"}, {Name: "files"}, {Name: "file_size"}}}
var taintSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "sources"}, {Name: "sinks"}}}
var toolSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "version", Required: true}}}
var authSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "oauth"}, {Name: "scopes"}, {Name: "bearer_env"},
	{Name: "client_id"}, {Name: "client_secret_env"}, {Name: "client_metadata_url"}}}

// knownClientCapabilities are the client capabilities MCP defines; others
// are allowed (the protocol grows) but draw a warning, for typos.
var knownClientCapabilities = []string{"elicitation", "experimental", "extensions", "roots", "sampling", "tasks"}

// remoteOnly are the arguments only a remote (url) server has.
var remoteOnly = []string{"url", "headers", "oauth", "scopes", "bearer_env"}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// decodeServer evaluates one server block. It returns nil when the block
// has errors.
func (s *scope) decodeServer(b *hcl.Block) (*Server, hcl.Diagnostics) {
	name := b.Labels[0]
	srv := &Server{
		Name:      strings.Join(append(append([]string(nil), s.m.path...), name), "."),
		Addr:      moduleAddr(s.m.path) + "server." + name,
		Protocol:  defaultProtocol,
		Timeout:   defaultTimeout,
		DeclRange: b.DefRange,
	}
	body := dynblock.Expand(b.Body, s.ctx)
	content, diags := body.Content(serverSchema)

	// A server is local (command: mcpform starts it) or remote (url:
	// mcpform connects to it). Whether an attribute is written decides
	// which, not its value, which may be unknown (validate).
	command, hasCommand := content.Attributes["command"]
	u, hasURL := content.Attributes["url"]
	local, remote := hasCommand && !hasURL, hasURL && !hasCommand
	switch {
	case !hasCommand && !hasURL:
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Missing required argument",
			Detail:   `A server needs command or url, and this one has neither. Add command = ["program", "arg", …], the argv that starts a local server, or url = "https://…", the endpoint of a remote (Streamable HTTP) server.`,
			Subject:  b.Body.MissingItemRange().Ptr(),
		})
	case hasCommand && hasURL:
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Conflicting arguments command and url",
			Detail:   fmt.Sprintf("A server is either local (command: mcpform starts it) or remote (url: mcpform connects to it), not both; command is at %s. Pick one: remove url to start command, or remove command to connect to url.", rangeString(command.Range)),
			Subject:  u.Range.Ptr(),
		})
	}

	if local {
		if v, ok := s.stringList(command, &diags); ok {
			srv.Command = checkCommand(command, v, &diags)
		}
	}
	if remote {
		if v, ok := s.str(u, &diags); ok {
			srv.URL = checkURL(u, v, &diags)
		}
	}
	if a, ok := content.Attributes["headers"]; ok {
		switch {
		case local:
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Unsupported argument for a local server",
				Detail:   "headers are HTTP headers sent to a remote (url) server; mcpform talks to a command server over its stdin and stdout, with no headers. Remove headers, or pass what the server needs through env.",
				Subject:  a.Range.Ptr(),
			})
		case remote:
			srv.Headers = s.headers(a, &diags)
		}
	}
	envKnown := true // false when env is unknown (validate without variables) or wrong
	if a, ok := content.Attributes["env"]; ok && remote {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Unsupported argument for a remote server",
			Detail:   `env names environment variables passed to a process mcpform starts, and mcpform starts no process for a url server. A remote server gets its credentials through auth { bearer_env = "NAME" }; remove env.`,
			Subject:  a.Range.Ptr(),
		})
	} else if ok {
		if v, ok := s.stringList(a, &diags); ok {
			srv.Env = checkEnv(a, v, &diags)
		} else {
			envKnown = false
		}
	}
	if a, ok := content.Attributes["protocol"]; ok {
		if v, ok := s.str(a, &diags); ok {
			if !contains(protocols, v) {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid protocol",
					Detail:   fmt.Sprintf("protocol is \"auto\" (detect the era), \"legacy\" (initialize handshake) or \"2026-07-28\" (server/discover), not %q.%s", v, didYouMean(v, protocols)),
					Subject:  a.Expr.Range().Ptr(),
				})
			} else {
				srv.Protocol = v
			}
		}
	}
	if a, ok := content.Attributes["on_drift"]; ok {
		srv.Policy.OnDrift = s.decodeOnDrift(a, &diags)
	}
	if a, ok := content.Attributes["timeout"]; ok {
		if v, ok := s.str(a, &diags); ok {
			d, err := time.ParseDuration(v)
			switch {
			case err != nil:
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid timeout",
					Detail:   fmt.Sprintf("%q is not a duration; write a number with a unit, for example \"30s\" or \"2m\".", v),
					Subject:  a.Expr.Range().Ptr(),
				})
			case d <= 0 || d > maxTimeout:
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid timeout",
					Detail:   fmt.Sprintf("timeout must be more than 0 and at most %s; %q is not.", maxTimeout, v),
					Subject:  a.Expr.Range().Ptr(),
				})
			default:
				srv.Timeout = d
			}
		}
	}
	if a, ok := content.Attributes["allow_install_scripts"]; ok {
		v, vok := s.value(a, &diags)
		switch conv, err := convert.Convert(v, cty.Bool); {
		case !vok:
		case err != nil || conv.IsNull():
			diags = append(diags, typeError(a, "true or false", v))
		case remote && conv.True():
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Unsupported argument for a remote server",
				Detail:   "allow_install_scripts lets the install scripts of a pinned npm tree run when mcpform installs it; a url server's code is installed by whoever runs it, not by mcpform. Remove allow_install_scripts.",
				Subject:  a.NameRange.Ptr(),
			})
		default:
			srv.AllowInstallScripts = conv.True()
		}
	}
	if a, ok := content.Attributes["version"]; ok {
		if v, ok := s.str(a, &diags); ok && checkSemver(a, v, "version", &diags) {
			srv.Version = v
		}
	}
	if a, ok := content.Attributes["client_capabilities"]; ok {
		srv.ClientCapabilities = s.clientCapabilities(a, &diags)
	}

	seen := map[string]*hcl.Block{}
	for _, blk := range content.Blocks {
		key := blk.Type
		if blk.Type == "tool" || blk.Type == "sample" {
			key += "." + blk.Labels[0]
		}
		if prev, dup := seen[key]; dup {
			what := fmt.Sprintf("Only one %q block is allowed in a server.", blk.Type)
			switch blk.Type {
			case "tool":
				what = fmt.Sprintf("Tool %q already has a tool block.", blk.Labels[0])
			case "sample":
				what = fmt.Sprintf("Tool %q already has a sample block: a server calls each tool once, with one set of arguments.", blk.Labels[0])
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Duplicate %s block", blk.Type),
				Detail:   fmt.Sprintf("%s Another was declared at %s; merge them.", what, rangeString(prev.DefRange)),
				Subject:  blk.DefRange.Ptr(),
			})
			continue
		}
		seen[key] = blk
		switch blk.Type {
		case "auth":
			if local {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Unsupported block for a local server",
					Detail:   "auth says how mcpform authorizes to a remote (url) server. A command server gets its credentials from the environment: list the variable's name in env instead, and remove the auth block.",
					Subject:  blk.DefRange.Ptr(),
				})
			} else if remote {
				srv.Auth = s.decodeAuth(blk, &diags)
			}
		case "sandbox":
			if remote {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Unsupported block for a remote server",
					Detail:   "sandbox confines a local process that mcpform starts (command); a url server runs elsewhere, so there is nothing here to confine. Remove the sandbox block.",
					Subject:  blk.DefRange.Ptr(),
				})
				continue
			}
			srv.Policy.Sandbox = s.decodeSandbox(blk, &diags)
		case "taint":
			srv.Policy.Taint = s.decodeTaint(blk, &diags)
		case "expose":
			if srv.Policy.Expose != nil {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate expose block",
					Detail: "A server has at most one expose block; merge the lists into one.", Subject: blk.DefRange.Ptr()})
				continue
			}
			srv.Policy.Expose = s.decodeExpose(blk, &diags)
		case "sample":
			if smp := s.decodeSample(blk, &diags); smp != nil {
				srv.Samples = append(srv.Samples, *smp)
			}
		case "tool":
			tc, d := blk.Body.Content(toolSchema)
			diags = append(diags, d...)
			if tool := blk.Labels[0]; tool == "" {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid tool name",
					Detail:   "A tool block names a tool of the server; the name cannot be empty.",
					Subject:  blk.LabelRanges[0].Ptr(),
				})
				continue
			}
			if a, ok := tc.Attributes["version"]; ok {
				if v, ok := s.str(a, &diags); ok && checkSemver(a, v, "version", &diags) {
					if srv.ToolVersions == nil {
						srv.ToolVersions = map[string]string{}
					}
					srv.ToolVersions[blk.Labels[0]] = v
				}
			}
		}
	}
	sortSamples(srv.Samples)
	diags = withoutUnknownLabels(diags)
	if diags.HasErrors() || (srv.Command == nil && srv.URL == "") {
		return nil, diags
	}
	if srv.Command != nil {
		diags = append(diags, s.checkProgram(srv, command)...)
		if envKnown {
			diags = append(diags, s.checkLauncher(srv, command, content.Attributes["env"])...)
		}
		diags = append(diags, checkPinned(srv, command)...)
	}
	return srv, diags
}

// withoutUnknownLabels drops HCL's error for a dynamic block whose labels
// are not known, which is what a for_each over an unknown value gives
// (hcl's dynblock cannot make a block without its labels). A value is
// unknown only in validate, for a variable without a value, where the
// block is left out as every other check that needs the value is, or
// after an error already reported, which this one would only repeat.
func withoutUnknownLabels(diags hcl.Diagnostics) hcl.Diagnostics {
	out := diags[:0:0]
	for _, d := range diags {
		if d.Summary == "Invalid dynamic block label" && strings.Contains(d.Detail, "not yet known") {
			continue
		}
		out = append(out, d)
	}
	return out
}

func moduleAddr(path []string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteString("module.")
		b.WriteString(p)
		b.WriteByte('.')
	}
	return b.String()
}

// value evaluates an attribute for a server setting. ok is false when the
// value is unusable: an error (reported), or unknown because of an earlier
// error (not reported again). Sensitive values are refused: mcp.lock keeps
// server settings in plain text.
func (s *scope) value(a *hcl.Attribute, diags *hcl.Diagnostics) (cty.Value, bool) {
	v, d := s.eval(a.Expr)
	*diags = append(*diags, d...)
	if d.HasErrors() || !v.IsWhollyKnown() {
		return v, false
	}
	if v.ContainsMarked() {
		instead := "Pass a secret to the server through env (names only; the value is read when the server starts) instead."
		if contains(remoteOnly, a.Name) {
			instead = `Give a remote server its token through auth { bearer_env = "NAME" } (the name of the environment variable that holds it; the value is read when mcpform connects) instead.`
		}
		*diags = append(*diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Sensitive value in server configuration",
			Detail:   fmt.Sprintf("%s uses a sensitive variable, but mcp.lock stores server settings in plain text. %s", a.Name, instead),
			Subject:  a.Expr.Range().Ptr(),
		})
		return v, false
	}
	return v, true
}

func (s *scope) str(a *hcl.Attribute, diags *hcl.Diagnostics) (string, bool) {
	v, ok := s.value(a, diags)
	if !ok {
		return "", false
	}
	conv, err := convert.Convert(v, cty.String)
	if err != nil || conv.IsNull() {
		*diags = append(*diags, typeError(a, "a string", v))
		return "", false
	}
	return conv.AsString(), true
}

func (s *scope) stringList(a *hcl.Attribute, diags *hcl.Diagnostics) ([]string, bool) {
	v, ok := s.value(a, diags)
	if !ok {
		return nil, false
	}
	if v.IsNull() || !(v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType()) {
		d := typeError(a, "a list of strings", v)
		if a.Name == "command" && !v.IsNull() && v.Type().Equals(cty.String) {
			fields := strings.Fields(v.AsString())
			quoted := make([]string, len(fields))
			for i, f := range fields {
				quoted[i] = fmt.Sprintf("%q", f)
			}
			d.Detail = fmt.Sprintf("command is an argv list, never a shell string: mcpform runs it without a shell. Write it as a list, for example [%s].", strings.Join(quoted, ", "))
		}
		*diags = append(*diags, d)
		return nil, false
	}
	out := make([]string, 0, v.LengthInt())
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, ev := it.Element()
		conv, err := convert.Convert(ev, cty.String)
		if err != nil || conv.IsNull() {
			*diags = append(*diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Incorrect attribute value type",
				Detail:   fmt.Sprintf("Element %d of %s must be a string, not %s.", i, a.Name, typeName(ev)),
				Subject:  elemRange(a.Expr, i).Ptr(),
			})
			return nil, false
		}
		out = append(out, conv.AsString())
	}
	return out, true
}

func typeError(a *hcl.Attribute, want string, got cty.Value) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Incorrect attribute value type",
		Detail:   fmt.Sprintf("%s must be %s, not %s.", a.Name, want, typeName(got)),
		Subject:  a.Expr.Range().Ptr(),
	}
}

func typeName(v cty.Value) string {
	switch {
	case v.IsNull():
		return "null"
	case v.Type().IsTupleType() || v.Type().IsListType() || v.Type().IsSetType():
		return "a list"
	case v.Type().IsObjectType() || v.Type().IsMapType():
		return "an object"
	case v.Type().Equals(cty.String):
		return "a string"
	case v.Type().Equals(cty.Number):
		return "a number"
	case v.Type().Equals(cty.Bool):
		return "a bool"
	}
	return v.Type().FriendlyName()
}

// elemRange is the range of element i of a list written literally, so a
// diagnostic can point at the offending element; else the whole expression.
func elemRange(expr hcl.Expression, i int) hcl.Range {
	if t, ok := expr.(*hclsyntax.TupleConsExpr); ok && i < len(t.Exprs) && len(t.Exprs) > 0 {
		return t.Exprs[i].Range()
	}
	return expr.Range()
}

func checkCommand(a *hcl.Attribute, argv []string, diags *hcl.Diagnostics) []string {
	if len(argv) == 0 {
		*diags = append(*diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Empty command",
			Detail:   "command is the server's argv and needs at least the program, for example [\"uvx\", \"mcp-server-time==2026.8.18\"].",
			Subject:  a.Expr.Range().Ptr(),
		})
		return nil
	}
	for i, arg := range argv {
		switch {
		case i == 0 && strings.TrimSpace(arg) == "":
			*diags = append(*diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid command",
				Detail:   "The first element of command is the program to run; it cannot be empty.",
				Subject:  elemRange(a.Expr, i).Ptr(),
			})
			return nil
		case strings.ContainsRune(arg, 0):
			*diags = append(*diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid command",
				Detail:   fmt.Sprintf("Element %d of command contains a NUL byte, which no program argument can hold.", i),
				Subject:  elemRange(a.Expr, i).Ptr(),
			})
			return nil
		}
	}
	return argv
}

func checkEnv(a *hcl.Attribute, names []string, diags *hcl.Diagnostics) []string {
	seen := map[string]bool{}
	ok := true
	for i, n := range names {
		rng := elemRange(a.Expr, i).Ptr()
		switch {
		case strings.Contains(n, "=") && envName.MatchString(n[:strings.IndexByte(n, '=')]):
			*diags = append(*diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid environment variable name",
				Detail:   fmt.Sprintf("env lists names, not NAME=value: write %q and set its value in the environment mcpform runs in. Values are never stored in mcp.lock.", n[:strings.IndexByte(n, '=')]),
				Subject:  rng,
			})
			ok = false
		case !envName.MatchString(n):
			*diags = append(*diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid environment variable name",
				Detail:   fmt.Sprintf("%q is not a valid environment variable name: use letters, digits and underscores, not starting with a digit.", n),
				Subject:  rng,
			})
			ok = false
		case seen[n]:
			*diags = append(*diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate environment variable name",
				Detail:   fmt.Sprintf("%q is listed twice in env; remove one.", n),
				Subject:  rng,
			})
			ok = false
		}
		seen[n] = true
	}
	if !ok {
		return nil
	}
	return names
}

func checkSemver(a *hcl.Attribute, v, what string, diags *hcl.Diagnostics) bool {
	if _, err := semver.StrictNewVersion(v); err != nil {
		hint := ""
		if strings.HasPrefix(v, "v") {
			if _, err := semver.StrictNewVersion(v[1:]); err == nil {
				hint = fmt.Sprintf(" Did you mean %q?", v[1:])
			}
		}
		*diags = append(*diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid version",
			Detail:   fmt.Sprintf("%s %q is not a semantic version: write MAJOR.MINOR.PATCH, for example \"1.4.0\".%s", what, v, hint),
			Subject:  a.Expr.Range().Ptr(),
		})
		return false
	}
	return true
}

// clientCapabilities turns client_capabilities = { elicitation = {} } into
// the JSON object the probe declares. An empty object declares none (nil).
func (s *scope) clientCapabilities(a *hcl.Attribute, diags *hcl.Diagnostics) json.RawMessage {
	v, ok := s.value(a, diags)
	if !ok {
		return nil
	}
	if v.IsNull() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		*diags = append(*diags, typeError(a, "an object, for example { elicitation = {} }", v))
		return nil
	}
	if v.LengthInt() == 0 {
		return nil
	}
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		name := k.AsString()
		if !ev.IsNull() && !(ev.Type().IsObjectType() || ev.Type().IsMapType()) {
			*diags = append(*diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid client capability",
				Detail:   fmt.Sprintf("Each client capability is an object; write %s = {} to declare %q with no options.", name, name),
				Subject:  a.Expr.Range().Ptr(),
			})
			return nil
		}
		if !contains(knownClientCapabilities, name) {
			*diags = append(*diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Unknown client capability",
				Detail:   fmt.Sprintf("%q is not a client capability MCP defines (%s); it is declared as written.%s", name, strings.Join(knownClientCapabilities, ", "), didYouMean(name, knownClientCapabilities)),
				Subject:  a.Expr.Range().Ptr(),
			})
		}
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		*diags = append(*diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid client capabilities",
			Detail:   fmt.Sprintf("The value cannot be written as JSON: %v.", err),
			Subject:  a.Expr.Range().Ptr(),
		})
		return nil
	}
	return b
}

func (s *scope) decodeSandbox(b *hcl.Block, diags *hcl.Diagnostics) *policy.Sandbox {
	sb := &policy.Sandbox{
		Filesystem: policy.Filesystem{Read: []string{}, Write: []string{}},
		Network:    policy.Network{Allow: []string{}},
	}
	content, d := b.Body.Content(sandboxSchema)
	*diags = append(*diags, d...)
	seen := map[string]*hcl.Block{}
	for _, blk := range content.Blocks {
		if prev, dup := seen[blk.Type]; dup {
			*diags = append(*diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Duplicate %s block", blk.Type),
				Detail:   fmt.Sprintf("Only one %q block is allowed in a sandbox. Another was declared at %s; merge them.", blk.Type, rangeString(prev.DefRange)),
				Subject:  blk.DefRange.Ptr(),
			})
			continue
		}
		seen[blk.Type] = blk
		switch blk.Type {
		case "filesystem":
			fc, d := blk.Body.Content(filesystemSchema)
			*diags = append(*diags, d...)
			for _, attr := range []struct {
				name string
				dst  *[]string
			}{{"read", &sb.Filesystem.Read}, {"write", &sb.Filesystem.Write}} {
				a, ok := fc.Attributes[attr.name]
				if !ok {
					continue
				}
				paths, ok := s.stringList(a, diags)
				if !ok {
					continue
				}
				for i, p := range paths {
					if err := policy.CheckPath(p); err != nil {
						detail := err.Error() + "."
						if strings.HasPrefix(p, "$") || strings.Contains(strings.ToUpper(p), "TMP") || strings.Contains(p, "tmp") {
							detail += " Write the server's private temporary directory as \"${path.tmp}/…\" (or \"$${TMP}/…\")."
						}
						*diags = append(*diags, &hcl.Diagnostic{
							Severity: hcl.DiagError,
							Summary:  "Invalid sandbox path",
							Detail:   detail + " Sandbox paths stay unexpanded in mcp.lock so that it is the same on every machine.",
							Subject:  elemRange(a.Expr, i).Ptr(),
						})
						continue
					}
					*attr.dst = append(*attr.dst, p)
				}
			}
		case "network":
			nc, d := blk.Body.Content(networkSchema)
			*diags = append(*diags, d...)
			a, ok := nc.Attributes["allow"]
			if !ok {
				continue
			}
			entries, ok := s.stringList(a, diags)
			if !ok {
				continue
			}
			dup := map[string]bool{}
			for i, e := range entries {
				hp, err := policy.ParseHostPort(e)
				if err != nil {
					*diags = append(*diags, &hcl.Diagnostic{
						Severity: hcl.DiagError,
						Summary:  "Invalid network allow entry",
						Detail:   err.Error() + ". Entries are host:port, *.suffix:port, IPv4:port or [IPv6]:port, with a port from 1 to 65535.",
						Subject:  elemRange(a.Expr, i).Ptr(),
					})
					continue
				}
				c := hp.String()
				if dup[c] {
					continue
				}
				dup[c] = true
				sb.Network.Allow = append(sb.Network.Allow, c)
			}
		case "limits":
			sb.Limits = s.decodeLimits(blk, diags)
		}
	}
	return sb
}

// Upper bounds of a limit, the same on every platform (a lock written on
// one machine is read on another): counts fit an int32, sizes are at most
// what policy.ParseSize accepts.
const (
	maxLimitCount = math.MaxInt32
	maxLimitSize  = 1 << 62
)

// decodeLimits evaluates a limits block. An empty block, like none, is nil:
// every limit at its default.
func (s *scope) decodeLimits(b *hcl.Block, diags *hcl.Diagnostics) *policy.Limits {
	content, d := b.Body.Content(limitsSchema)
	*diags = append(*diags, d...)
	var l policy.Limits
	for _, attr := range []struct {
		name string
		size bool
		def  int64
		set  func(*policy.Limits, int64)
	}{
		{"memory", true, policy.DefaultLimits.Memory, func(l *policy.Limits, n int64) { l.Memory = n }},
		{"processes", false, int64(policy.DefaultLimits.Processes), func(l *policy.Limits, n int64) { l.Processes = int(n) }},
		{"files", false, int64(policy.DefaultLimits.Files), func(l *policy.Limits, n int64) { l.Files = int(n) }},
		{"file_size", true, policy.DefaultLimits.FileSize, func(l *policy.Limits, n int64) { l.FileSize = n }},
	} {
		a, ok := content.Attributes[attr.name]
		if !ok {
			continue
		}
		n, ok := s.limit(a, attr.size, diags)
		if !ok {
			continue
		}
		show, max, showMax := strconv.FormatInt(attr.def, 10), int64(maxLimitCount), strconv.FormatInt(maxLimitCount, 10)
		if attr.size {
			show, max, showMax = policy.FormatSize(attr.def), maxLimitSize, policy.FormatSize(maxLimitSize)
		}
		var one policy.Limits
		attr.set(&one, min(n, max))
		problem := ""
		switch {
		case n == 0:
			problem = fmt.Sprintf("%s = 0 is no limit mcpform can set. Leave %s out for the default (%s).", attr.name, attr.name, show)
		case n > max:
			problem = fmt.Sprintf("%s is too large: it is at most %s.", attr.name, showMax)
		default:
			// Check knows the minimums; it sees this one limit alone so that
			// the diagnostic points at this attribute.
			if err := one.Check(); err != nil {
				problem = fmt.Sprintf("%s. Raise it, or leave %s out for the default (%s).", err, attr.name, show)
			}
		}
		if problem != "" {
			*diags = append(*diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid sandbox limit",
				Detail:   problem,
				Subject:  a.Expr.Range().Ptr(),
			})
			continue
		}
		attr.set(&l, n)
	}
	if l == (policy.Limits{}) {
		return nil
	}
	return &l
}

// limit evaluates one limit: a whole number, or for a size also a string
// such as "512MiB" (policy.ParseSize). The value may be negative or out of
// range; the caller checks the bounds.
func (s *scope) limit(a *hcl.Attribute, size bool, diags *hcl.Diagnostics) (int64, bool) {
	v, ok := s.value(a, diags)
	if !ok {
		return 0, false
	}
	want := "a whole number"
	if size {
		want = `a size such as "1GiB", or a whole number of bytes`
	}
	if v.IsNull() {
		*diags = append(*diags, typeError(a, want, v))
		return 0, false
	}
	if size && v.Type().Equals(cty.String) {
		n, err := policy.ParseSize(v.AsString())
		if err != nil {
			*diags = append(*diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid sandbox limit",
				Detail:   fmt.Sprintf("%s: %s.", a.Name, err),
				Subject:  a.Expr.Range().Ptr(),
			})
			return 0, false
		}
		return n, true
	}
	num, err := convert.Convert(v, cty.Number)
	if err != nil {
		*diags = append(*diags, typeError(a, want, v))
		return 0, false
	}
	bf := num.AsBigFloat()
	if !bf.IsInt() {
		*diags = append(*diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid sandbox limit",
			Detail:   fmt.Sprintf("%s must be a whole number, not %s.", a.Name, bf.Text('g', -1)),
			Subject:  a.Expr.Range().Ptr(),
		})
		return 0, false
	}
	n, acc := bf.Int64()
	if acc != big.Exact {
		n = math.MaxInt64 // too large either way; the caller says so
		if bf.Sign() < 0 {
			n = -1
		}
	}
	return n, true
}

func (s *scope) decodeTaint(b *hcl.Block, diags *hcl.Diagnostics) *policy.Taint {
	t := &policy.Taint{Sources: []string{}, Sinks: []string{}}
	content, d := b.Body.Content(taintSchema)
	*diags = append(*diags, d...)
	for _, attr := range []struct {
		name string
		dst  *[]string
	}{{"sources", &t.Sources}, {"sinks", &t.Sinks}} {
		a, ok := content.Attributes[attr.name]
		if !ok {
			continue
		}
		names, ok := s.stringList(a, diags)
		if !ok {
			continue
		}
		seen := map[string]bool{}
		for i, n := range names {
			var problem string
			switch {
			case n == "":
				problem = "A taint label names a tool of this server; it cannot be empty."
			case attr.name == "sinks" && (n == policy.AllResources || n == policy.AllPrompts):
				problem = fmt.Sprintf("%q can only be a source: reading resources or prompts has no consequence outside. Sinks are tool names.", n)
			case strings.HasSuffix(n, ":*") && n != policy.AllResources && n != policy.AllPrompts:
				problem = fmt.Sprintf("%q is not a wildcard mcpform knows; the source wildcards are %q and %q.%s", n, policy.AllResources, policy.AllPrompts, didYouMean(n, []string{policy.AllResources, policy.AllPrompts}))
			case seen[n]:
				problem = fmt.Sprintf("%q is listed twice in %s; remove one.", n, attr.name)
			}
			if problem != "" {
				*diags = append(*diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid taint " + strings.TrimSuffix(attr.name, "s"),
					Detail:   problem,
					Subject:  elemRange(a.Expr, i).Ptr(),
				})
				continue
			}
			seen[n] = true
			*attr.dst = append(*attr.dst, n)
		}
	}
	return t
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
