package lang

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/mcpform/mcpform/internal/escape"
)

// A server started through a package runner (npx, uvx, pnpm dlx, bunx)
// runs whatever release the registry holds when it starts, unless its
// command names an exact version: plan could then lock one release and run
// start another. This file holds the one parser of such package specs:
// validate and plan warn with it, and import (onboard) writes its comment
// with it.

// Unpinned is a registry package a command fetches without an exact
// version, and the pinned form to write instead.
type Unpinned struct {
	// Runner is the package runner as the user knows it: "npx", "uvx",
	// "pnpm dlx", "bunx".
	Runner string
	// Spec is the package argument as written, without a flag's "--from="
	// prefix: "pkg", "pkg@latest", "mcp-server-fetch>=2025.1".
	Spec string
	// Name is the package's name: "@scope/pkg", "mcp-server-fetch".
	Name string
	// Pinned is Spec with VERSION for the version: "pkg@VERSION",
	// "mcp-server-fetch==VERSION".
	Pinned string
	// Fixed is the argv with the pinned form in place (and, for npx, -y,
	// which a client's config usually has and a server started without a
	// terminal needs).
	Fixed []string
	// Latest is a command that shows the latest release: "npm view pkg
	// version", "uvx pip index versions pkg".
	Latest string
	// Python is set for a package of PyPI rather than npm.
	Python bool
}

