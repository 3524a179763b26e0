package image

import (
	"strings"
	"testing"
)

const sum = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		argv  []string
		image string   // IMAGE Parse finds; "" when ok is false or it fails
		args  []string // the words after IMAGE
		err   string   // a part of the error
		notOK bool
	}{
		{name: "plain", argv: []string{"docker", "run", "-i", "--rm", "ghcr.io/acme/srv:1.2", "stdio"}, image: "ghcr.io/acme/srv:1.2", args: []string{"stdio"}},
		{name: "values", argv: []string{"docker", "run", "-i", "--rm", "-e", "TOKEN", "--env", "A=b", "-v", "/data:/data:ro", "--mount", "type=bind,src=/a,dst=/b",
			"--name", "srv", "--network", "none", "-p", "8080:80", "--entrypoint", "/srv", "-w", "/w", "-u", "1000", "--platform", "linux/amd64",
			"-l", "a=b", "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--tmpfs", "/tmp", "-m", "512m", "--cpus", "1", "-h", "host",
			"mcp/fetch", "--ignore-robots-txt"}, image: "mcp/fetch", args: []string{"--ignore-robots-txt"}},
		{name: "equals forms", argv: []string{"docker", "run", "--env=A=b", "--pull=always", "--rm=true", "-e=X", "--network=host", "mcp/time"}, image: "mcp/time", args: []string{}},
		{name: "joined short", argv: []string{"docker", "run", "-it", "-dit", "-eFOO=bar", "-ie", "BAR", "alpine:3", "sh"}, image: "alpine:3", args: []string{"sh"}},
		{name: "double dash", argv: []string{"docker", "run", "--rm", "--", "alpine", "-x"}, image: "alpine", args: []string{"-x"}},
		{name: "podman", argv: []string{"podman", "run", "-i", "quay.io/acme/srv:v1"}, image: "quay.io/acme/srv:v1", args: []string{}},
		{name: "container run", argv: []string{"docker", "container", "run", "-i", "busybox"}, image: "busybox", args: []string{}},
		{name: "podman container run", argv: []string{"podman", "container", "run", "busybox"}, image: "busybox", args: []string{}},
		{name: "absolute path", argv: []string{"/usr/local/bin/docker", "run", "-i", "localhost:5000/srv:dev"}, image: "localhost:5000/srv:dev", args: []string{}},
		{name: "digest", argv: []string{"docker", "run", "-i", "ghcr.io/acme/srv@" + sum}, image: "ghcr.io/acme/srv@" + sum, args: []string{}},
		{name: "tag and digest", argv: []string{"docker", "run", "ghcr.io/acme/srv:1.2@" + sum}, image: "ghcr.io/acme/srv:1.2@" + sum, args: []string{}},
		{name: "bind mount", argv: []string{"docker", "run", "--mount", "type=bind,source=/srv,target=/srv", "alpine"}, image: "alpine", args: []string{}},
		{name: "args after image are not flags", argv: []string{"docker", "run", "alpine", "--unknown", "-z"}, image: "alpine", args: []string{"--unknown", "-z"}},

		{name: "not docker", argv: []string{"node", "run", "x"}, notOK: true},
		{name: "docker mcp gateway", argv: []string{"docker", "mcp", "gateway", "run"}, notOK: true},
		{name: "docker exec", argv: []string{"docker", "exec", "-i", "c", "srv"}, notOK: true},
		{name: "docker alone", argv: []string{"docker"}, notOK: true},
		{name: "empty", argv: nil, notOK: true},

		{name: "unknown long flag", argv: []string{"docker", "run", "--frobnicate", "x", "alpine"}, err: "the flag --frobnicate is not one mcpform knows"},
		{name: "unknown short flag", argv: []string{"docker", "run", "-iZ", "alpine"}, err: "the flag -Z (in -iZ) is not one mcpform knows"},
		{name: "rootfs", argv: []string{"podman", "run", "--rootfs", "/srv/root", "sh"}, err: "--rootfs is refused"},
		{name: "runtime", argv: []string{"podman", "run", "--runtime", "/tmp/evil-runtime", "ghcr.io/acme/srv:1"}, err: "--runtime is refused"},
		{name: "init path", argv: []string{"podman", "run", "--init", "--init-path=/tmp/evil-init", "ghcr.io/acme/srv:1"}, err: "--init-path is refused"},
		{name: "volumes from", argv: []string{"docker", "run", "--volumes-from", "other", "ghcr.io/acme/srv:1"}, err: "--volumes-from is refused"},
		{name: "image mount", argv: []string{"docker", "run", "--mount", "type=image,source=evil/tools:latest,target=/app", "ghcr.io/acme/srv:1"}, err: "a mount of type image"},
		{name: "image mount joined", argv: []string{"podman", "run", "--mount=target=/app,Type=Image,source=evil/tools", "ghcr.io/acme/srv:1"}, err: "a mount of type image"},
		{name: "no image", argv: []string{"docker", "run", "-i", "--rm"}, err: "no image to run"},
		{name: "value missing", argv: []string{"docker", "run", "-e"}, err: "the flag -e needs a value"},
		{name: "long value missing", argv: []string{"docker", "run", "--name"}, err: "the flag --name needs a value"},
		{name: "bool with a value", argv: []string{"docker", "run", "--rm=yes", "alpine"}, err: "takes true or false"},
		{name: "engine options", argv: []string{"docker", "--context", "prod", "run", "alpine"}, err: "engine options before run"},
		{name: "traversal", argv: []string{"docker", "run", "../../etc/passwd"}, err: "is not an image reference"},
		{name: "inner traversal", argv: []string{"docker", "run", "acme/../srv:1"}, err: "is not an image reference"},
		{name: "dot registry", argv: []string{"docker", "run", "../srv"}, err: "is not a registry host"},
		{name: "dash image", argv: []string{"docker", "run", "-i", "-"}, err: "is not an image reference"},
		{name: "capitals", argv: []string{"docker", "run", "Alpine"}, err: "is not an image reference"},
		{name: "url", argv: []string{"docker", "run", "https://ghcr.io/acme/srv"}, err: "is not an image reference"},
		{name: "control", argv: []string{"docker", "run", "alpine\x1b[2J"}, err: "a control or a non-ASCII character"},
		{name: "sha512 digest", argv: []string{"docker", "run", "alpine@sha512:" + strings.Repeat("ab", 64)}, err: "not sha256"},
		{name: "short digest", argv: []string{"docker", "run", "alpine@sha256:abc"}, err: "is not an image reference"},
		{name: "too long", argv: []string{"docker", "run", strings.Repeat("a", MaxReference+1)}, err: "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, ok, err := Parse(tc.argv)
			if tc.notOK {
				if ok || err != nil || spec != nil {
					t.Fatalf("Parse(%q) = %+v, %v, %v; want not a container run", tc.argv, spec, ok, err)
				}
				return
			}
			if !ok {
				t.Fatalf("Parse(%q): not recognised", tc.argv)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse(%q) = %+v, %v; want an error with %q", tc.argv, spec, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.argv, err)
			}
			if spec.Image != tc.image || spec.Argv[spec.Index] != tc.image {
				t.Errorf("image = %q (argv[%d] %q), want %q", spec.Image, spec.Index, spec.Argv[spec.Index], tc.image)
			}
			if got := spec.Argv[spec.Index+1:]; strings.Join(got, "\x00") != strings.Join(tc.args, "\x00") {
				t.Errorf("args = %q, want %q", got, tc.args)
			}
		})
	}
}

