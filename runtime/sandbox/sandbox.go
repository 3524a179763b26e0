package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mcpform/mcpform/policy"
)

// ProxyAddr is where a sandboxed server with Network set finds the egress
// proxy: a listener inside its network namespace that stage 1 bridges to
// Spec.EgressSocket. HTTPS_PROXY and friends point here.
const ProxyAddr = "127.0.0.1:3128"

// Spec is what a sandboxed server may touch besides the runtime base (see
// the package documentation for that base).
type Spec struct {
	// Read are paths the server may read recursively; Write are paths it may
	// read and write recursively. Both are absolute and already expanded (the
	// caller expands ~/ and ${TMP}), and must exist.
	Read, Write []string
	// Tmp is the server's private temporary directory: writable, and its
	// TMPDIR. It must exist.
	Tmp string
	// Network false leaves the server a network namespace with only
	// loopback and no way out. Network true bridges EgressSocket into that
	// namespace at ProxyAddr and announces it in the proxy variables.
	Network bool
	// EgressSocket is the path of the unix socket on which runtime/egress
	// listens, outside the namespace. Required when Network is set.
	EgressSocket string
	// Protect are paths no write path (nor Tmp) may cover: mcp.lock, its
	// directory, the audit log, the taint state, the mcpform binary, $HOME.
	// They need not exist.
	Protect []string
	// Limits bound the server's resources; a zero field is its
	// policy.DefaultLimits value.
	Limits policy.Limits
	// Cgroup, when set (NewCgroup), is the control group the server runs
	// in, which enforces the processes and memory limits for its whole
	// tree. Without one the rlimits are all there is.
	Cgroup *Cgroup
}

// Cgroup is a control group made for one sandboxed server. Stage 1 moves
// stage 2 (the server) into it before the server starts; Remove deletes it
// once the server has exited.
type Cgroup struct {
	Version int      // 1 or 2
	Dirs    []string // the group in each hierarchy (one for v2)
	// Controllers are the limits it enforces: "pids", "memory".
	Controllers []string
}

// String describes the group for -explain-sandbox.
func (c *Cgroup) String() string {
	if c == nil {
		return "no cgroup"
	}
	return fmt.Sprintf("cgroup v%d (%s)", c.Version, strings.Join(c.Controllers, ", "))
}

// SpecFromPolicy turns a lock entry's policy.sandbox into a Spec: each
// path is checked with policy.CheckPath, expanded against home ("~/…") and
// tmp ("${TMP}…"), and must exist. tmp is the server's fresh private
// temporary directory. Network is set when network.allow is not empty; the
// caller then serves egress.New(sb.Network.Allow, …) on a unix socket and
// sets EgressSocket. home is always protected, besides protect.
func SpecFromPolicy(sb *policy.Sandbox, home, tmp string, protect []string) (Spec, error) {
	if sb == nil {
		return Spec{}, errors.New("no sandbox policy")
	}
	if !filepath.IsAbs(home) || !filepath.IsAbs(tmp) {
		return Spec{}, fmt.Errorf("home %q and tmp %q must be absolute", home, tmp)
	}
	spec := Spec{Tmp: tmp, Network: len(sb.Network.Allow) > 0, Protect: append([]string{home}, protect...), Limits: sb.Limits.Effective()}
	if err := sb.Limits.Check(); err != nil {
		return Spec{}, err
	}
	expand := func(kind string, in []string) ([]string, error) {
		var out []string
		for _, p := range in {
			if err := policy.CheckPath(p); err != nil {
				return nil, fmt.Errorf("filesystem.%s: %w", kind, err)
			}
			e := policy.ExpandPath(p, home, tmp)
			if _, err := os.Stat(e); err != nil {
				return nil, fmt.Errorf("filesystem.%s path %q (%s): %w", kind, p, e, err)
			}
			out = append(out, e)
		}
		return out, nil
	}
	var err error
	if spec.Read, err = expand("read", sb.Filesystem.Read); err != nil {
		return Spec{}, err
	}
	if spec.Write, err = expand("write", sb.Filesystem.Write); err != nil {
		return Spec{}, err
	}
	for _, a := range sb.Network.Allow {
		if _, err := policy.ParseHostPort(a); err != nil {
			return Spec{}, fmt.Errorf("network.allow: %w", err)
		}
	}
	return spec, nil
}

// Marker environment variables of the re-executed stages. They never reach
// the server: stage 2 removes them before it executes the server.
const (
	envStage  = "MCPFORM_SANDBOX_STAGE"
	envConfig = "MCPFORM_SANDBOX_CONFIG"
	// envMemfdSealed tells stage 2 that stage 1 made the sandbox's memfds
	// non-executable.
	envMemfdSealed = "MCPFORM_SANDBOX_MEMFD_SEALED"
)

