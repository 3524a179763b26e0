package pypi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/lockedfile"
	"github.com/mcpform/mcpform/internal/strictjson"
)

// Pin is what the lock records of a PyPI server: the package, its exact
// version and wheel digest, the whole tree by its requirements file's
// digest, and what run starts.
type Pin struct {
	// Package (normalised) and Version are the exact package the argv
	// runs; SHA256 is its wheel's digest.
	Package, Version, SHA256 string
	// Wheel is the top package's wheel file name, for messages.
	Wheel string
	// Index is the index pip resolved from, as pip printed it (passwords
	// redacted): "https://pypi.org/simple" when pip is configured with
	// none, "" when pip used no index (--no-index, find-links only). It is
	// a record for review: pip checks every wheel by hash, whatever
	// serves it.
	Index string
	// Requirements is the SHA-256 (lowercase hex) of the requirements.txt
	// Resolve wrote; the cache entry is named by it.
	Requirements string
	// Script is the console script run starts and EntryPoint its object
	// reference ("pkg.module:func"); Resolve leaves both empty unless the
	// argv named the script, and Install fills them from the top
	// package's entry points.
	Script, EntryPoint string
	// Tree is every package of the tree, sorted by name.
	Tree []Requirement
}

// Options are how Resolve and Install run pip.
type Options struct {
	// Python is the interpreter that runs pip and creates venvs;
	// "python3" when empty (found on PATH).
	Python string
	// PipArgs are added to every pip command (a test's --no-index
	// --find-links DIR); pip's configuration (PIP_* variables, pip.conf)
	// applies as well.
	PipArgs []string
}

func (o Options) python() string {
	if o.Python == "" {
		return "python3"
	}
	return o.Python
}

// DefaultIndex is the index pip uses when it is configured with none.
const DefaultIndex = "https://pypi.org/simple"

// maxReportBytes bounds pip's report.
const maxReportBytes = 64 << 20

