package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseFmtFlags(t *testing.T) {
	testParse(t, parseFmtFlags, []parseCase[fmtFlags]{
		{args: nil, want: fmtFlags{list: true, write: true, targets: []string{"."}}},
		{args: []string{"-check"}, want: fmtFlags{check: true, list: true, targets: []string{"."}}},
		{args: []string{"-diff", "-recursive", "a", "b.hcl"}, want: fmtFlags{diff: true, recursive: true, list: true, write: true, targets: []string{"a", "b.hcl"}}},
		{args: []string{"-list=false", "-write=false", "-"}, want: fmtFlags{targets: []string{"-"}}},
		{args: []string{"-", "x"}, wantErr: true},
		{args: []string{"-nope"}, wantErr: true},
	})
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

// TestFmtCRLFAndBOM: fmt keeps a file's line endings and BOM (a formatted
// Windows checkout passes -check and is never rewritten), -diff never shows
// two lines that look alike, and a file of mixed endings gets its
// majority's, with each CR shown as \r in the diff.
func TestFmtCRLFAndBOM(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	// Formatted, CRLF with a BOM: nothing to do.
	ok := write("ok.hcl", bom+"server \"a\" {\r\n  command = [\"x\"]\r\n}\r\n")
	if code, stdout, stderr := runLangCmd(t, nil, "", "fmt", "-check", "-diff", ok); code != exitOK || stdout != "" || stderr != "" {
		t.Errorf("fmt -check of a formatted CRLF file: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	// Not formatted: the diff shows the one real change, in plain lines.
	bad := write("bad.hcl", bom+"server \"a\" {\r\n  command = [\"x\"]\r\n  env = [\"A\"]\r\n}\r\n")
	code, stdout, _ := runLangCmd(t, nil, "", "fmt", "-check", "-diff", bad)
	name := filepath.ToSlash(bad)
	want := name + "\n--- old/" + name + "\n+++ new/" + name + "\n@@ -1,4 +1,4 @@\n" +
		" server \"a\" {\n   command = [\"x\"]\n-  env = [\"A\"]\n+  env     = [\"A\"]\n }\n"
	if code != exitFmtCheck || stdout != want {
		t.Errorf("fmt -check -diff: code %d, stdout:\n%s\nwant:\n%s", code, stdout, want)
	}
	if strings.ContainsAny(stdout, "\r\ufeff") {
		t.Errorf("the diff shows a CR or the BOM raw: %q", stdout)
	}
	// The write keeps both.
	if code, _, _ := runLangCmd(t, nil, "", "fmt", bad); code != exitOK {
		t.Errorf("fmt: code %d", code)
	}
	if got, want := read(bad), bom+"server \"a\" {\r\n  command = [\"x\"]\r\n  env     = [\"A\"]\r\n}\r\n"; got != want {
		t.Errorf("fmt wrote %q, want %q", got, want)
	}

	// Mixed endings: made CRLF (the majority), and the diff marks the CRs.
	mixed := write("mixed.hcl", "server \"a\" {\r\n  command = [\"x\"]\n}\r\n")
	code, stdout, _ = runLangCmd(t, nil, "", "fmt", "-diff", mixed)
	name = filepath.ToSlash(mixed)
	want = name + "\n--- old/" + name + "\t(mixed line endings; \\r marks a CR)\n+++ new/" + name + "\t(CRLF; \\r marks a CR)\n@@ -1,3 +1,3 @@\n" +
		" server \"a\" {\\r\n-  command = [\"x\"]\n+  command = [\"x\"]\\r\n }\\r\n"
	if code != exitOK || stdout != want {
		t.Errorf("fmt -diff of mixed endings: code %d, stdout:\n%s\nwant:\n%s", code, stdout, want)
	}
	if got, want := read(mixed), "server \"a\" {\r\n  command = [\"x\"]\r\n}\r\n"; got != want {
		t.Errorf("fmt wrote %q, want %q", got, want)
	}

	// Standard input keeps them too.
	code, stdout, _ = runLangCmd(t, nil, bom+"server \"a\" {\r\n  command=[\"x\"]\r\n}\r\n", "fmt", "-")
	if want := bom + "server \"a\" {\r\n  command = [\"x\"]\r\n}\r\n"; code != exitOK || stdout != want {
		t.Errorf("fmt - : code %d, stdout %q, want %q", code, stdout, want)
	}
}
