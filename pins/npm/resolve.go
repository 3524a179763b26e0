package npm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gowebpki/jcs"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/lockedfile"
)

// Pin is what the lock records of an npm server: the package, its exact
// version and tarball integrity, the whole tree by its lockfile's digest,
// and what the runner starts.
type Pin struct {
	// Package and Version are the exact package the argv runs.
	Package, Version string
	// Integrity is its tarball's SRI sha512 from the registry.
	Integrity string
	// Registry is the registry every package of the tree comes from (an
	// http(s) URL ending in "/").
	Registry string
	// Lockfile is the SHA-256 (lowercase hex) of the package-lock.json
	// Resolve wrote: RFC 8785 canonical JSON, so the digest does not
	// depend on how one npm version formats it. The cache entry is named
	// by it.
	Lockfile string
	// BinName is the bin the runner starts and Bin its file inside the
	// package (e.g. "dist/index.js"), started with node.
	BinName, Bin string
	// Packages counts the tree's packages, the root package's included.
	Packages int
	// InstallScripts are the lockfile paths of the packages with install
	// scripts (not run unless RunScripts: installs use --ignore-scripts);
	// a plan reports them.
	InstallScripts []string
	// RunScripts lets Install run the tree's install scripts (mcp.hcl's
	// allow_install_scripts). The tree they leave is another tree, so
	// it has its own cache entry.
	RunScripts bool
}

// The files Resolve writes into its directory and Install into a cache
// entry's project.
const (
	PackageJSON  = "package.json"
	LockfileName = "package-lock.json"
)

// Resolve pins spec: it reads the exact version's manifest from the
// registry (dist.integrity must be SRI sha512), has the real npm generate
// the whole tree's lockfile without installing or running anything (npm
// install --package-lock-only --ignore-scripts --omit=dev, in a temporary
// directory whose package.json depends on exactly that version), checks
// it with CheckLockfile against the registry and against the manifest
// (the top package is the version and integrity the registry gave), and
// writes package.json and the canonical package-lock.json into dir
// (created when missing; any earlier ones replaced). spec must have an
// exact version.
func Resolve(ctx context.Context, spec *Spec, dir string) (*Pin, error) {
	if spec.Version == "" {
		return nil, &NotExactError{Package: spec.Package, Requested: spec.Requested}
	}
	if err := ValidName(spec.Package); err != nil {
		return nil, err
	}
	reg, err := Registry(ctx)
	if err != nil {
		return nil, err
	}
	m, err := fetchManifest(ctx, reg, spec.Package, spec.Version)
	if err != nil {
		return nil, err
	}
	binName, bin, err := binPath(spec.Package, m.Bin, spec.Command)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "mcpform-npm-resolve-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	pj := packageJSON(spec.Package, spec.Version)
	if err := os.WriteFile(filepath.Join(tmp, PackageJSON), pj, 0o644); err != nil {
		return nil, err
	}
	if err := runNPM(ctx, tmp, reg, "install", "--package-lock-only", "--lockfile-version=3", "--omit-lockfile-registry-resolved=false"); err != nil {
		return nil, err
	}
	raw, err := readBounded(filepath.Join(tmp, LockfileName))
	if err != nil {
		return nil, err
	}
	lf, err := CheckLockfile(raw, reg)
	if err != nil {
		return nil, fmt.Errorf("npm's lockfile for %s@%s: %w", escape.String(spec.Package), spec.Version, err)
	}
	top, ok := lf.Find(spec.Package)
	if !ok || top.Name != spec.Package || top.Version != spec.Version || top.Integrity != m.Dist.Integrity {
		return nil, fmt.Errorf("npm's lockfile does not pin %s@%s with the registry's integrity", escape.String(spec.Package), spec.Version)
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("canonicalizing the lockfile: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(dir, PackageJSON), pj); err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(dir, LockfileName), canon); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canon)
	return &Pin{
		Package: spec.Package, Version: spec.Version, Integrity: m.Dist.Integrity, Registry: reg,
		Lockfile: hex.EncodeToString(sum[:]),
		BinName:  binName, Bin: bin,
		Packages:       len(lf.Packages),
		InstallScripts: lf.InstallScripts(),
	}, nil
}

// packageJSON is the one package.json of a pinned tree: a private root
// depending on exactly name@version. Install writes it again from the pin
// rather than trusting a file.
func packageJSON(name, version string) []byte {
	b, _ := json.MarshalIndent(map[string]any{
		"name":         "mcpform-npm-pin",
		"private":      true,
		"dependencies": map[string]string{name: version},
	}, "", "  ")
	return append(b, '\n')
}

// runNPM runs npm in dir against reg, never running lifecycle scripts, no
// audit or funding requests, without dev dependencies.
func runNPM(ctx context.Context, dir, reg string, args ...string) error {
	return npmCommand(ctx, dir, reg, false, args...)
}

// npmCommand runs npm with args in dir against reg, its install scripts
// skipped unless scripts is set.
func npmCommand(ctx context.Context, dir, reg string, scripts bool, args ...string) error {
	args = append(args, "--ignore-scripts="+strconv.FormatBool(!scripts), "--no-audit", "--no-fund", "--omit=dev", "--registry="+reg, "--no-update-notifier")
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_registry="+reg)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if len(msg) > 4000 {
			msg = msg[len(msg)-4000:]
		}
		return fmt.Errorf("npm %s: %w\n%s", args[0], err, escape.Multiline(msg))
	}
	return nil
}

// readBounded reads a lockfile, refusing one past MaxLockfileBytes
// without reading all of it.
func readBounded(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxLockfileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxLockfileBytes {
		return nil, fmt.Errorf("%s is larger than %d MiB", p, MaxLockfileBytes>>20)
	}
	return data, nil
}

// writeAtomic replaces p with data, mode 0644, through a synced temporary
// file and a rename (lockedfile.WriteFile).
func writeAtomic(p string, data []byte) error {
	return lockedfile.WriteFile(p, data, 0o644, nil)
}
