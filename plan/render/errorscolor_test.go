package render

import (
	"bytes"
	"strings"
	"testing"
)

// TestHumanErrorsColor: the Error: lines sent to Options.Errors are
// coloured by ErrorsColor alone, since they go to another stream than the
// plan: a coloured plan on a terminal must not put escape codes into a
// redirected stderr (`plan 2>err.log`), and the other way round.
func TestHumanErrorsColor(t *testing.T) {
	p := rugPull(t)
	for _, tt := range []struct {
		color, errorsColor bool
	}{{true, false}, {false, true}, {true, true}, {false, false}} {
		var out, errs bytes.Buffer
		if err := Human(&out, p, Options{Color: tt.color, Errors: &errs, ErrorsColor: tt.errorsColor}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "\x1b["); got != tt.color {
			t.Errorf("Color %v, ErrorsColor %v: the plan has escape codes: %v, want %v", tt.color, tt.errorsColor, got, tt.color)
		}
		if got := strings.Contains(errs.String(), "\x1b[31mError:\x1b[0m"); got != tt.errorsColor {
			t.Errorf("Color %v, ErrorsColor %v: the errors are coloured: %v, want %v:\n%q", tt.color, tt.errorsColor, got, tt.errorsColor, errs.String())
		}
		if !tt.errorsColor && strings.Contains(errs.String(), "\x1b[") {
			t.Errorf("Color %v: an escape code reached the errors writer: %q", tt.color, errs.String())
		}
	}
}
