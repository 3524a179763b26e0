//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestProgramRoots(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write := func(p, content string) string {
		p = filepath.Join(d, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("proj/node_modules/@scope/pkg/node_modules/dep/x.js", "")
	script := write("proj/node_modules/@scope/pkg/dist/index.js", "#!/usr/bin/env -S node --no-warnings\n")
	bin := filepath.Join(d, "proj/node_modules/.bin/pkg")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../@scope/pkg/dist/index.js", bin); err != nil {
		t.Fatal(err)
	}
	fakeNode := write("nodebin/node", "")
	venvPy := write("venv/bin/server", "#!"+filepath.Join(d, "venv/bin/python")+"\n")
	write("venv/pyvenv.cfg", "")
	homeTool := write("home/bin/tool", "")
	write("home/pyvenv.cfg", "")
	plain := write("srv/server.js", "")
	env := []string{"PATH=" + filepath.Dir(fakeNode)}

	for _, tc := range []struct {
		name      string
		path      string
		argv      []string
		want, not []string
	}{
		{"npm bin symlink", bin, []string{"pkg"}, []string{filepath.Join(d, "proj/node_modules"), script, fakeNode}, nil},
		{"venv", venvPy, []string{"server"}, []string{filepath.Join(d, "venv")}, nil},
		{"venv at home", homeTool, []string{"tool"}, []string{homeTool}, []string{filepath.Join(d, "home")}},
		{"script argument", fakeNode, []string{"node", "--enable-x", plain, "more.js"}, []string{fakeNode, plain}, []string{filepath.Join(d, "srv")}},
	} {
		got := programRoots(tc.path, tc.argv, env, []string{filepath.Join(d, "home")}, []string{filepath.Join(d, "w")})
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: roots %q lack %q", tc.name, got, w)
			}
		}
		for _, n := range tc.not {
			if slices.Contains(got, n) {
				t.Errorf("%s: roots %q include %q", tc.name, got, n)
			}
		}
	}
}

func TestSeccompFilterAssembles(t *testing.T) {
	prog, err := seccompFilter(false)
	if err != nil {
		t.Fatal(err)
	}
	if len(prog) < 50 || len(prog) > 200 {
		t.Errorf("filter has %d instructions", len(prog))
	}
}

func TestThroughWritable(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"w", "ro/sub", "secret"} {
		if err := os.MkdirAll(filepath.Join(d, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(d, name)); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(d, "secret"), "w/planted")   // absolute, inside w
	link("../w/planted", "ro/hop")                  // relative, through w
	link(filepath.Join(d, "ro/sub"), "w/../ro/ok2") // made in ro, pointing within ro
	writable := []string{filepath.Join(d, "w")}
	for p, want := range map[string]bool{
		filepath.Join(d, "w"):         false, // the write path itself
		filepath.Join(d, "w/planted"): true,
		filepath.Join(d, "ro/hop"):    true, // hides the hop through w
		filepath.Join(d, "ro/sub"):    false,
		filepath.Join(d, "ro/ok2"):    false,
		d + "/w/planted/../ro":        true, // ".." after the planted symlink
	} {
		if got := throughWritable(p, writable); got != want {
			dirs, err := lookupDirs(p)
			t.Errorf("throughWritable(%s) = %v, want %v (lookups in %q, %v)", p, got, want, dirs, err)
		}
	}
}