// stageConfig is what Command hands to the stages, as JSON in envConfig.
// Everything in it was checked and resolved by Command, outside the sandbox.
type stageConfig struct {
	Path string   // the server's executable, absolute
	Args []string // the server's argv
	// Rules are the Landlock rules, runtime base included.
	Rules        []pathRule
	Network      bool
	EgressSocket string
	// Limits are the effective limits; CgroupDirs the server's control
	// group in each hierarchy, and MemoryCgroup whether one of them limits
	// memory.
	Limits       policy.Limits
	CgroupDirs   []string
	MemoryCgroup bool
	// Tmp is Spec.Tmp, which the view shows as a tmpfs of its own.
	Tmp string
}

// access is what a pathRule grants.
type access string

const (
	accessRead  access = "r"   // read files and list directories
	accessExec  access = "rx"  // read and execute
	accessWrite access = "rw"  // read, write, create, remove (no execute)
	accessDev   access = "dev" // read and write an existing file, nothing else
)

// pathRule grants access to the file hierarchy at Path.
type pathRule struct {
	Path   string
	Access access
}

// Grant is one filesystem grant of a sandbox, for display: what `mcpform
// run -explain-sandbox` prints.
type Grant struct {
	Path string
	// Access is "read", "read+execute", "read+write" or "device" (read and
	// write an existing device file).
	Access string
}

// Grants returns the filesystem grants Command would give the server of
// cmd under spec, the runtime base included, without starting anything.
// Paths of the runtime base that do not exist on this machine are left out.
// The network is explained by spec itself: with Network, TCP connections to
// ProxyAddr only, which reach the egress proxy's allow list.
func Grants(cmd *exec.Cmd, spec Spec) ([]Grant, error) {
	cfg, _, err := build(cmd, spec)
	if err != nil {
		return nil, err
	}
	names := map[access]string{accessRead: "read", accessExec: "read+execute", accessWrite: "read+write", accessDev: "device"}
	var out []Grant
	for _, r := range cfg.Rules {
		if _, err := os.Stat(r.Path); err != nil {
			continue
		}
		out = append(out, Grant{Path: r.Path, Access: names[r.Access]})
	}
	return out, nil
}

// build checks cmd and spec and computes the stage configuration and the
// server's environment.
func build(cmd *exec.Cmd, spec Spec) (stageConfig, []string, error) {
	if err := checkSpec(spec); err != nil {
		return stageConfig{}, nil, fmt.Errorf("sandboxing %q: %w", cmd.Path, err)
	}
	path := cmd.Path
	if !filepath.IsAbs(path) {
		// exec.Command leaves a relative path with a separator as is; resolve
		// it now, against the directory the server will start in.
		path = filepath.Join(cmd.Dir, path)
		if !filepath.IsAbs(path) {
			wd, err := os.Getwd()
			if err != nil {
				return stageConfig{}, nil, fmt.Errorf("sandboxing %q: %w", cmd.Path, err)
			}
			path = filepath.Join(wd, path)
		}
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return stageConfig{}, nil, fmt.Errorf("sandboxing %q: not an executable file", cmd.Path)
	}
	args := cmd.Args
	if len(args) == 0 {
		args = []string{cmd.Path}
	}
	env := setEnv(cmd.Environ(), "TMPDIR="+spec.Tmp)
	if spec.Network {
		env = setEnv(env, proxyEnv()...)
	}
	env = withoutEnv(env, envStage, envConfig, envMemfdSealed)

	var writable []string
	for _, w := range append(append([]string(nil), spec.Write...), spec.Tmp) {
		if real, err := filepath.EvalSymlinks(w); err == nil {
			writable = append(writable, real)
		}
	}
	cfg := stageConfig{
		Path:         path,
		Args:         args,
		Rules:        runtimeBase(path, args, env, spec.Protect, writable),
		Network:      spec.Network,
		EgressSocket: spec.EgressSocket,
		Limits:       spec.Limits.Effective(),
		Tmp:          spec.Tmp,
	}
	if spec.Cgroup != nil {
		cfg.CgroupDirs = spec.Cgroup.Dirs
		for _, c := range spec.Cgroup.Controllers {
			cfg.MemoryCgroup = cfg.MemoryCgroup || c == "memory"
		}
	}
	for _, p := range spec.Read {
		cfg.Rules = append(cfg.Rules, pathRule{p, accessRead})
	}
	for _, p := range spec.Write {
		cfg.Rules = append(cfg.Rules, pathRule{p, accessWrite})
	}
	cfg.Rules = append(cfg.Rules, pathRule{spec.Tmp, accessWrite})
	return cfg, env, nil
}

