package npm

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := []struct {
		argv                    []string
		pkg, version, cmd, args string
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"}, "@modelcontextprotocol/server-everything", "2026.8.31", "", "stdio"},
		{[]string{"/usr/bin/npx", "--yes", "semver@7.7.2", "-r", "^1"}, "semver", "7.7.2", "", "-r ^1"},
		{[]string{"npx", "--package=@scope/pkg@1.0.0-rc.1", "tool", "a"}, "@scope/pkg", "1.0.0-rc.1", "tool", "a"},
		{[]string{"npx", "-y", "-p", "pkg@1.2.3", "tool"}, "pkg", "1.2.3", "tool", ""},
		{[]string{"npm", "exec", "--yes", "pkg@1.2.3", "--", "--flag", "x"}, "pkg", "1.2.3", "", "--flag x"},
		{[]string{"npm", "x", "--", "pkg@1.2.3", "a"}, "pkg", "1.2.3", "", "a"},
		{[]string{"pnpm", "dlx", "pkg@1.2.3", "a"}, "pkg", "1.2.3", "", "a"},
		{[]string{"bunx", "--bun", "pkg@1.2.3"}, "pkg", "1.2.3", "", ""},
		{[]string{"bun", "x", "pkg@1.2.3"}, "pkg", "1.2.3", "", ""},
		{[]string{`C:\npm\npx.cmd`, "-y", "a.b_c-d@0.0.1"}, "a.b_c-d", "0.0.1", "", ""},
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
	for _, argv := range [][]string{nil, {"node", "x.js"}, {"npm", "start"}, {"pnpm", "install"}, {"bun", "run", "x"}, {"npxx", "a@1.0.0"}} {
		if s, ok, err := Parse(argv); ok || err != nil || s != nil {
			t.Errorf("Parse(%q) = %v, %v, %v; want not a runner", argv, s, ok, err)
		}
	}
	bad := []struct {
		argv []string
		want string
	}{
		{[]string{"npx", "-y", "../../etc/passwd@1.0.0"}, "path"},
		{[]string{"npx", "./local"}, "path"},
		{[]string{"npx", "/abs/pkg"}, "path"},
		{[]string{"npx", "@scope/../x@1.0.0"}, "not a valid npm package name"},
		{[]string{"npx", "@../x@1.0.0"}, "not a valid npm package name"},
		{[]string{"npx", "@scope/.x@1.0.0"}, "not a valid npm package name"},
		{[]string{"npx", "_x@1.0.0"}, "not a valid npm package name"},
		{[]string{"npx", "Upper@1.0.0"}, "capital"},
		{[]string{"npx", "a b@1.0.0"}, "not a valid npm package name"},
		{[]string{"npx", "node_modules@1.0.0"}, "reserved"},
		{[]string{"npx", "@scope@1.0.0"}, "scoped"},
		{[]string{"npx", "pkg@file:../x"}, "file:"},
		{[]string{"npx", "file:../x"}, "file:"},
		{[]string{"npx", "git+https://github.com/a/b.git"}, "git+https:"},
		{[]string{"npx", "git@github.com:a/b.git"}, "registry"},
		{[]string{"npx", "https://example.com/x.tgz"}, "https:"},
		{[]string{"npx", "github:a/b"}, "github:"},
		{[]string{"npx", "pkg@npm:other@1.0.0"}, "npm:"},
		{[]string{"npx", "user/repo"}, "shorthand"},
		{[]string{"npx", "pkg@1.0.0#x"}, "git reference"},
		{[]string{"npx", "pkg@"}, "empty version"},
		{[]string{"npx", "pkg@1.0.0+build.1"}, "build metadata"},
		{[]string{"npx", "pkg@!!"}, "neither a version"},
		{[]string{"npx", "--registry=http://evil/", "pkg@1.0.0"}, "not one mcpform can pin"},
		{[]string{"npx", "-c", "sh"}, "not one mcpform can pin"},
		{[]string{"npx", "-y"}, "no package"},
		{[]string{"npx", "-p", "a@1.0.0", "-p", "b@1.0.0", "x"}, "only one --package"},
		{[]string{"npx", "--package=a@1.0.0"}, "names no command"},
		{[]string{"npx", "--package=a@1.0.0", "../x"}, "not a command"},
		{[]string{"pnpm", "dlx", "--", "a@1.0.0"}, "unexpected --"},
	}
	for _, c := range bad {
		_, ok, err := Parse(c.argv)
		if !ok || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, %v; want an error with %q", c.argv, ok, err, c.want)
		}
	}
	notExact := []struct {
		argv      []string
		requested string
	}{
		{[]string{"npx", "-y", "pkg"}, "latest"},
		{[]string{"npx", "-y", "@scope/pkg"}, "latest"},
		{[]string{"npx", "pkg@latest"}, "latest"},
		{[]string{"npx", "pkg@next"}, "next"},
		{[]string{"npx", "pkg@^1.2.0"}, "^1.2.0"},
		{[]string{"npx", "pkg@1.x"}, "1.x"},
		{[]string{"npx", "pkg@>=1 <2"}, ">=1 <2"},
		{[]string{"npx", "pkg@v1.2.3"}, "v1.2.3"},
	}
	for _, c := range notExact {
		s, ok, err := Parse(c.argv)
		var ne *NotExactError
		if !ok || !errors.As(err, &ne) || ne.Requested != c.requested || s == nil || s.Version != "" {
			t.Errorf("Parse(%q) = %+v, %v, %v; want a NotExactError for %q", c.argv, s, ok, err, c.requested)
			continue
		}
		if !strings.Contains(err.Error(), "pin") {
			t.Errorf("%q: %v does not say how to pin it", c.argv, err)
		}
		ne.Resolved = "1.2.3"
		if !strings.Contains(ne.Error(), "resolves to 1.2.3 today; pin it as "+s.Package+"@1.2.3") {
			t.Errorf("%q: %v", c.argv, ne)
		}
	}
}

