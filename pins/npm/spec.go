package npm

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/mcpform/mcpform/internal/escape"
)

// Spec is what an npm package runner's argv asks for: one package at one
// version, the bin it runs, and the arguments after it.
type Spec struct {
	// Runner is the runner's argv prefix as it was written ("npx", "npm
	// exec", "pnpm dlx", "bunx"), for messages.
	Runner string
	// Package is the package's name (validated by npm's rules, scope
	// included); Version its exact version ("" when the argv gave a range
	// or a tag, which Parse returns as a *NotExactError).
	Package, Version string
	// Requested is the version part as written ("latest" when none was).
	Requested string
	// Command is the bin the runner starts when the argv names it
	// (npx --package=pkg@1.0.0 COMMAND); "" means the runner's default:
	// the bin named like the package, or its only one.
	Command string
	// Args are the arguments the bin is started with.
	Args []string
}

// NotExactError is a package spec without an exact version: a range, a
// dist-tag, or none. Resolved is the exact version it resolves to today
// when the caller asked Latest (Parse is pure and leaves it empty).
type NotExactError struct {
	Package, Requested, Resolved string
}

func (e *NotExactError) Error() string {
	what := fmt.Sprintf("%s@%s is not an exact version", escape.String(e.Package), escape.String(e.Requested))
	if e.Requested == "latest" {
		what = fmt.Sprintf("%s has no exact version (an unversioned package runs whatever is latest on each start)", escape.String(e.Package))
	}
	if e.Resolved != "" {
		return fmt.Sprintf("%s: it resolves to %s today; pin it as %s@%s", what, escape.String(e.Resolved), escape.String(e.Package), escape.String(e.Resolved))
	}
	return what + ": pin an exact version (pkg@1.2.3)"
}

