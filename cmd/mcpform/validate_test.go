package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseValidateFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    validateFlags
		wantErr bool
	}{
		{args: nil, want: validateFlags{dir: "."}},
		{args: []string{"-json", "sub"}, want: validateFlags{json: true, dir: "sub"}},
		{args: []string{"-no-color", "-var", "a=1", "-var", "b=x=y", "-var-file", "f.hcl", "-var-file", "g.json"},
			want: validateFlags{noColor: true, dir: ".", vars: varFlags{vars: map[string]string{"a": "1", "b": "x=y"}, files: []string{"f.hcl", "g.json"}}}},
		{args: []string{"-var", "a="}, want: validateFlags{dir: ".", vars: varFlags{vars: map[string]string{"a": ""}}}},
		{args: []string{"-var", "=x"}, wantErr: true},
		{args: []string{"-var", "novalue"}, wantErr: true},
		{args: []string{"a", "b"}, wantErr: true},
		{args: []string{"-nope"}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseValidateFlags(tt.args, &bytes.Buffer{})
		if (err != nil) != tt.wantErr {
			t.Errorf("parseValidateFlags(%q) error = %v, want error %v", tt.args, err, tt.wantErr)
			continue
		}
		if tt.wantErr {
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(validateFlags{}, varFlags{})); diff != "" {
			t.Errorf("parseValidateFlags(%q) (-want +got):\n%s", tt.args, diff)
		}
	}
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
	if code, _, stderr := runLangCmd(t, nil, "", "validate", dir); code != exitError || !strings.Contains(stderr, "No value for required variable") {
		t.Errorf("without v: code %d, stderr %q", code, stderr)
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
