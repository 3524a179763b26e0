package provenance

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sigstore/sigstore-go/pkg/root"

	"github.com/mcpform/mcpform/internal/escape"
)

// embeddedRoot is Sigstore's public-good trusted root as mcpform ships it:
// sigstore/root-signing's targets/trusted_root.json at commit 60cf2ce8
// (last changed in c9bda74a, 2025-09-22, which added the first Rekor v2
// log). See testdata/README.md.
//
//go:embed trusted_root.json
var embeddedRoot []byte

// EnvRoot names the environment variable whose value, a file's path,
// replaces the trusted root.
const EnvRoot = "MCPFORM_TRUSTED_ROOT"

// ConfigFile is where, in the user's configuration directory
// (os.UserConfigDir: $XDG_CONFIG_HOME or ~/.config on Linux), a trusted
// root replaces the embedded one.
const ConfigFile = "mcpform/trusted_root.json"

// TrustedRoot is the trusted root Verify checks against, and where it came
// from: the file EnvRoot names (which must exist), else ConfigFile in the
// user's configuration directory when it exists, else the embedded root
// ("embedded"). A file that exists and does not parse is an error, never
// a silent fall back to the embedded root.
func TrustedRoot() (*root.TrustedRoot, string, error) {
	if p := os.Getenv(EnvRoot); p != "" {
		tr, err := loadRoot(p)
		if err != nil {
			return nil, "", fmt.Errorf("%s=%s: %w; point it at a Sigstore trusted_root.json or unset it", EnvRoot, escape.String(p), err)
		}
		return tr, p, nil
	}
	if dir, err := os.UserConfigDir(); err == nil {
		p := filepath.Join(dir, filepath.FromSlash(ConfigFile))
		tr, err := loadRoot(p)
		switch {
		case err == nil:
			return tr, p, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, "", fmt.Errorf("the trusted root %s: %w; replace it with a Sigstore trusted_root.json or remove it to use the one mcpform ships", escape.String(p), err)
		}
	}
	tr, err := root.NewTrustedRootFromJSON(embeddedRoot)
	if err != nil {
		return nil, "", fmt.Errorf("the embedded trusted root: %w", err)
	}
	return tr, "embedded", nil
}

// maxRoot bounds a trusted root file (the public-good one is 7 KiB).
const maxRoot = 1 << 20

func loadRoot(p string) (*root.TrustedRoot, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxRoot {
		return nil, fmt.Errorf("not a regular file of at most %d KiB", maxRoot>>10)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	tr, err := root.NewTrustedRootFromJSON(data)
	if err != nil {
		return nil, fmt.Errorf("not a Sigstore trusted root: %s", escape.String(err.Error()))
	}
	return tr, nil
}
