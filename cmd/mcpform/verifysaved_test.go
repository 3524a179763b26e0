package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpform/mcpform/lock"
)

// TestSavedSurfaces: which server each -surface argument is for.
func TestSavedSurfaces(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a=b.json": "[]"})
	existing := dir + "/a=b.json" // a path that holds "=" and exists
	two := &lock.File{Servers: map[string]*lock.Entry{"time": {}, "notes": {}}}
	one := &lock.File{Servers: map[string]*lock.Entry{"time": {}}}
	for _, tc := range []struct {
		name   string
		lf     *lock.File
		args   []string
		named  []string
		want   map[string]string
		errHas string
	}{
		{name: "NAME=PATH", lf: two, args: []string{"time=t.json", "notes=n"}, want: map[string]string{"time": "t.json", "notes": "n"}},
		{name: "PATH, one server locked", lf: one, args: []string{"t.json"}, want: map[string]string{"time": "t.json"}},
		{name: "PATH, one NAME given", lf: two, args: []string{"t.json"}, named: []string{"notes"}, want: map[string]string{"notes": "t.json"}},
		{name: "a path with = that exists", lf: one, args: []string{existing}, want: map[string]string{"time": existing}},
		{name: "PATH, two servers", lf: two, args: []string{"t.json"}, errHas: "names no server: write -surface NAME=t.json, NAME one of notes, time"},
		{name: "unknown NAME", lf: two, args: []string{"tiem=t.json"}, errHas: `the lock has no server "tiem"; did you mean "time"?`},
		{name: "twice", lf: two, args: []string{"time=a", "time=b"}, errHas: `two surfaces, a and b`},
		{name: "NAME left out by the arguments", lf: two, args: []string{"time=a"}, named: []string{"notes"}, errHas: "leave out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var all []string
			for n := range tc.lf.Servers {
				all = append(all, n)
			}
			slices.Sort(all)
			got, err := savedSurfaces(tc.args, tc.lf, tc.named, all)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("err = %v, want one saying %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
