package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestParseValidateFlags(t *testing.T) {
	testParse(t, parseValidateFlags, []parseCase[validateFlags]{
		{args: nil, want: validateFlags{dir: "."}},
		{args: []string{"-json", "sub"}, want: validateFlags{json: true, dir: "sub"}},
		{args: []string{"-no-color", "-var", "a=1", "-var", "b=x=y", "-var-file", "f.hcl", "-var-file", "g.json"},
			want: validateFlags{noColor: true, dir: ".", vars: varFlags{vars: map[string]string{"a": "1", "b": "x=y"}, files: []string{"f.hcl", "g.json"}}}},
		{args: []string{"-var", "a="}, want: validateFlags{dir: ".", vars: varFlags{vars: map[string]string{"a": ""}}}},
		{args: []string{"-var", "=x"}, wantErr: true},
		{args: []string{"-var", "novalue"}, wantErr: true},
		{args: []string{"a", "b"}, wantErr: true},
		{args: []string{"-nope"}, wantErr: true},
	})
}

func runLangCmd(t *testing.T, env map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	io := &stdio{in: strings.NewReader(stdin), out: &out, err: &errb, getenv: func(k string) string { return env[k] }}
	code := run(context.Background(), args, io)
	return code, out.String(), errb.String()
}

func TestValidateExitCodes(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "mcp.hcl"), []byte("variable \"v\" {}\nserver \"s\" {\n  command = [var.v]\n}\n"), 0o644)
	// validate checks the configuration without values, as terraform
	// validate does; plan needs them.
	if code, stdout, stderr := runLangCmd(t, nil, "", "validate", dir); code != exitOK || !strings.Contains(stdout, "Success!") || stderr != "" {
		t.Errorf("validate without v: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	t.Chdir(dir) // plan takes no directory argument; t.Chdir restores it
	if code, _, stderr := runLangCmd(t, nil, "", "plan"); code != exitError || !strings.Contains(stderr, "No value for required variable") {
		t.Errorf("plan without v: code %d, stderr %q", code, stderr)
	}
	if code, stdout, _ := runLangCmd(t, map[string]string{"MCPFORM_VAR_v": "x"}, "", "validate", dir); code != exitOK || !strings.Contains(stdout, "Success!") {
		t.Errorf("with MCPFORM_VAR_v: code %d, stdout %q", code, stdout)
	}
	if code, _, _ := runLangCmd(t, nil, "", "validate", "-bogus"); code != exitUsage {
		t.Errorf("bad flag: code %d, want %d", code, exitUsage)
	}
	if code, _, _ := runLangCmd(t, nil, "", "validate", "-h"); code != exitOK {
		t.Errorf("-h: code %d, want 0", code)
	}
}

// TestValidateExampleFile runs validate on mcp.hcl.example as the file
// says to on a fresh clone ("cp mcp.hcl.example mcp.hcl && mcpform
// validate" at the root): its module is a local directory under examples/,
// so it needs no network and no init, and it has no warning.
func TestValidateExampleFile(t *testing.T) {
	root := filepath.Join("..", "..")
	src, err := os.ReadFile(filepath.Join(root, "mcp.hcl.example"))
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Abs(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mcp.hcl"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(examples, filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	// The programs its servers start, on PATH: validate warns about one
	// that is not (TestValidateProgramNotFound).
	bin := t.TempDir()
	for _, prog := range []string{"uvx", "npx", "github-mcp-server"} {
		if err := os.WriteFile(filepath.Join(bin, prog), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"PATH": bin + ":/usr/bin:/bin", "HOME": dir}
	code, stdout, stderr := runLangCmd(t, env, "", "validate", dir)
	if code != exitOK || stdout != "Success! The configuration is valid.\n" || stderr != "" {
		t.Errorf("validate mcp.hcl.example: code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".mcpform")); err == nil {
		t.Error("validate fetched modules: it must not need init")
	}
}

// TestValidateProgramNotFound: validate warns, without failing, about a
// server whose command[0] is not on PATH, and says what to install.
func TestValidateProgramNotFound(t *testing.T) {
	dir := t.TempDir()
	hcl := "server \"fetch\" {\n  command = [\"uvx\", \"mcp-server-fetch==2025.4.7\"]\n  env     = [\"PATH\", \"HOME\"]\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "mcp.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	code, stdout, stderr := runLangCmd(t, map[string]string{"PATH": empty}, "", "validate", dir)
	if code != exitOK || !strings.Contains(stdout, "Success!") {
		t.Errorf("validate: code %d, stdout %q: a missing program is a warning, not an error", code, stdout)
	}
	for _, want := range []string{
		"Warning: Program not found",
		`server.fetch runs its package through uvx, which mcpform does not run: plan pins the package with its whole tree and probes it, and run starts it, with python3, and python3 is not on mcpform's PATH. To fix it, install Python (https://www.python.org/downloads/); or remove the server's block; or plan the others with -target.`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if err := os.WriteFile(filepath.Join(empty, "python3"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, stderr := runLangCmd(t, map[string]string{"PATH": empty}, "", "validate", dir); stderr != "" {
		t.Errorf("with python3 on PATH (and no uvx, which mcpform does not run): stderr %q, want none", stderr)
	}
}

// validate's "Success!" is coloured only when colour is on, and reads the
// same either way once the escape codes are gone.
func TestSuccessLine(t *testing.T) {
	const plain = "Success! The configuration is valid."
	if got := successLine(false); got != plain {
		t.Errorf("without colour: %q", got)
	}
	got := successLine(true)
	if !strings.HasPrefix(got, "\x1b[32;1mSuccess!\x1b[0") {
		t.Errorf("with colour, Success! is not bold green: %q", got)
	}
	if stripped := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(got, ""); stripped != plain {
		t.Errorf("with colour, the text is %q", stripped)
	}
}
