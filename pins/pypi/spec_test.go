package pypi

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := []struct {
		argv                    []string
		pkg, version, cmd, args string
	}{
		{[]string{"uvx", "mcp-server-fetch==2025.4.7"}, "mcp-server-fetch", "2025.4.7", "", ""},
		{[]string{"/usr/local/bin/uvx", "-q", "Mcp_Server.Time==1.2.3", "--local-timezone", "UTC"}, "mcp-server-time", "1.2.3", "", "--local-timezone UTC"},
		{[]string{"uvx", "--from", "mcp-server-git==0.6.2", "mcp-server-git", "--repository", "."}, "mcp-server-git", "0.6.2", "mcp-server-git", "--repository ."},
		{[]string{"uvx", "--from=pkg==1.0rc1", "tool"}, "pkg", "1.0rc1", "tool", ""},
		{[]string{"uv", "tool", "run", "pkg==1.0.post1", "a"}, "pkg", "1.0.post1", "", "a"},
		{[]string{"pipx", "run", "pkg==2.0", "a", "b"}, "pkg", "2.0", "", "a b"},
		{[]string{"pipx", "run", "--spec", "pkg==2.0.dev3", "tool", "-x"}, "pkg", "2.0.dev3", "tool", "-x"},
		{[]string{`C:\bin\uvx.exe`, "a==1"}, "a", "1", "", ""},
		{[]string{"uvx", "mcp-server-time@2026.8.18"}, "mcp-server-time", "2026.8.18", "", ""},
		{[]string{"uvx", "--from", "mcp-server-git@0.6.2", "mcp-server-git"}, "mcp-server-git", "0.6.2", "mcp-server-git", ""},
	}
	for _, c := range good {
		s, ok, err := Parse(c.argv)
		if err != nil || !ok {
			t.Errorf("Parse(%q) = %v, %v", c.argv, ok, err)
			continue
		}
		if s.Package != c.pkg || s.Version != c.version || s.Command != c.cmd || strings.Join(s.Args, " ") != c.args {
			t.Errorf("Parse(%q) = %+v", c.argv, s)
		}
	}
	for _, argv := range [][]string{nil, {"python3", "-m", "srv"}, {"uv", "run", "x"}, {"uv", "tool", "install", "x"}, {"pipx", "install", "x"}, {"uvxx", "a==1"}, {"npx", "a@1.0.0"}} {
		if s, ok, err := Parse(argv); ok || err != nil || s != nil {
			t.Errorf("Parse(%q) = %v, %v, %v; want not a runner", argv, s, ok, err)
		}
	}
	notExact := [][]string{
		{"uvx", "mcp-server-fetch"},
		{"uvx", "mcp-server-fetch>=1.0"},
		{"uvx", "pkg~=1.2"},
		{"uvx", "pkg==1.*"},
		{"uvx", "pkg===1.0"},
		{"uvx", "pkg!=1.0"},
		{"uvx", "pkg==1.0+local"},
		{"pipx", "run", "pkg"},
		{"uvx", "pkg@latest"},
		{"uvx", "pkg@1.*"},
		{"uvx", "--from", "pkg", "tool"},
	}
	for _, argv := range notExact {
		s, ok, err := Parse(argv)
		var ne *NotExactError
		if !ok || !errors.As(err, &ne) || s == nil || s.Version != "" {
			t.Errorf("Parse(%q) = %+v, %v, %v; want a *NotExactError", argv, s, ok, err)
			continue
		}
		if !strings.Contains(err.Error(), "==VERSION") {
			t.Errorf("Parse(%q): %v does not say how to pin", argv, err)
		}
	}
	bad := []struct {
		argv []string
		want string
	}{
		{[]string{"uvx", "--with", "requests", "pkg==1.0"}, "option --with is not one mcpform can pin"},
		{[]string{"uvx", "--python", "3.12", "pkg==1.0"}, "option --python"},
		{[]string{"uvx", "--index-url=https://evil.example/simple", "pkg==1.0"}, "option --index-url"},
		{[]string{"uvx", "-q=1", "pkg==1.0"}, "option -q=1"},
		{[]string{"pipx", "run", "--pip-args=--pre", "pkg==1.0"}, "option --pip-args"},
		{[]string{"uvx", "git+https://github.com/a/b"}, "not an index package"},
		{[]string{"uvx", "pkg @ https://x/pkg.whl"}, "not an index package"},
		{[]string{"pipx", "run", "pkg@1.0"}, "not a requirement mcpform can pin"},
		{[]string{"uvx", "./local"}, "is a path"},
		{[]string{"uvx", "../../etc==1.0"}, "is a path"},
		{[]string{"uvx", "dist/pkg-1.0-py3-none-any.whl"}, "is a path"},
		{[]string{"uvx", "pkg-1.0-py3-none-any.whl"}, "local distribution file"},
		{[]string{"uvx", "file:pkg"}, "not an index package"},
		{[]string{"uvx", "pkg[cli]==1.0"}, "extras"},
		{[]string{"uvx", "pkg==1.0;python_version>'3'"}, "not a requirement mcpform can pin"},
		{[]string{"uvx", "-pkg==1.0"}, "option"},
		{[]string{"uvx", "_pkg==1.0"}, "not a valid Python package name"},
		{[]string{"uvx", "pkg==abc"}, "is not a version"},
		{[]string{"uvx"}, "no package to run"},
		{[]string{"uvx", "--from", "pkg==1.0"}, "names no command"},
		{[]string{"uvx", "--from", "pkg==1.0", "../x"}, "not a command"},
		{[]string{"uvx", "--from", "a==1", "--from", "b==1", "x"}, "only one --from"},
		{[]string{"uvx", "--", "pkg==1.0"}, "-- before the package"},
	}
	for _, c := range bad {
		_, ok, err := Parse(c.argv)
		if !ok || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, %v; want an error with %q", c.argv, ok, err, c.want)
		}
		var ne *NotExactError
		if errors.As(err, &ne) {
			t.Errorf("Parse(%q): %v is a NotExactError, want a refusal", c.argv, err)
		}
	}
}

func TestIndexOf(t *testing.T) {
	for out, want := range map[string]string{
		"Looking in indexes: https://u:****@mirror.example/simple, https://pypi.org/simple\nCollecting x": "https://mirror.example/simple",
		"Looking in indexes: https://mirror.example/simple\nLooking in links: /w\n":                       "https://mirror.example/simple",
		"Looking in links: /tmp/wheels\nProcessing ./x.whl":                                               "",
		"Collecting x\nWould install x-1.0":                                                               DefaultIndex,
	} {
		if got := indexOf(out); got != want {
			t.Errorf("indexOf(%q) = %q, want %q", out, got, want)
		}
	}
	for _, bad := range []string{"file:///tmp/x", "https://a b/", "https://\x1b[2J/", "ftp://x/"} {
		if validIndex(bad) {
			t.Errorf("validIndex(%q)", bad)
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{"Foo": "foo", "a_b.c--d": "a-b-c-d", "mcp.server__x": "mcp-server-x", "a": "a"} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
	if err := ValidName(strings.Repeat("a", MaxNameLength+1)); err == nil {
		t.Error("ValidName accepts a name past MaxNameLength")
	}
}