func TestBinPath(t *testing.T) {
	cases := []struct {
		pkg, bin, cmd, name, file, err string
	}{
		{"@s/tool", `"cli.js"`, "", "tool", "cli.js", ""},
		{"@s/tool", `{"tool":"./bin/t.js","other":"o.js"}`, "", "tool", "bin/t.js", ""},
		{"@s/tool", `{"only":"dist/index.js"}`, "", "only", "dist/index.js", ""},
		{"@s/tool", `{"a":"a.js","b":"b.js"}`, "", "", "", "no bin named tool (it has a, b)"},
		{"@s/tool", `{"a":"a.js","b":"b.js"}`, "b", "b", "b.js", ""},
		{"tool", `{"tool":"../../etc/passwd"}`, "", "", "", "leaves the package"},
		{"tool", `{"tool":"/etc/passwd"}`, "", "", "", "leaves the package"},
		{"tool", ``, "", "", "", "no bin named tool"},
		{"tool", `7`, "", "", "", "neither a path"},
	}
	for _, c := range cases {
		name, file, err := binPath(c.pkg, []byte(c.bin), c.cmd)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("binPath(%s, %s) = %v; want %q", c.pkg, c.bin, err, c.err)
			}
			continue
		}
		if err != nil || name != c.name || file != c.file {
			t.Errorf("binPath(%s, %s, %q) = %q, %q, %v", c.pkg, c.bin, c.cmd, name, file, err)
		}
	}
}

func TestCheckIntegrity(t *testing.T) {
	ok := "sha512-5U3OZh8Xq0Li4nA26l6uNvV9/1suMDuWSn+NjLZIhzinhMY6N3A4DCrxVecBGPf2PsNFKTEv5krxGPRwzxc7jQ=="
	for _, s := range []string{ok, ok + " " + ok} {
		if err := checkIntegrity(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"", "sha1-8pL3aT6zM9C1ZxwdZ1lXb5cX0r4=", "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "md5-1B2M2Y8AsgTpgAmY7PhCfg==", "sha512-AAAA", "sha512-" + ok[7:] + "?opt", ok + " sha1-8pL3aT6zM9C1ZxwdZ1lXb5cX0r4=", "sha512"} {
		if err := checkIntegrity(s); err == nil {
			t.Errorf("checkIntegrity(%q) accepted", s)
		}
	}
}

// TestLatest asks the real registry what a tag and a range resolve to
// today: an exact version, which completes the NotExactError.
func TestLatest(t *testing.T) {
	needNPM(t)
	ctx := context.Background()
	for _, req := range []string{"latest", "^7.0.0", "7.7.x"} {
		v, err := Latest(ctx, "semver", req)
		if err != nil {
			t.Fatalf("Latest(semver, %s): %v", req, err)
		}
		if _, err := ExactVersion(v); err != nil || !strings.HasPrefix(v, "7.") {
			t.Errorf("Latest(semver, %s) = %q", req, v)
		}
	}
	if _, err := Latest(ctx, "semver", "^999.0.0"); err == nil || !strings.Contains(err.Error(), "no version") {
		t.Errorf("Latest of an unsatisfiable range = %v", err)
	}
	if _, err := Latest(ctx, "semver", "no-such-tag"); err == nil || !strings.Contains(err.Error(), "no dist-tag") {
		t.Errorf("Latest of a missing tag = %v", err)
	}
}
