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

func TestUnifiedDiff(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"a\nb\nc\n", "a\nB\nc\n", "--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"", "a\n", "--- x\n+++ y\n@@ -0,0 +1 @@\n+a\n"},
		{"a\n", "", "--- x\n+++ y\n@@ -1 +0,0 @@\n-a\n"},
		{"a", "a\n", "--- x\n+++ y\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"},
		// Two changes far apart make two hunks.
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "X\n2\n3\n4\n5\n6\n7\n8\n9\nY\n",
			"--- x\n+++ y\n@@ -1,4 +1,4 @@\n-1\n+X\n 2\n 3\n 4\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+Y\n"},
	}
	for _, tt := range tests {
		if got := unifiedDiff("x", "y", tt.a, tt.b); got != tt.want {
			t.Errorf("unifiedDiff(%q, %q) =\n%s\nwant\n%s", tt.a, tt.b, got, tt.want)
		}
	}
}