// checkSpec validates spec: absolute existing paths, and no write path
// covering a protected one. It returns the write paths (Tmp included)
// resolved through symlinks, which is what Landlock will see.
func checkSpec(spec Spec) error {
	if spec.Tmp == "" {
		return errors.New("sandbox spec has no Tmp directory")
	}
	if spec.Network && spec.EgressSocket == "" {
		return errors.New("sandbox spec allows network but names no EgressSocket")
	}
	if spec.EgressSocket != "" && !filepath.IsAbs(spec.EgressSocket) {
		return fmt.Errorf("egress socket %q is not absolute", spec.EgressSocket)
	}
	check := func(kind, p string) (string, error) {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return "", fmt.Errorf("%s path %q is not a clean absolute path", kind, p)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return "", fmt.Errorf("%s path %q: %w", kind, p, err)
		}
		return real, nil
	}
	for _, p := range spec.Read {
		if _, err := check("read", p); err != nil {
			return err
		}
	}
	type guarded struct{ path, what string }
	var protected []guarded
	if spec.EgressSocket != "" {
		// Stage 1 dials this path for the server. Were its directory
		// writable by the server, it could put a symlink to another socket
		// (ssh-agent, docker) in its place and reach that through the bridge.
		d := filepath.Dir(spec.EgressSocket)
		protected = append(protected, guarded{d, "the egress socket's directory"}, guarded{resolveExisting(d), "the egress socket's directory"})
	}
	for _, p := range spec.Protect {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("protected path %q is not absolute", p)
		}
		const what = "mcp.lock, its directory, the audit log, the taint state, the mcpform binary or the home directory"
		protected = append(protected, guarded{p, what}, guarded{resolveExisting(p), what})
	}
	writes := append(append([]string(nil), spec.Write...), spec.Tmp)
	for i, w := range writes {
		kind := "write"
		if i == len(writes)-1 {
			kind = "tmp"
		}
		real, err := check(kind, w)
		if err != nil {
			return err
		}
		for _, p := range protected {
			if covers(w, p.path) || covers(real, p.path) {
				return fmt.Errorf("%s path %q covers %q (%s), which a sandboxed server must not be able to write; name a narrower directory", kind, w, p.path, p.what)
			}
		}
	}
	return nil
}

// resolveExisting resolves symlinks in the longest existing prefix of p, so
// a protected file that does not exist yet is still compared by its real
// directory.
func resolveExisting(p string) string {
	p = filepath.Clean(p)
	var rest []string
	for {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// covers reports whether dir is p or an ancestor of p.
func covers(dir, p string) bool {
	dir, p = filepath.Clean(dir), filepath.Clean(p)
	if dir == p || dir == "/" {
		return true
	}
	return strings.HasPrefix(p, dir+"/")
}

// proxyEnv is what a networked server gets to find the egress proxy. Node
// reads the variables only with NODE_USE_ENV_PROXY=1 (Node 22.21/24.5+);
// curl, Python, Go and most SDKs read them always.
func proxyEnv() []string {
	u := "http://" + ProxyAddr
	return []string{
		"HTTPS_PROXY=" + u, "https_proxy=" + u,
		"HTTP_PROXY=" + u, "http_proxy=" + u,
		"ALL_PROXY=" + u, "all_proxy=" + u,
		"NO_PROXY=", "no_proxy=",
		"NODE_USE_ENV_PROXY=1",
	}
}

// setEnv returns env with each of kvs set, replacing earlier values of the
// same name (all spellings compare exactly, as the kernel does).
func setEnv(env []string, kvs ...string) []string {
	out := make([]string, 0, len(env)+len(kvs))
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		replaced := false
		for _, kv := range kvs {
			if n, _, _ := strings.Cut(kv, "="); n == name {
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, e)
		}
	}
	return append(out, kvs...)
}

// withoutEnv returns env without the named variables.
func withoutEnv(env []string, names ...string) []string {
	out := env[:0:0]
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		drop := false
		for _, n := range names {
			drop = drop || n == name
		}
		if !drop {
			out = append(out, e)
		}
	}
	return out
}

// fail prints a stage's error and exits with 125, the status a container
// runtime uses for "the sandbox itself failed", distinct from the server's
// own statuses.
func fail(stage string, err error) {
	fmt.Fprintf(os.Stderr, "mcpform sandbox %s: %v\n", stage, err)
	os.Exit(125)
}
