package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/textdiff"
	"github.com/mcpform/mcpform/lang"
)

// exitFmtCheck is fmt -check's status when a file is not formatted, as
// terraform fmt -check.
const exitFmtCheck = 3

// fmtFlags is mcpform fmt's command line.
type fmtFlags struct {
	check     bool
	diff      bool
	list      bool
	write     bool
	recursive bool
	noColor   bool
	targets   []string
}

func parseFmtFlags(args []string, stderr io.Writer) (fmtFlags, error) {
	var f fmtFlags
	fs := newFlagSet("fmt", stderr, `Usage: mcpform fmt [-check] [-diff] [-list=false] [-write=false] [-recursive] [FILE|DIR|-]...

Rewrites HCL files (*.hcl: mcp.hcl, *.mcp.hcl, variable files) in the canonical style.
A file that does not parse is reported and left alone. "-" formats standard input to
standard output. Exit status: 0 done, 1 a file could not be read or parsed or a usage
error, 3 with -check when a file is not formatted.
`)
	fs.BoolVar(&f.check, "check", false, "change nothing; exit 3 if a file is not formatted")
	fs.BoolVar(&f.diff, "diff", false, "print the changes as a unified diff")
	fs.BoolVar(&f.list, "list", true, "print the names of files whose formatting differs")
	fs.BoolVar(&f.write, "write", true, "write the result to the file (false with -check or for standard input)")
	fs.BoolVar(&f.recursive, "recursive", false, "also format files in subdirectories")
	fs.BoolVar(&f.noColor, "no-color", false, "never colour the output")
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	f.targets = fs.Args()
	if len(f.targets) == 0 {
		f.targets = []string{"."}
	}
	if f.check {
		f.write = false
	}
	for _, t := range f.targets {
		if t == "-" && len(f.targets) > 1 {
			return f, usageFailure(fs, stderr, "mcpform fmt: \"-\" (standard input) cannot be combined with other targets")
		}
	}
	return f, nil
}

func runFmt(_ context.Context, io *stdio, f fmtFlags) int {
	r := &fmtRun{f: f, io: io, color: useColor(io, io.err, f.noColor)}
	if f.targets[0] == "-" {
		r.stdin()
	} else {
		for _, t := range f.targets {
			r.target(t)
		}
	}
	switch {
	case r.failed:
		return exitError
	case f.check && r.changed:
		return exitFmtCheck
	}
	return exitOK
}

type fmtRun struct {
	f       fmtFlags
	io      *stdio
	color   bool
	failed  bool
	changed bool
}

func (r *fmtRun) stdin() {
	src, err := io.ReadAll(r.io.in)
	if err != nil {
		r.fail(fmt.Errorf("reading standard input: %w", err))
		return
	}
	out, ok := r.format(src, "<stdin>")
	if !ok {
		return
	}
	r.changed = !bytes.Equal(src, out)
	switch {
	case r.f.diff:
		if r.changed {
			io.WriteString(r.io.out, fmtDiff("<stdin>", src, out))
		}
	case !r.f.check:
		r.io.out.Write(out)
	}
}

// target formats one command-line argument: a file (any name) or a
// directory (its *.hcl files; with -recursive, its subdirectories' too,
// skipping hidden ones such as .mcpform and .git).
func (r *fmtRun) target(t string) {
	st, err := os.Stat(t)
	if err != nil {
		r.fail(err)
		return
	}
	if !st.IsDir() {
		r.file(t)
		return
	}
	var files []string
	err = filepath.WalkDir(t, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != t && (!r.f.recursive || strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".hcl") && d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		r.fail(err)
	}
	sort.Strings(files)
	for _, p := range files {
		r.file(p)
	}
}

func (r *fmtRun) file(name string) {
	src, err := os.ReadFile(name)
	if err != nil {
		r.fail(err)
		return
	}
	out, ok := r.format(src, name)
	if !ok {
		return
	}
	if bytes.Equal(src, out) {
		return
	}
	r.changed = true
	if r.f.list {
		fmt.Fprintln(r.io.out, name)
	}
	if r.f.diff {
		io.WriteString(r.io.out, fmtDiff(filepath.ToSlash(name), src, out))
	}
	if r.f.write {
		// The file exists, so it keeps its mode.
		if err := writeFileAtomic(name, out, 0o644); err != nil {
			r.fail(err)
		}
	}
}

// fail says why fmt could not read, walk or write something; fmt goes on
// with the other files and exits 1.
func (r *fmtRun) fail(err error) {
	fmt.Fprintf(r.io.err, "mcpform fmt: %v\n", err)
	r.failed = true
}

// format is src formatted; a file that does not parse is reported, with
// its diagnostics, and not formatted.
func (r *fmtRun) format(src []byte, name string) ([]byte, bool) {
	out, diags := lang.Format(src, name)
	if diags.HasErrors() {
		lang.WriteDiagnostics(r.io.err, diags, map[string][]byte{name: src}, r.color, 0)
		r.failed = true
		return nil, false
	}
	return out, true
}

// fmtDiff is -diff's unified diff of a file and its formatted text, with
// no two lines that look alike: Format keeps the BOM and the line ending,
// so both texts are shown without them (and hidden characters escaped);
// only a file of mixed endings, which Format makes one, is shown with each
// CR as a visible \r, and the header says so.
func fmtDiff(name string, src, out []byte) string {
	enc := lang.EncodingOf(src)
	oldName, newName := "old/"+escape.String(name), "new/"+escape.String(name)
	a, b := diffLines(src, enc.Mixed), diffLines(out, enc.Mixed)
	if enc.Mixed {
		oldName += "\t(mixed line endings; \\r marks a CR)"
		newName += "\t(" + lang.EncodingOf(out).String() + "; \\r marks a CR)"
	}
	return textdiff.Unified(oldName, newName, a, b)
}

// diffLines is data as the diff shows it: without a BOM, each line's CRLF
// as LF (or, with showCR, as a visible \r and LF), hidden characters
// escaped.
func diffLines(data []byte, showCR bool) string {
	lines := strings.SplitAfter(string(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))), "\n")
	for i, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		cr := false
		if nl {
			body, cr = strings.CutSuffix(body, "\r")
		}
		l = escape.Visible(body)
		if cr && showCR {
			l += `\r`
		}
		if nl {
			l += "\n"
		}
		lines[i] = l
	}
	return strings.Join(lines, "")
}
