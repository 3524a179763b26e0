package image

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/mcpform/mcpform/internal/escape"
)

// Spec is what a container engine's run argv asks for: one image, started
// with the flags and arguments around it.
type Spec struct {
	// Engine is the engine's name ("docker" or "podman"), for messages.
	Engine string
	// Argv is the whole argv as written; Index is IMAGE's place in it.
	Argv  []string
	Index int
	// Image is IMAGE as written; Ref is it parsed.
	Image string
	Ref   name.Reference
}

// Repository is the image's repository as written (Image without its tag
// and digest): "ghcr.io/acme/srv" for ghcr.io/acme/srv:1.2.
func (s *Spec) Repository() string { return repository(s.Image) }

func repository(image string) string {
	r, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(r, ":"); i > strings.LastIndex(r, "/") {
		r = r[:i]
	}
	return r
}

// pathComponent and domain are docker's reference grammar
// (distribution/reference): go-containerregistry's default validation
// lets through names docker refuses, such as "../x" or "a/../b".
var (
	pathComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	domain        = regexp.MustCompile(`^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?$`)
)

// checkRepository checks a repository as written against docker's
// grammar: an optional registry (a first component with '.' or ':', or
// localhost), then lowercase path components.
func checkRepository(repo string) error {
	parts := strings.Split(repo, "/")
	if first := parts[0]; len(parts) > 1 && (strings.ContainsAny(first, ".:") || first == "localhost") {
		if !domain.MatchString(first) {
			return fmt.Errorf("%s is not a registry host", escape.String(first))
		}
		parts = parts[1:]
	}
	for _, p := range parts {
		if !pathComponent.MatchString(p) {
			return fmt.Errorf("%s is not a repository name component (lowercase letters and digits, joined by '.', '_', '__' or '-')", escape.String(p))
		}
	}
	return nil
}

// MaxReference bounds IMAGE's length: docker refuses a repository name
// longer than 255 characters, and a tag and a digest add fewer than 200.
const MaxReference = 512

// valueFlags are the run flags, long and short, that take a value (docker
// run --help, podman run --help); boolFlags are those that do not (a
// boolean may still be written --flag=true or --flag=false).
var valueFlags = set(
	"--add-host", "--annotation", "-a", "--attach", "--authfile", "--blkio-weight", "--blkio-weight-device",
	"--cap-add", "--cap-drop", "--cert-dir", "--cgroup-conf", "--cgroup-parent", "--cgroupns", "--cgroups",
	"--chrootdirs", "--cidfile", "--conmon-pidfile", "--cpu-count", "--cpu-percent", "--cpu-period",
	"--cpu-quota", "--cpu-rt-period", "--cpu-rt-runtime", "-c", "--cpu-shares", "--cpus", "--cpuset-cpus",
	"--cpuset-mems", "--creds", "--decryption-key", "--detach-keys", "--device", "--device-cgroup-rule",
	"--device-read-bps", "--device-read-iops", "--device-write-bps", "--device-write-iops", "--dns",
	"--dns-opt", "--dns-option", "--dns-search", "--domainname", "--entrypoint", "-e", "--env", "--env-file",
	"--env-merge", "--expose", "--gidmap", "--gpus", "--group-add", "--group-entry", "--health-cmd",
	"--health-interval", "--health-on-failure", "--health-retries", "--health-start-interval",
	"--health-start-period", "--health-startup-cmd", "--health-startup-interval", "--health-startup-retries",
	"--health-startup-success", "--health-startup-timeout", "--health-timeout", "-h", "--hostname",
	"--hostuser", "--init-path", "--ip", "--ip6", "--ipc", "--isolation", "--kernel-memory", "-l", "--label",
	"--label-file", "--link", "--link-local-ip", "--log-driver", "--log-opt", "--mac-address", "-m",
	"--memory", "--memory-reservation", "--memory-swap", "--memory-swappiness", "--mount", "--name",
	"--network", "--net", "--network-alias", "--net-alias", "--oom-score-adj", "--passwd-entry",
	"--personality", "--pid", "--pidfile", "--pids-limit", "--platform", "--pod", "--pod-id-file",
	"--preserve-fd", "--preserve-fds", "-p", "--publish", "--pull", "--requires", "--restart", "--runtime",
	"--sdnotify", "--seccomp-policy", "--secret", "--security-opt", "--shm-size", "--shm-size-systemd",
	"--stop-signal", "--stop-timeout", "--storage-opt", "--subgidname", "--subuidname", "--sysctl",
	"--systemd", "--timeout", "--timezone", "--tmpfs", "--uidmap", "--ulimit", "--umask", "-u", "--user",
	"--userns", "--uts", "--variant", "--arch", "--os", "-v", "--volume", "--volume-driver",
	"--volumes-from", "-w", "--workdir",
)

var boolFlags = set(
	"-d", "--detach", "--disable-content-trust", "--env-host", "--http-proxy", "--init", "-i",
	"--interactive", "--no-healthcheck", "--no-hosts", "--oom-kill-disable", "--passwd", "--privileged",
	"-P", "--publish-all", "-q", "--quiet", "--read-only", "--read-only-tmpfs", "--replace", "--rm",
	"--rmi", "--sig-proxy", "-t", "--tty", "--tls-verify", "--use-api-socket",
)

// imageMount reports whether a --mount value mounts an image (type=image,
// in docker's and podman's comma-separated key=value form).
func imageMount(value string) bool {
	for _, kv := range strings.Split(value, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if strings.EqualFold(strings.TrimSpace(k), "type") && strings.EqualFold(strings.TrimSpace(v), "image") {
			return true
		}
	}
	return false
}

