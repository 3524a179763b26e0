package npm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/strictjson"
)

// maxDocument bounds what is read of one registry answer: a version's
// manifest, or the abbreviated document of every version of a package
// (the largest public ones are a few MiB).
const maxDocument = 32 << 20

// Registry is the registry npm would use here: npm_config_registry (or
// NPM_CONFIG_REGISTRY) when set, else what `npm config get registry` says
// of the user's configuration. It always ends in "/".
func Registry(ctx context.Context) (string, error) {
	reg := os.Getenv("npm_config_registry")
	if reg == "" {
		reg = os.Getenv("NPM_CONFIG_REGISTRY")
	}
	if reg == "" {
		out, err := exec.CommandContext(ctx, "npm", "config", "get", "registry").Output()
		if err != nil {
			return "", fmt.Errorf("npm config get registry: %w", err)
		}
		reg = strings.TrimSpace(string(out))
	}
	u, err := url.Parse(reg)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("the npm registry %s is not an http(s) URL without credentials, query or fragment", escape.String(reg))
	}
	if !strings.HasSuffix(reg, "/") {
		reg += "/"
	}
	return reg, nil
}

// escapedName is a package name as the registry's URL path has it: a
// scoped name's slash is %2f.
func escapedName(name string) string {
	return strings.Replace(name, "/", "%2f", 1)
}

// getJSON fetches u and decodes its strict JSON into v.
func getJSON(ctx context.Context, u, accept string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if len(data) > maxDocument {
		return fmt.Errorf("GET %s: the answer is larger than %d MiB", u, maxDocument>>20)
	}
	if err := strictjson.Check(data); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return json.Unmarshal(data, v)
}

// Latest asks the registry which exact version of name the range or
// dist-tag requested resolves to today, as npm picks it: a dist-tag's
// version; for a range, the latest tag's version when it satisfies the
// range, else the highest version that does (prereleases only when the
// range names one). It is what a *NotExactError's Resolved says.
func Latest(ctx context.Context, name, requested string) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	reg, err := Registry(ctx)
	if err != nil {
		return "", err
	}
	var doc struct {
		DistTags map[string]string          `json:"dist-tags"`
		Versions map[string]json.RawMessage `json:"versions"`
	}
	if err := getJSON(ctx, reg+escapedName(name), "application/vnd.npm.install-v1+json", &doc); err != nil {
		return "", err
	}
	if v, ok := doc.DistTags[requested]; ok {
		if _, err := ExactVersion(v); err != nil {
			return "", fmt.Errorf("the registry's %s tag of %s is %s: %w", escape.String(requested), escape.String(name), escape.String(v), err)
		}
		return v, nil
	}
	c, err := semver.NewConstraint(requested)
	if err != nil {
		return "", fmt.Errorf("%s has no dist-tag %s", escape.String(name), escape.String(requested))
	}
	if l, ok := doc.DistTags["latest"]; ok {
		if lv, err := semver.StrictNewVersion(l); err == nil && c.Check(lv) {
			return lv.String(), nil
		}
	}
	var best *semver.Version
	for v := range doc.Versions {
		sv, err := semver.StrictNewVersion(v)
		if err != nil || !c.Check(sv) {
			continue
		}
		if best == nil || sv.GreaterThan(best) {
			best = sv
		}
	}
	if best == nil {
		return "", fmt.Errorf("no version of %s satisfies %s", escape.String(name), escape.String(requested))
	}
	return best.String(), nil
}

// manifest is what Resolve reads of one version's registry document.
type manifest struct {
	Name    string          `json:"name"`
	Version string          `json:"version"`
	Bin     json.RawMessage `json:"bin"`
	Dist    struct {
		Integrity string `json:"integrity"`
		Tarball   string `json:"tarball"`
	} `json:"dist"`
}

// fetchManifest reads the registry's document of name@version.
func fetchManifest(ctx context.Context, reg, name, version string) (*manifest, error) {
	var m manifest
	if err := getJSON(ctx, reg+escapedName(name)+"/"+url.PathEscape(version), "application/json", &m); err != nil {
		return nil, err
	}
	if m.Name != name || m.Version != version {
		return nil, fmt.Errorf("the registry answered %s@%s for %s@%s", escape.String(m.Name), escape.String(m.Version), escape.String(name), escape.String(version))
	}
	if err := checkIntegrity(m.Dist.Integrity); err != nil {
		return nil, fmt.Errorf("%s@%s on the registry: %w", escape.String(name), escape.String(version), err)
	}
	return &m, nil
}

// checkIntegrity accepts an SRI string of sha512 digests only (one or
// more, space separated, each 64 bytes of standard base64); sha1, sha256,
// sha384 or an unknown algorithm is refused, as is an option (?…).
func checkIntegrity(sri string) error {
	if sri == "" {
		return errors.New("no integrity (mcpform requires an SRI sha512 digest)")
	}
	for _, h := range strings.Fields(sri) {
		alg, b64, ok := strings.Cut(h, "-")
		if !ok || alg != "sha512" {
			return fmt.Errorf("integrity %s is not sha512 (mcpform accepts SRI sha512 only)", escape.String(h))
		}
		if strings.Contains(b64, "?") {
			return fmt.Errorf("integrity %s has options", escape.String(h))
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(b64)
		if err != nil || len(raw) != 64 {
			return fmt.Errorf("integrity %s is not a sha512 digest in base64", escape.String(h))
		}
	}
	return nil
}

// binPath picks the file the runner starts among a package's bin entries
// (the "bin" field: a string, or names to paths): the one named command,
// or, when command is "", the one named like the package (without its
// scope) or the only one, as npx picks it. The path is cleaned and must
// stay inside the package.
func binPath(pkg string, raw json.RawMessage, command string) (name, file string, err error) {
	unscoped := pkg
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		unscoped = pkg[i+1:]
	}
	bins := map[string]string{}
	var one string
	if len(raw) > 0 && json.Unmarshal(raw, &one) == nil {
		bins[unscoped] = one
	} else if len(raw) > 0 {
		if err := json.Unmarshal(raw, &bins); err != nil {
			return "", "", fmt.Errorf("%s: its bin field is neither a path nor names to paths", escape.String(pkg))
		}
	}
	switch {
	case command != "":
		name = command
	case len(bins) == 1:
		for n := range bins {
			name = n
		}
	default:
		name = unscoped
	}
	file, ok := bins[name]
	if !ok {
		names := make([]string, 0, len(bins))
		for n := range bins {
			names = append(names, escape.String(n))
		}
		slices.Sort(names)
		return "", "", fmt.Errorf("%s has no bin named %s (it has %s): name one with npx --package=%s@VERSION COMMAND", escape.String(pkg), escape.String(name), strings.Join(names, ", "), escape.String(pkg))
	}
	clean, err := inside(file)
	if err != nil {
		return "", "", fmt.Errorf("%s: bin %s: %w", escape.String(pkg), escape.String(name), err)
	}
	return name, clean, nil
}

// inside cleans a package-relative path and refuses one that leaves the
// package.
func inside(p string) (string, error) {
	p = strings.ReplaceAll(p, `\`, "/")
	c := path.Clean(p)
	if c == "." || strings.HasPrefix(c, "/") || c == ".." || strings.HasPrefix(c, "../") || strings.ContainsRune(c, 0) {
		return "", fmt.Errorf("path %s leaves the package", escape.String(p))
	}
	return c, nil
}
