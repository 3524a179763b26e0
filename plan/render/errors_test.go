package render

import (
	"bytes"
	"strings"
	"testing"
)

// TestHumanErrorsWriter: with Options.Errors the closing Error: lines go
// there, escaped, and the plan's writer keeps the rest of the plan; without
// it they stay in the plan, as before.
func TestHumanErrorsWriter(t *testing.T) {
	p := rugPull(t)
	var all bytes.Buffer
	if err := Human(&all, p, Options{}); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if err := Human(&out, p, Options{Errors: &errs}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "\nError:") {
		t.Errorf("the plan still holds the Error: lines:\n%s", out.String())
	}
	if n := strings.Count(errs.String(), "\nError: "); n != len(p.Errors()) || n == 0 {
		t.Errorf("%d Error: lines on the errors writer, want %d:\n%s", n, len(p.Errors()), errs.String())
	}
	if strings.ContainsRune(errs.String(), '\u202e') {
		t.Errorf("an error line is not escaped: %q", errs.String())
	}
	if got, want := out.String()+errs.String(), all.String(); got != want {
		t.Errorf("plan and errors together differ from the plan alone:\n%s\nwant:\n%s", got, want)
	}
}
