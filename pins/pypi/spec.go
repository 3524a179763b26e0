package pypi

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
)

// Spec is what a PyPI package runner's argv asks for: one package at one
// version, the console script it runs, and the arguments after it.
type Spec struct {
	// Runner is the runner as it was written ("uvx", "uv tool run",
	// "pipx run"), for messages.
	Runner string
	// Package is the package's name, normalised (PEP 503: lower case,
	// each run of '-', '_' and '.' one '-'); Version its exact version
	// ("" when the argv gave none or a range, which Parse returns as a
	// *NotExactError).
	Package, Version string
	// Requested is the requirement as written ("mcp-server-fetch>=1").
	Requested string
	// Command is the console script the runner starts when the argv names
	// it (uvx --from PKG==V COMMAND, pipx run --spec PKG==V COMMAND); ""
	// means the runner's default: the script named like the package, or
	// the package's only one.
	Command string
	// Args are the arguments the script is started with.
	Args []string
}

// NotExactError is a requirement without an exact version: none, a range
// (>=, ~=, !=, a wildcard) or an arbitrary-equality ===.
type NotExactError struct {
	Runner, Package, Requested string
}

func (e *NotExactError) Error() string {
	return fmt.Sprintf("%s %s has no exact version (an unpinned package runs whatever the index holds on each start): pin it as %s==VERSION, with VERSION the release you reviewed, such as 1.2.3",
		e.Runner, escape.String(e.Requested), escape.String(e.Package))
}

// flagsWithoutValue are the runner options Parse accepts: they change
// nothing about what is fetched or run (run starts the pinned tree and
// drops them). Any other option is an error: Parse never guesses.
var flagsWithoutValue = map[string][]string{
	"uvx":      {"-q", "--quiet", "--isolated", "--no-progress", "-n", "--no-cache"},
	"pipx run": {"-q", "--quiet", "--no-cache"},
}