// Parse recognises an npm package runner's argv: npx [-y|--yes]
// [--package=PKG@V COMMAND | PKG@V] ARGS…, npm exec (or npm x) the same
// with an optional "--" before the arguments, pnpm dlx, and bunx (or bun
// x). ok is false, with a nil error, for any other argv. For a runner's
// argv, err says what keeps it from being pinned: an option Parse does not
// know (it never guesses what one means), a name npm would refuse (path
// traversal, capitals, URL-unsafe characters), a spec that is not a
// registry package (a path, URL, git: or file: spec, an npm: alias), or a
// *NotExactError for a range, tag or missing version (the Spec is returned
// with it, Version empty).
func Parse(argv []string) (spec *Spec, ok bool, err error) {
	if len(argv) == 0 {
		return nil, false, nil
	}
	prog := path.Base(strings.ReplaceAll(argv[0], `\`, "/"))
	prog = strings.TrimSuffix(strings.TrimSuffix(prog, ".cmd"), ".exe")
	var rest []string
	var runner string
	dashDash := false
	switch {
	case prog == "npx":
		runner, rest = "npx", argv[1:]
	case prog == "bunx":
		runner, rest = "bunx", argv[1:]
	case prog == "bun" && len(argv) > 1 && argv[1] == "x":
		runner, rest = "bun x", argv[2:]
	case prog == "npm" && len(argv) > 1 && (argv[1] == "exec" || argv[1] == "x"):
		runner, rest, dashDash = "npm "+argv[1], argv[2:], true
	case prog == "pnpm" && len(argv) > 1 && argv[1] == "dlx":
		runner, rest = "pnpm dlx", argv[2:]
	default:
		return nil, false, nil
	}
	s := &Spec{Runner: runner}
	var pkg string
	i := 0
	for ; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			if !dashDash {
				return nil, true, fmt.Errorf("%s: unexpected -- before the package", runner)
			}
			i++
			break
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		name, value, hasValue := strings.Cut(a, "=")
		switch name {
		case "-y", "--yes", "--no-install", "-q", "--quiet", "--silent", "--bun":
			if hasValue || (name == "--bun" && runner != "bunx" && runner != "bun x") {
				return nil, true, fmt.Errorf("%s: option %s is not one mcpform can pin", runner, escape.String(a))
			}
		case "-p", "--package":
			if runner == "bunx" || runner == "bun x" || pkg != "" {
				return nil, true, fmt.Errorf("%s: only one --package can be pinned", runner)
			}
			if !hasValue {
				if i+1 >= len(rest) {
					return nil, true, fmt.Errorf("%s: %s needs a package", runner, name)
				}
				i++
				value = rest[i]
			}
			if value == "" {
				return nil, true, fmt.Errorf("%s: %s needs a package", runner, name)
			}
			pkg = value
		default:
			return nil, true, fmt.Errorf("%s: option %s is not one mcpform can pin (it could change what is fetched or run)", runner, escape.String(a))
		}
	}
	rest = rest[i:]
	if pkg != "" {
		// npx --package=PKG@V COMMAND ARGS: COMMAND is a bin of PKG.
		if len(rest) > 0 && rest[0] == "--" && dashDash {
			rest = rest[1:]
		}
		if len(rest) == 0 {
			return nil, true, fmt.Errorf("%s: --package=%s names no command to run", runner, escape.String(pkg))
		}
		if err := validBinName(rest[0]); err != nil {
			return nil, true, fmt.Errorf("%s: %w", runner, err)
		}
		s.Command, rest = rest[0], rest[1:]
	} else {
		if len(rest) == 0 {
			return nil, true, fmt.Errorf("%s: no package to run", runner)
		}
		pkg, rest = rest[0], rest[1:]
	}
	if dashDash && len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	s.Args = append([]string{}, rest...)
	name, requested, err := SplitSpec(pkg)
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", runner, err)
	}
	s.Package, s.Requested = name, requested
	v, err := ExactVersion(requested)
	if err != nil {
		if errors.Is(err, errNotExact) {
			return s, true, &NotExactError{Package: name, Requested: requested}
		}
		return nil, true, fmt.Errorf("%s: %s@%s: %w", runner, escape.String(name), escape.String(requested), err)
	}
	s.Version = v
	return s, true, nil
}

// SplitSpec splits a registry package spec NAME[@VERSION] into its name,
// validated by ValidName, and its version part ("latest" when absent).
// Specs that do not name a registry package are refused: paths, URLs,
// git/github/file/link/npm: specs, and user/repo shorthands.
func SplitSpec(spec string) (name, requested string, err error) {
	if spec == "" {
		return "", "", errors.New("empty package spec")
	}
	switch {
	case strings.HasPrefix(spec, ".") || strings.HasPrefix(spec, "/") || strings.HasPrefix(spec, "~") || strings.HasPrefix(spec, `\`) || (len(spec) > 1 && spec[1] == ':'):
		return "", "", fmt.Errorf("%s is a path, not a registry package: mcpform pins packages from the registry", escape.String(spec))
	}
	at := strings.LastIndex(spec, "@")
	name, requested = spec, "latest"
	if at > 0 {
		name, requested = spec[:at], spec[at+1:]
	}
	if i := strings.Index(name, ":"); i >= 0 {
		return "", "", fmt.Errorf("%s is a %s spec, not a registry package: mcpform pins packages from the registry", escape.String(spec), escape.String(name[:i+1]))
	}
	if strings.Contains(requested, ":") {
		scheme, _, _ := strings.Cut(requested, ":")
		return "", "", fmt.Errorf("%s has a %s: version, not a registry version: mcpform pins packages from the registry", escape.String(spec), escape.String(scheme))
	}
	if strings.ContainsAny(requested, "/#\\") {
		return "", "", fmt.Errorf("%s has a version that is a path or a git reference: mcpform pins packages from the registry", escape.String(spec))
	}
	if !strings.HasPrefix(name, "@") && strings.Contains(name, "/") {
		return "", "", fmt.Errorf("%s is a git host shorthand (user/repo), not a registry package: mcpform pins packages from the registry", escape.String(spec))
	}
	if requested == "" {
		return "", "", fmt.Errorf("%s has an empty version", escape.String(spec))
	}
	if err := ValidName(name); err != nil {
		return "", "", err
	}
	return name, requested, nil
}

var errNotExact = errors.New("not an exact version")

// ExactVersion returns v when it is one exact semver version (1.2.3,
// 1.2.3-rc.1) and an error wrapping errNotExact for a range or a tag. A
// version with build metadata is refused: npm ignores it, so two specs
// could name one version.
func ExactVersion(v string) (string, error) {
	sv, err := semver.StrictNewVersion(v)
	if err == nil {
		if sv.Metadata() != "" {
			return "", errors.New("build metadata (+…) does not name a version on the registry")
		}
		return sv.String(), nil
	}
	if _, err := semver.NewConstraint(v); err == nil {
		return "", errNotExact
	}
	if validTag(v) {
		return "", errNotExact
	}
	return "", fmt.Errorf("%s is neither a version, a range nor a tag", escape.String(v))
}

// validTag is npm's rule for a dist-tag: URL-safe and not a range.
func validTag(tag string) bool {
	if tag == "" || len(tag) > 214 {
		return false
	}
	for _, r := range tag {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)) {
			return false
		}
	}
	return true
}

// ValidName applies npm's rules for the name of a new package
// (validate-npm-package-name): at most 214 characters, lower case, each of
// the scope and the name made of a-z, 0-9, '-', '.' and '_' and not
// starting with '.' or '_' (so no "..", no path separators, nothing a URL
// or a file system would read differently), and not node_modules or
// favicon.ico.
func ValidName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%s is not a valid npm package name: %s", escape.String(name), why)
	}
	if name == "" {
		return bad("empty")
	}
	if len(name) > 214 {
		return bad("longer than 214 characters")
	}
	parts := []string{name}
	if strings.HasPrefix(name, "@") {
		scope, rest, ok := strings.Cut(name[1:], "/")
		if !ok {
			return bad("a scoped name is @scope/name")
		}
		parts = []string{scope, rest}
	}
	for _, p := range parts {
		if p == "" {
			return bad("an empty scope or name")
		}
		if p[0] == '.' || p[0] == '_' {
			return bad("a name or scope cannot start with '.' or '_'")
		}
		for _, r := range p {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
				if r >= 'A' && r <= 'Z' {
					return bad("capital letters")
				}
				return bad(fmt.Sprintf("the character %q", r))
			}
		}
	}
	if last := parts[len(parts)-1]; last == "node_modules" || last == "favicon.ico" {
		return bad("a reserved name")
	}
	return nil
}

// validBinName is a bin's name as a package may declare it: one path
// element npm would link into node_modules/.bin.
func validBinName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") || strings.HasPrefix(name, "-") || len(name) > 214 {
		return fmt.Errorf("%s is not a command a package can provide", escape.String(name))
	}
	return nil
}
