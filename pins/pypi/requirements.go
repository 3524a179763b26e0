package pypi

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
)

// RequirementsName is the file Resolve writes and Install reads.
const RequirementsName = "requirements.txt"

// The bounds of a pinned tree's requirements file (a large real tree has a
// few hundred packages).
const (
	// MaxRequirementsBytes bounds the file.
	MaxRequirementsBytes = 1 << 20
	// MaxPackages bounds its lines, one package each.
	MaxPackages = 5000
)

// Requirement is one line of a pinned tree: a package at one version, by
// its wheel's SHA-256.
type Requirement struct {
	// Name is normalised (PEP 503); Version exact (ExactVersion).
	Name, Version string
	// SHA256 is the wheel's digest, lowercase hex.
	SHA256 string
}

// Line is the requirement in the file's one form:
// "name==version --hash=sha256:<64 hex>".
func (r Requirement) Line() string {
	return r.Name + "==" + r.Version + " --hash=sha256:" + r.SHA256
}

var requirementLine = regexp.MustCompile(`^([a-z0-9]|[a-z0-9][a-z0-9-]*[a-z0-9])==([0-9][0-9a-z.]*) --hash=sha256:([0-9a-f]{64})$`)

// FormatRequirements writes reqs in the canonical form CheckRequirements
// accepts: sorted by name, one line each, every line ending in "\n". It
// refuses what CheckRequirements would.
func FormatRequirements(reqs []Requirement) ([]byte, error) {
	sorted := slices.Clone(reqs)
	slices.SortFunc(sorted, func(a, b Requirement) int { return strings.Compare(a.Name, b.Name) })
	var b bytes.Buffer
	for _, r := range sorted {
		b.WriteString(r.Line())
		b.WriteByte('\n')
	}
	if _, err := CheckRequirements(b.Bytes()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// CheckRequirements parses a pinned tree's requirements file, which is
// stored beside the lock and so is read as untrusted: at most
// MaxRequirementsBytes and MaxPackages lines, each exactly
// "name==version --hash=sha256:<64 lowercase hex>" with a normalised PEP
// 508 name and an exact version, sorted by name, no name twice, every
// line ending in "\n". Nothing else is accepted: no comments or blank
// lines, no options (-e, -r, -c, --index-url, --extra-index-url,
// --find-links, --trusted-host…), no URLs, paths, extras or markers, no
// second hash. It is the form FormatRequirements writes, so a file that
// passes is byte for byte the one a resolve wrote, and pip reads it with
// --require-hashes.
func CheckRequirements(data []byte) ([]Requirement, error) {
	if len(data) > MaxRequirementsBytes {
		return nil, fmt.Errorf("the requirements file is larger than %d KiB", MaxRequirementsBytes>>10)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("the requirements file is empty")
	}
	if data[len(data)-1] != '\n' {
		return nil, fmt.Errorf("the requirements file does not end with a newline")
	}
	lines := strings.Split(string(data[:len(data)-1]), "\n")
	if len(lines) > MaxPackages {
		return nil, fmt.Errorf("the requirements file has more than %d packages", MaxPackages)
	}
	out := make([]Requirement, 0, len(lines))
	for i, l := range lines {
		m := requirementLine.FindStringSubmatch(l)
		if m == nil {
			return nil, fmt.Errorf("line %d of the requirements file, %s, is not name==version --hash=sha256:<64 hex digits> (the only form mcpform writes)", i+1, escape.String(truncate(l, 200)))
		}
		r := Requirement{Name: m[1], Version: m[2], SHA256: m[3]}
		if err := ValidName(r.Name); err != nil || Normalize(r.Name) != r.Name {
			return nil, fmt.Errorf("line %d of the requirements file: %s is not a normalised package name", i+1, escape.String(r.Name))
		}
		if !ExactVersion(r.Version) {
			return nil, fmt.Errorf("line %d of the requirements file: %s is not an exact version", i+1, escape.String(r.Version))
		}
		if i > 0 {
			switch c := strings.Compare(out[i-1].Name, r.Name); {
			case c == 0:
				return nil, fmt.Errorf("line %d of the requirements file names %s a second time", i+1, escape.String(r.Name))
			case c > 0:
				return nil, fmt.Errorf("line %d of the requirements file is out of order (the file is sorted by name)", i+1)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