// Parse recognises a PyPI package runner's argv: uvx [OPTS] PKG==V ARGS…,
// uvx [OPTS] --from PKG==V COMMAND ARGS…, uv tool run the same as uvx,
// pipx run [OPTS] PKG==V ARGS… and pipx run --spec PKG==V COMMAND ARGS…
// (for uvx and uv tool run, PKG@V is PKG==V and PKG@latest has no version,
// as uv reads them).
// ok is false, with a nil error, for any other argv. For a runner's argv,
// err says what keeps it from being pinned: an option Parse does not know
// (the same flags lang's runner table knows as taking a value, --with,
// --python, --index-url…, are refused too: they change what runs), a name
// PEP 508 refuses, a requirement that is not an index package (a URL, a
// path, git+…, a local file, extras), or a *NotExactError (the Spec is
// returned with it, Version empty).
func Parse(argv []string) (spec *Spec, ok bool, err error) {
	if len(argv) == 0 {
		return nil, false, nil
	}
	prog := path.Base(strings.ReplaceAll(argv[0], `\`, "/"))
	prog = strings.TrimSuffix(prog, ".exe")
	var runner, fromFlag string
	var rest []string
	switch {
	case prog == "uvx":
		runner, rest, fromFlag = "uvx", argv[1:], "--from"
	case prog == "uv" && len(argv) > 2 && argv[1] == "tool" && argv[2] == "run":
		runner, rest, fromFlag = "uv tool run", argv[3:], "--from"
	case (prog == "pipx") && len(argv) > 1 && argv[1] == "run":
		runner, rest, fromFlag = "pipx run", argv[2:], "--spec"
	default:
		return nil, false, nil
	}
	table := runner
	if table == "uv tool run" {
		table = "uvx"
	}
	s := &Spec{Runner: runner}
	var from string
	i := 0
	for ; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			return nil, true, fmt.Errorf("%s: -- before the package is not a form mcpform can pin", runner)
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		name, value, hasValue := strings.Cut(a, "=")
		if name == fromFlag {
			if from != "" {
				return nil, true, fmt.Errorf("%s: only one %s can be pinned", runner, fromFlag)
			}
			if !hasValue {
				if i+1 >= len(rest) {
					return nil, true, fmt.Errorf("%s: %s needs a requirement", runner, fromFlag)
				}
				i++
				value = rest[i]
			}
			if value == "" {
				return nil, true, fmt.Errorf("%s: %s needs a requirement", runner, fromFlag)
			}
			from = value
			continue
		}
		known := false
		for _, f := range flagsWithoutValue[table] {
			known = known || (f == name && !hasValue)
		}
		if !known {
			return nil, true, fmt.Errorf("%s: option %s is not one mcpform can pin (it could change what is fetched or run); write %s %s PACKAGE==VERSION ARGS…", runner, escape.String(a), runner, fromFlag)
		}
	}
	rest = rest[i:]
	req := from
	if from != "" {
		if len(rest) == 0 {
			return nil, true, fmt.Errorf("%s: %s %s names no command to run", runner, fromFlag, escape.String(from))
		}
		if err := validScriptName(rest[0]); err != nil {
			return nil, true, fmt.Errorf("%s: %w", runner, err)
		}
		s.Command, rest = rest[0], rest[1:]
	} else {
		if len(rest) == 0 {
			return nil, true, fmt.Errorf("%s: no package to run", runner)
		}
		req, rest = rest[0], rest[1:]
	}
	s.Args = append([]string{}, rest...)
	s.Requested = req
	if table == "uvx" {
		// uv's shorthand: PKG@VERSION is PKG==VERSION, PKG@latest the
		// latest release.
		if n, v, ok := strings.Cut(req, "@"); ok && n != "" && !strings.ContainsAny(n, " /:") && !strings.ContainsAny(v, " /:@") {
			if v == "latest" {
				req = n
			} else {
				req = n + "==" + v
			}
		}
	}
	name, version, err := SplitRequirement(req)
	if err != nil {
		var ne *NotExactError
		if errors.As(err, &ne) {
			ne.Runner = runner
			s.Package = ne.Package
			return s, true, ne
		}
		return nil, true, fmt.Errorf("%s: %w", runner, err)
	}
	s.Package, s.Version = name, version
	return s, true, nil
}

var (
	// pep508Name is a distribution name as PEP 508 writes it.
	pep508Name = regexp.MustCompile(`^([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])$`)
	// exactVersion is a PEP 440 public version in the form pip reports
	// one (N(.N)*[{a|b|rc}N][.postN][.devN]); no epoch, no local part, no
	// wildcard.
	exactVersion = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?$`)
	runsOfSep    = regexp.MustCompile(`[-_.]+`)
	versionLike  = regexp.MustCompile(`^[0-9!][0-9A-Za-z.+!_-]*$`)
	scriptName   = regexp.MustCompile(`^[A-Za-z0-9._+-]+$`)
)

// MaxNameLength bounds a package name (PyPI has none; no real one is near).
const MaxNameLength = 200

// Normalize is PEP 503's normal form of a name: lower case, every run of
// '-', '_' and '.' one '-'.
func Normalize(name string) string {
	return runsOfSep.ReplaceAllString(strings.ToLower(name), "-")
}

// ValidName says whether name is a PEP 508 distribution name within
// MaxNameLength: letters, digits, '-', '_' and '.', beginning and ending
// with a letter or digit, so no path separator and no "..".
func ValidName(name string) error {
	if len(name) > MaxNameLength {
		return fmt.Errorf("a package name longer than %d characters", MaxNameLength)
	}
	if !pep508Name.MatchString(name) {
		return fmt.Errorf("%s is not a valid Python package name (PEP 508: letters, digits, '-', '_' and '.', beginning and ending with a letter or digit)", escape.String(name))
	}
	return nil
}

// ExactVersion says whether v is one exact release as pip reports it.
func ExactVersion(v string) bool {
	return len(v) <= 64 && exactVersion.MatchString(v)
}

// SplitRequirement splits a requirement NAME==VERSION into the normalised
// name and the version. Anything else is refused: a URL, a path, a git+
// or file: spec, a wheel or archive file, extras (pkg[extra]), environment
// markers; a requirement without an exact version (pkg, pkg>=1, pkg~=1.2,
// pkg==1.*, pkg===1) is a *NotExactError.
func SplitRequirement(req string) (name, version string, err error) {
	switch {
	case req == "":
		return "", "", errors.New("an empty requirement")
	case strings.Contains(req, "://") || strings.HasPrefix(req, "git+") || strings.Contains(req, " @ ") || strings.HasPrefix(req, "file:"):
		return "", "", fmt.Errorf("%s is a URL or a VCS source, not an index package: mcpform pins packages from the index (NAME==VERSION)", escape.String(req))
	case strings.HasPrefix(req, ".") || strings.HasPrefix(req, "/") || strings.HasPrefix(req, "~") || strings.ContainsAny(req, `/\`) || (len(req) > 1 && req[1] == ':'):
		return "", "", fmt.Errorf("%s is a path, not an index package: mcpform pins packages from the index (NAME==VERSION)", escape.String(req))
	case strings.HasSuffix(req, ".whl") || strings.HasSuffix(req, ".tar.gz") || strings.HasSuffix(req, ".zip"):
		return "", "", fmt.Errorf("%s is a local distribution file, not an index package: mcpform pins packages from the index (NAME==VERSION)", escape.String(req))
	case strings.ContainsAny(req, "[]"):
		return "", "", fmt.Errorf("%s asks for extras, which mcpform does not pin yet: name the package alone (NAME==VERSION)", escape.String(req))
	case strings.ContainsAny(req, ";@ \t,"):
		return "", "", fmt.Errorf("%s is not a requirement mcpform can pin: write NAME==VERSION", escape.String(req))
	}
	end := strings.IndexAny(req, "<>=!~")
	if end < 0 {
		if err := ValidName(req); err != nil {
			return "", "", err
		}
		return "", "", &NotExactError{Package: Normalize(req), Requested: req}
	}
	raw := req[:end]
	if err := ValidName(raw); err != nil {
		return "", "", err
	}
	name = Normalize(raw)
	op := req[end:]
	v, isEq := strings.CutPrefix(op, "==")
	if !isEq || strings.HasPrefix(v, "=") || !ExactVersion(v) {
		if isEq && !strings.HasPrefix(v, "=") && !strings.Contains(v, "*") && !pyVersionLike(v) {
			return "", "", fmt.Errorf("%s: %s is not a version", escape.String(req), escape.String(v))
		}
		return "", "", &NotExactError{Package: name, Requested: req}
	}
	return name, v, nil
}

// pyVersionLike is a version pip would accept that ExactVersion does not
// take as written (an epoch, a local part, other spellings): pinning it
// needs its normal form, so it is reported as not exact.
func pyVersionLike(v string) bool {
	return versionLike.MatchString(v)
}

// validScriptName is a console script's name as a package may declare it:
// one path element, no option.
func validScriptName(name string) error {
	if name == "" || name == "." || name == ".." || len(name) > 200 || strings.HasPrefix(name, "-") ||
		!scriptName.MatchString(name) {
		return fmt.Errorf("%s is not a command a package can provide", escape.String(name))
	}
	return nil
}