// report is the part of pip's installation report (pip ≥ 22.2,
// --report) Resolve reads.
type report struct {
	Version string `json:"version"`
	Install []struct {
		DownloadInfo struct {
			URL         string `json:"url"`
			ArchiveInfo *struct {
				Hashes map[string]string `json:"hashes"`
				// Hash is PEP 610's older form ("sha256=<hex>"), the
				// only one before pip 23.1.
				Hash string `json:"hash"`
			} `json:"archive_info"`
			DirInfo json.RawMessage `json:"dir_info"`
			VCSInfo json.RawMessage `json:"vcs_info"`
		} `json:"download_info"`
		Requested bool `json:"requested"`
		Metadata  struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"metadata"`
	} `json:"install"`
}

// Resolve pins spec: the real pip resolves the whole tree without
// installing or running anything (python3 -m pip install --dry-run
// --ignore-installed --only-binary=:all: --report, from the index pip is
// configured with, plus opts.PipArgs). Every package must come as a wheel
// from an archive with a sha256: an sdist would have to run its build
// code, a directory or VCS source is not an index package. It writes the
// canonical requirements.txt into dir (created when missing; an earlier
// one replaced). spec must have an exact version.
func Resolve(ctx context.Context, spec *Spec, dir string, opts Options) (*Pin, error) {
	if spec.Version == "" {
		return nil, &NotExactError{Runner: spec.Runner, Package: spec.Package, Requested: spec.Requested}
	}
	if err := ValidName(spec.Package); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "mcpform-pypi-resolve-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	reportPath := filepath.Join(tmp, "report.json")
	// PIP_BREAK_SYSTEM_PACKAGES: a Debian python3 refuses any install into
	// itself (PEP 668's EXTERNALLY-MANAGED), and --dry-run installs nothing.
	out, err := runPip(ctx, opts, tmp, "PIP_BREAK_SYSTEM_PACKAGES=1", "install", "--dry-run", "--ignore-installed", "--only-binary=:all:", "--report", reportPath, spec.Package+"=="+spec.Version)
	if err != nil {
		if strings.Contains(out, "No matching distribution found") || strings.Contains(out, "Could not find a version that satisfies") {
			return nil, fmt.Errorf("pip found no wheel of %s==%s or of a package it needs, from %s: mcpform installs wheels only (--only-binary=:all:), since building an sdist runs its setup code; a package published only as an sdist cannot be pinned. pip said:\n%s",
				escape.String(spec.Package), spec.Version, indexOf(out), escape.Multiline(tail(out)))
		}
		return nil, err
	}
	raw, err := readBounded(reportPath, maxReportBytes)
	if err != nil {
		return nil, fmt.Errorf("pip's report: %w", err)
	}
	if err := strictjson.Check(raw); err != nil {
		return nil, fmt.Errorf("pip's report: %w", err)
	}
	var rep report
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, fmt.Errorf("pip's report: %w", err)
	}
	if rep.Version != "1" {
		return nil, fmt.Errorf("pip's report is of version %s, not 1: use pip 22.2 or later", escape.String(rep.Version))
	}
	if len(rep.Install) > MaxPackages {
		return nil, fmt.Errorf("the tree of %s==%s has more than %d packages", escape.String(spec.Package), spec.Version, MaxPackages)
	}
	pin := &Pin{Package: spec.Package, Version: spec.Version, Index: indexOf(out), Script: spec.Command}
	if !validIndex(pin.Index) {
		return nil, fmt.Errorf("pip resolved from the index %s, which is not an http(s) URL mcpform can record: configure pip's index (PIP_INDEX_URL or pip.conf) as https://HOST/PATH", escape.String(pin.Index))
	}
	for _, p := range rep.Install {
		name, version := Normalize(p.Metadata.Name), p.Metadata.Version
		what := escape.String(name + "==" + version)
		if err := ValidName(p.Metadata.Name); err != nil {
			return nil, fmt.Errorf("pip's report: %w", err)
		}
		if !ExactVersion(version) {
			return nil, fmt.Errorf("pip resolved %s, whose version is not one mcpform can pin (N.N[aN|bN|rcN][.postN][.devN])", what)
		}
		di := p.DownloadInfo
		if di.ArchiveInfo == nil || di.DirInfo != nil || di.VCSInfo != nil {
			return nil, fmt.Errorf("pip resolved %s from %s, which is not an archive of the index: mcpform pins index packages only", what, escape.String(di.URL))
		}
		sum := di.ArchiveInfo.Hashes["sha256"]
		if legacy, ok := strings.CutPrefix(di.ArchiveInfo.Hash, "sha256="); ok {
			if sum != "" && sum != legacy {
				return nil, fmt.Errorf("pip's report gives %s two sha256 digests", what)
			}
			sum = legacy
		}
		if !isSHA256(sum) {
			return nil, fmt.Errorf("pip resolved %s with no sha256 of its file: the index must publish one (mcpform pins every package by its hash)", what)
		}
		u, err := url.Parse(di.URL)
		if err != nil {
			return nil, fmt.Errorf("pip resolved %s from a URL it cannot read: %v", what, err)
		}
		file := path.Base(u.Path)
		if !strings.HasSuffix(file, ".whl") {
			return nil, fmt.Errorf("pip resolved %s as %s, not a wheel: mcpform installs wheels only, since building an sdist runs its setup code", what, escape.String(file))
		}
		pin.Tree = append(pin.Tree, Requirement{Name: name, Version: version, SHA256: sum})
		if name == spec.Package {
			if version != spec.Version || !p.Requested {
				return nil, fmt.Errorf("pip resolved %s for %s==%s: write the version as pip spells it", what, escape.String(spec.Package), spec.Version)
			}
			pin.SHA256, pin.Wheel = sum, file
		}
	}
	if pin.SHA256 == "" {
		return nil, fmt.Errorf("pip's report does not install %s==%s itself", escape.String(spec.Package), spec.Version)
	}
	data, err := FormatRequirements(pin.Tree)
	if err != nil {
		return nil, fmt.Errorf("the tree pip resolved: %w", err)
	}
	pin.Tree, _ = CheckRequirements(data)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(dir, RequirementsName), data); err != nil {
		return nil, err
	}
	s := sha256.Sum256(data)
	pin.Requirements = hex.EncodeToString(s[:])
	return pin, nil
}

// indexOf is the index pip says it looked in ("Looking in indexes: URL,
// …"), without its user and password (pip redacts the password; the lock
// keeps neither): DefaultIndex when it printed none and used no
// find-links either, "" when it used find-links only.
func indexOf(out string) string {
	links := false
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Looking in indexes: "); ok {
			first, _, _ := strings.Cut(v, ",")
			first = strings.TrimSpace(first)
			if u, err := url.Parse(first); err == nil && u.User != nil {
				u.User = nil
				first = u.String()
			}
			return first
		}
		links = links || strings.HasPrefix(strings.TrimSpace(l), "Looking in links: ")
	}
	if links {
		return ""
	}
	return DefaultIndex
}

// runPip runs python -m pip SUB with args (after opts.PipArgs) in dir,
// with no prompts and no version check, and returns what pip printed. A
// target that is a path is the interpreter pip installs for (pip's
// --python, pip 22.3 or later); one that is NAME=VALUE is a variable for
// pip's environment instead.
func runPip(ctx context.Context, opts Options, dir, target, sub string, args ...string) (string, error) {
	full := []string{"-m", "pip", "--disable-pip-version-check", "--no-input"}
	var env []string
	if strings.Contains(target, "=") {
		env = append(env, target)
	} else if target != "" {
		full = append(full, "--python", target)
	}
	full = append(append(append(full, sub), opts.PipArgs...), args...)
	return output(ctx, dir, env, "pip "+sub, opts.python(), full...)
}

// runCmd runs prog with args in dir, for its effect.
func runCmd(ctx context.Context, dir, prog string, args ...string) error {
	_, err := output(ctx, dir, nil, prog+" "+strings.Join(args[:min(2, len(args))], " "), prog, args...)
	return err
}

// output runs prog and returns what it printed; its error names what.
func output(ctx context.Context, dir string, env []string, what, prog string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "PIP_NO_INPUT=1", "PYTHONDONTWRITEBYTECODE=1"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s: %w\n%s", what, err, escape.Multiline(tail(out.String())))
	}
	return out.String(), nil
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 4000 {
		s = s[len(s)-4000:]
	}
	return s
}

// validIndex is an index the lock can hold: "" (find-links only) or an
// http(s) URL of printable ASCII, at most 2048 bytes.
func validIndex(s string) bool {
	if s == "" {
		return true
	}
	return len(s) <= 2048 && (strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")) &&
		!strings.ContainsFunc(s, func(r rune) bool { return r <= 0x20 || r >= 0x7f })
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// readBounded reads p, refusing one past limit bytes without reading all
// of it.
func readBounded(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d KiB", p, limit>>10)
	}
	return data, nil
}

// writeAtomic replaces p with data, mode 0644, through a synced temporary
// file and a rename (lockedfile.WriteFile).
func writeAtomic(p string, data []byte) error {
	return lockedfile.WriteFile(p, data, 0o644, nil)
}