// refusedFlags are run flags Parse knows and refuses, with the reason.
var refusedFlags = map[string]string{
	"--rootfs":       "it makes IMAGE a directory on the host, which no digest pins",
	"--runtime":      "it names the OCI runtime binary on the host that runs the container (podman), which no digest pins",
	"--init-path":    "it names the host binary run as the container's init, which no digest pins",
	"--volumes-from": "it mounts the volumes of another container, whose contents no digest pins",
	"--image-volume": "it is not one mcpform has checked (report it at https://github.com/mcpform/mcpform/issues)",
}

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Parse recognises a container engine's run argv: docker run, docker
// container run, podman run and podman container run (argv[0] docker or
// podman, by its base name, so an absolute path too), then run's flags,
// then IMAGE, then the container's arguments. ok is false, with a nil
// error, for any other argv (docker mcp gateway run is not a container
// run). For a run argv, err says what keeps it from being pinned: a flag
// Parse does not know (it never guesses whether a flag takes a value, so
// which word is IMAGE), a flag it refuses, engine options before run, no
// IMAGE, or an IMAGE that is not an image reference.
func Parse(argv []string) (spec *Spec, ok bool, err error) {
	if len(argv) < 2 {
		return nil, false, nil
	}
	engine := path.Base(strings.ReplaceAll(argv[0], `\`, "/"))
	engine = strings.TrimSuffix(engine, ".exe")
	if engine != "docker" && engine != "podman" {
		return nil, false, nil
	}
	i := 1
	switch {
	case argv[1] == "run":
		i = 2
	case argv[1] == "container" && len(argv) > 2 && argv[2] == "run":
		i = 3
	case strings.HasPrefix(argv[1], "-") && slices.Contains(argv[2:], "run"):
		return nil, true, fmt.Errorf("%s: engine options before run (%s) are not ones mcpform can pin (they can choose another daemon or configuration): write %s run IMAGE…, or report the need at https://github.com/mcpform/mcpform/issues",
			engine, escape.String(argv[1]), engine)
	default:
		return nil, false, nil
	}
	fail := func(format string, a ...any) (*Spec, bool, error) {
		return nil, true, fmt.Errorf("%s run: "+format, append([]any{engine}, a...)...)
	}
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			i++
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			break
		}
		if strings.HasPrefix(a, "--") {
			flag, value, hasValue := strings.Cut(a, "=")
			switch {
			case refusedFlags[flag] != "":
				return fail("the flag %s is refused: %s", escape.String(flag), refusedFlags[flag])
			case valueFlags[flag]:
				if !hasValue {
					if i+1 >= len(argv) {
						return fail("the flag %s needs a value", escape.String(flag))
					}
					i++
					value = argv[i]
				}
				if flag == "--mount" && imageMount(value) {
					return fail("the flag --mount %s is refused: a mount of type image mounts another image by its tag, which no digest pins", escape.String(value))
				}
			case boolFlags[flag]:
				if hasValue && value != "true" && value != "false" {
					return fail("the flag %s takes true or false, not %s", escape.String(flag), escape.String(value))
				}
			default:
				return fail("the flag %s is not one mcpform knows, so it cannot tell which word is the image: write it as --flag=value if it takes one and report it at https://github.com/mcpform/mcpform/issues", escape.String(flag))
			}
			continue
		}
		// Short flags, as pflag reads them: booleans may be joined (-it),
		// and a flag that takes a value takes the rest of the word
		// (-eFOO, -e=FOO) or else the next one.
		for j := 1; j < len(a); j++ {
			flag := "-" + a[j:j+1]
			switch {
			case boolFlags[flag]:
				continue
			case valueFlags[flag]:
				if j+1 == len(a) {
					if i+1 >= len(argv) {
						return fail("the flag %s needs a value", escape.String(flag))
					}
					i++
				}
			default:
				return fail("the flag %s (in %s) is not one mcpform knows, so it cannot tell which word is the image: report it at https://github.com/mcpform/mcpform/issues", escape.String(flag), escape.String(a))
			}
			break
		}
	}
	if i >= len(argv) {
		return fail("no image to run")
	}
	ref, err := ParseReference(argv[i])
	if err != nil {
		return fail("%v", err)
	}
	return &Spec{Engine: engine, Argv: slices.Clone(argv), Index: i, Image: argv[i], Ref: ref}, true, nil
}

// ParseReference parses an image reference as docker reads one
// (go-containerregistry's rules: docker.io and latest by default, a
// lowercase repository, a tag or a digest or both), bounded by
// MaxReference; a digest must be sha256.
func ParseReference(s string) (name.Reference, error) {
	switch {
	case s == "":
		return nil, errors.New("an empty image reference")
	case len(s) > MaxReference:
		return nil, fmt.Errorf("the image reference %s… is longer than %d bytes", escape.String(s[:64]), MaxReference)
	case strings.ContainsFunc(s, func(r rune) bool { return r <= 0x20 || r >= 0x7f }):
		return nil, fmt.Errorf("the image reference %s holds a space, a control or a non-ASCII character", escape.String(s))
	}
	ref, err := name.ParseReference(s)
	if err == nil {
		err = checkRepository(repository(s))
	}
	if err != nil {
		return nil, fmt.Errorf("%s is not an image reference (%v)", escape.String(s), err)
	}
	if d, ok := ref.(name.Digest); ok && !digestRE.MatchString(d.DigestStr()) {
		return nil, fmt.Errorf("%s has a digest that is not sha256:<64 lowercase hex>", escape.String(s))
	}
	return ref, nil
}

// Argv is the argv run starts for spec: IMAGE written as
// REPOSITORY@DIGEST (the repository as written), the rest as it was.
func Argv(spec *Spec, pin *Pin) []string {
	out := slices.Clone(spec.Argv)
	out[spec.Index] = spec.Repository() + "@" + pin.Digest
	return out
}
