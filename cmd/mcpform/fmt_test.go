package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFmtFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    fmtFlags
		wantErr bool
	}{
		{args: nil, want: fmtFlags{list: true, write: true, targets: []string{"."}}},
		{args: []string{"-check"}, want: fmtFlags{check: true, list: true, targets: []string{"."}}},
		{args: []string{"-diff", "-recursive", "a", "b.hcl"}, want: fmtFlags{diff: true, recursive: true, list: true, write: true, targets: []string{"a", "b.hcl"}}},
		{args: []string{"-list=false", "-write=false", "-"}, want: fmtFlags{targets: []string{"-"}}},
		{args: []string{"-", "x"}, wantErr: true},
		{args: []string{"-nope"}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseFmtFlags(tt.args, &bytes.Buffer{})
		if (err != nil) != tt.wantErr {
			t.Errorf("parseFmtFlags(%q) error = %v, want error %v", tt.args, err, tt.wantErr)
			continue
		}
		if tt.wantErr {
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(fmtFlags{})); diff != "" {
			t.Errorf("parseFmtFlags(%q) (-want +got):\n%s", tt.args, diff)
		}
	}
}

func TestFmtExitCodes(t *testing.T) {
	dir := t.TempDir()
	messy := filepath.Join(dir, "mcp.hcl")
	os.WriteFile(messy, []byte("server \"a\" {\ncommand=[\"x\"]\n}\n"), 0o640)
	if code, _, _ := runLangCmd(t, nil, "", "fmt", "-check", dir); code != exitFmtCheck {
		t.Errorf("-check on an unformatted file: code %d, want %d", code, exitFmtCheck)
	}
	if code, _, _ := runLangCmd(t, nil, "", "fmt", dir); code != exitOK {
		t.Errorf("fmt: code %d, want 0", code)
	}
	if st, _ := os.Stat(messy); st.Mode().Perm() != 0o640 {
		t.Errorf("fmt changed the file mode to %v", st.Mode().Perm())
	}
	if code, _, _ := runLangCmd(t, nil, "", "fmt", "-check", dir); code != exitOK {
		t.Errorf("-check on a formatted file: code %d, want 0", code)
	}
	os.WriteFile(filepath.Join(dir, "bad.mcp.hcl"), []byte("server {"), 0o644)
	if code, _, _ := runLangCmd(t, nil, "", "fmt", "-check", dir); code != exitError {
		t.Errorf("-check with a file that does not parse: code %d, want %d", code, exitError)
	}
	if code, _, _ := runLangCmd(t, nil, "", "fmt", filepath.Join(dir, "missing.hcl")); code != exitError {
		t.Errorf("missing file: code %d, want %d", code, exitError)
	}
	if code, _, _ := runLangCmd(t, nil, "", "fmt", "-nope"); code != exitUsage {
		t.Errorf("bad flag: code %d, want %d", code, exitUsage)
	}
}
