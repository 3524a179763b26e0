package main

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseInitFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    initFlags
		wantErr bool
	}{
		{args: nil, want: initFlags{dir: "."}},
		{args: []string{"-upgrade", "-no-color", "sub"}, want: initFlags{upgrade: true, noColor: true, dir: "sub"}},
		{args: []string{"a", "b"}, wantErr: true},
		{args: []string{"-get=false"}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseInitFlags(tt.args, &bytes.Buffer{})
		if (err != nil) != tt.wantErr {
			t.Errorf("parseInitFlags(%q) error = %v, want error %v", tt.args, err, tt.wantErr)
			continue
		}
		if tt.wantErr {
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(initFlags{})); diff != "" {
			t.Errorf("parseInitFlags(%q) (-want +got):\n%s", tt.args, diff)
		}
	}
}