// TestArgv: IMAGE is replaced by the repository as written and the digest,
// everything else is kept; a digest in the reference is replaced too (by
// the pin's, which Resolve took from it).
func TestArgv(t *testing.T) {
	for _, tc := range []struct{ image, repo string }{
		{"ghcr.io/acme/srv:1.2", "ghcr.io/acme/srv"},
		{"mcp/fetch", "mcp/fetch"},
		{"localhost:5000/srv:dev", "localhost:5000/srv"},
		{"localhost:5000/srv", "localhost:5000/srv"},
		{"ghcr.io/acme/srv:1.2@" + sum, "ghcr.io/acme/srv"},
		{"[::1]:5000/srv:1", "[::1]:5000/srv"},
	} {
		argv := []string{"docker", "run", "-i", "--rm", "-e", "X", tc.image, "stdio", "--flag"}
		spec, ok, err := Parse(argv)
		if !ok || err != nil {
			t.Fatalf("Parse(%q): %v %v", argv, ok, err)
		}
		got := Argv(spec, &Pin{Digest: sum})
		want := append(append([]string{}, argv[:6]...), tc.repo+"@"+sum, "stdio", "--flag")
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("Argv for %s = %q, want %q", tc.image, got, want)
		}
		if argv[6] != tc.image {
			t.Errorf("Argv changed its input: %q", argv)
		}
		// What run starts names the same repository, by digest.
		ref, err := ParseReference(got[6])
		if err != nil || ref.Context().Name() != spec.Ref.Context().Name() || ref.Identifier() != sum {
			t.Errorf("the rewritten image %s parses as %v (%v), not %v@%s", got[6], ref, err, spec.Ref.Context(), sum)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"docker\x00run\x00-i\x00--rm\x00-e\x00X\x00ghcr.io/acme/srv:1.2\x00stdio",
		"podman\x00container\x00run\x00-it\x00--env=A=b\x00alpine@" + sum,
		"docker\x00run\x00-eFOO\x00--\x00localhost:5000/x",
		"docker\x00run\x00--frob\x00x", "docker\x00run", "docker\x00--context\x00x\x00run\x00a",
		"docker\x00run\x00../x", "docker\x00run\x00-",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		argv := strings.Split(s, "\x00")
		spec, ok, err := Parse(argv)
		if !ok || err != nil {
			if spec != nil {
				t.Fatalf("Parse(%q) returned a spec with ok %v, err %v", argv, ok, err)
			}
			return
		}
		if spec.Argv[spec.Index] != spec.Image || strings.HasPrefix(spec.Image, "-") {
			t.Fatalf("Parse(%q): image %q at %d", argv, spec.Image, spec.Index)
		}
		got := Argv(spec, &Pin{Digest: sum})
		if len(got) != len(argv) {
			t.Fatalf("Argv(%q) = %q", argv, got)
		}
		for i := range argv {
			if i != spec.Index && got[i] != argv[i] {
				t.Fatalf("Argv(%q) changed word %d: %q", argv, i, got)
			}
		}
		again, ok, err := Parse(got)
		if !ok || err != nil {
			t.Fatalf("Parse(Argv(%q)) = %q: %v %v", argv, got, ok, err)
		}
		if again.Index != spec.Index || again.Ref.Context().Name() != spec.Ref.Context().Name() || again.Ref.Identifier() != sum {
			t.Fatalf("Parse(Argv(%q)) names %v at %d, not %v@%s at %d", argv, again.Ref, again.Index, spec.Ref.Context(), sum, spec.Index)
		}
	})
}