var (
	npmExact = regexp.MustCompile(`^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	pyExact  = regexp.MustCompile(`^\d+(\.\d+)*((a|b|rc|\.post|\.dev)\d+)*(\+[0-9A-Za-z.]+)?$`)
)

// runners are the package runners whose package UnpinnedPackage checks:
// the flags that take a value (so their value is not the package) and
// those whose value is the package.
var runners = []struct {
	prog, sub         string
	valueFlags, pkgFl []string
	python            bool
}{
	{prog: "npx", valueFlags: []string{"--package", "-p", "--call", "-c", "--workspace", "-w"}, pkgFl: []string{"--package", "-p"}},
	{prog: "npm", sub: "exec", valueFlags: []string{"--package", "-p", "--call", "-c", "--workspace", "-w"}, pkgFl: []string{"--package", "-p"}},
	{prog: "pnpm", sub: "dlx", valueFlags: []string{"--package", "--shell-mode", "-c", "--reporter", "--dir", "-C"}, pkgFl: []string{"--package"}},
	{prog: "pnpx", valueFlags: []string{"--package", "--shell-mode", "-c", "--reporter", "--dir", "-C"}, pkgFl: []string{"--package"}},
	{prog: "bunx", valueFlags: []string{"--package", "-p", "--cwd"}, pkgFl: []string{"--package", "-p"}},
	{prog: "uvx", python: true, valueFlags: []string{"--from", "--with", "--with-editable", "--with-requirements", "--python", "-p", "--index", "--index-url",
		"--extra-index-url", "--default-index", "--constraints", "-c", "--overrides", "--refresh-package", "--reinstall-package", "--upgrade-package"},
		pkgFl: []string{"--from"}},
	// pins/pypi.Parse refuses every option of these that changes what runs
	// (--with, --python, the index flags): this table only finds the package.
	{prog: "pipx", sub: "run", python: true, valueFlags: []string{"--spec", "--python", "--index-url", "-i", "--pip-args", "--backend"}, pkgFl: []string{"--spec"}},
}

// UnpinnedPackage reports the registry package argv runs through npx,
// npm exec, uvx, pipx run, pnpm dlx (pnpx) or bunx when it has no exact version: "pkg",
// "pkg@latest", "pkg@^1", a dist-tag such as "pkg@next", "pkg>=1". A
// Windows "cmd /c" wrapper is looked through; a local path, a URL or a git
// source is not a registry package.
func UnpinnedPackage(argv []string) (Unpinned, bool) {
	if len(argv) == 0 {
		return Unpinned{}, false
	}
	off := 0
	if ProgramName(argv[0]) == "cmd" && len(argv) > 2 && strings.EqualFold(argv[1], "/c") {
		off = 2
	}
	prog := ProgramName(argv[off])
	for _, r := range runners {
		if prog != r.prog {
			continue
		}
		start := off + 1
		runner := r.prog
		if r.sub != "" {
			i := slices.IndexFunc(argv[start:], func(a string) bool { return !strings.HasPrefix(a, "-") })
			if i < 0 || argv[start+i] != r.sub {
				continue
			}
			start += i + 1
			runner += " " + r.sub
		}
		at, prefix, ok := packageArg(argv, start, r.valueFlags, r.pkgFl)
		if !ok {
			return Unpinned{}, false
		}
		return checkSpec(runner, r.python, argv, at, prefix)
	}
	return Unpinned{}, false
}

// packageArg finds the package argument from argv[start]: a package
// flag's value, or the first argument that is not a flag. prefix is the
// "--from=" before it when the flag and value are one argument.
func packageArg(argv []string, start int, valueFlags, pkgFlags []string) (at int, prefix string, ok bool) {
	for i := start; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			if i+1 < len(argv) {
				return i + 1, "", true
			}
			return 0, "", false
		}
		if strings.HasPrefix(a, "-") {
			flag, _, hasValue := strings.Cut(a, "=")
			if slices.Contains(pkgFlags, flag) {
				if hasValue {
					return i, flag + "=", true
				}
				if i+1 < len(argv) {
					return i + 1, "", true
				}
			}
			if !hasValue && slices.Contains(valueFlags, flag) {
				i++
			}
			continue
		}
		return i, "", true
	}
	return 0, "", false
}

// checkSpec looks at the package spec argv[i] (after prefix).
func checkSpec(runner string, python bool, argv []string, i int, prefix string) (Unpinned, bool) {
	spec := strings.TrimPrefix(argv[i], prefix)
	if spec == "" || strings.Contains(spec, "://") || strings.HasPrefix(spec, ".") || strings.HasPrefix(spec, "/") || strings.HasPrefix(spec, "~") ||
		strings.HasPrefix(spec, "git+") || strings.HasPrefix(spec, "github:") || strings.HasPrefix(spec, "file:") || strings.HasPrefix(spec, "npm:") {
		return Unpinned{}, false // not a registry package, or an alias
	}
	u := Unpinned{Runner: runner, Spec: spec, Python: python}
	if python {
		n, v, ok := strings.Cut(spec, "==")
		if !ok {
			n, v, _ = strings.Cut(spec, "@")
		}
		if pyExact.MatchString(strings.TrimPrefix(v, "=")) {
			return Unpinned{}, false
		}
		if j := strings.IndexAny(n, "<>=~!["); j >= 0 {
			n = n[:j]
		}
		u.Name = n
		u.Pinned = n + "==VERSION"
		u.Latest = "uvx pip index versions " + n
	} else {
		rest, scope := spec, ""
		if strings.HasPrefix(spec, "@") {
			if j := strings.IndexByte(spec, '/'); j > 0 {
				scope, rest = spec[:j+1], spec[j+1:]
			}
		}
		n, v, _ := strings.Cut(rest, "@")
		if npmExact.MatchString(v) {
			return Unpinned{}, false
		}
		u.Name = scope + n
		u.Pinned = u.Name + "@VERSION"
		u.Latest = "npm view " + u.Name + " version"
	}
	u.Fixed = slices.Clone(argv)
	u.Fixed[i] = prefix + u.Pinned
	if runner == "npx" && !slices.ContainsFunc(u.Fixed, func(a string) bool { return a == "-y" || a == "--yes" }) {
		at := slices.IndexFunc(u.Fixed, func(a string) bool { return ProgramName(a) == "npx" })
		u.Fixed = slices.Insert(u.Fixed, at+1, "-y")
	}
	return u, true
}

// HCLList is hclList for the other packages that say which command to
// write (plan's exact-version error).
func HCLList(argv []string) string { return hclList(argv) }

// hclList writes argv as an HCL list of strings, each escaped as
// escape.HCLString escapes it: `["npx", "-y", "pkg@VERSION"]`.
func hclList(argv []string) string {
	q := make([]string, len(argv))
	for i, s := range argv {
		q[i] = escape.HCLString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Where reads how to find the version: the command, and PyPI's page for a
// Python package.
func (u Unpinned) Where() string {
	if u.Python {
		return fmt.Sprintf("`%s` or https://pypi.org/project/%s/ shows the releases", u.Latest, u.Name)
	}
	return fmt.Sprintf("`%s` shows the latest", u.Latest)
}

// checkPinned warns when srv runs a registry package without an exact
// version (UnpinnedPackage), once per server, at its command.
func checkPinned(srv *Server, command *hcl.Attribute) hcl.Diagnostics {
	u, ok := UnpinnedPackage(srv.Command)
	if !ok {
		return nil
	}
	subject := command.Expr.Range()
	return hcl.Diagnostics{{
		Severity: hcl.DiagWarning,
		Summary:  "Unpinned package",
		Detail: fmt.Sprintf("%s runs the %s package %s without an exact version, so plan could lock one release and run start another. Pin it: command = %s, with VERSION the release you reviewed (%s).",
			srv.Addr, u.Runner, escape.HCLString(u.Spec), hclList(u.Fixed), u.Where()),
		Subject: &subject,
	}}
}
