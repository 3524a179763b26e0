package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// repoRoot is the repository root, from this package's directory.
const repoRoot = "../.."

// releaseAllEnv makes TestRelease build all six targets instead of only
// this machine's: a cold cross-build of the five others costs minutes.
const releaseAllEnv = "MCPFORM_RELEASE_ALL"

// releaseScript runs scripts/release.sh with args and returns its stdout.
func releaseScript(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(repoRoot, "scripts", "release.sh")}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/release.sh %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

func scriptTargets(t *testing.T) []string {
	return strings.Fields(releaseScript(t, nil, "-print-targets"))
}

// scriptLdflags is the script's ldflags template, -s -w and the -X names
// with their goreleaser template values.
func scriptLdflags(t *testing.T) string {
	return strings.TrimSpace(releaseScript(t, nil, "-print-ldflags"))
}

// TestRelease builds a snapshot release with scripts/release.sh (this
// machine's target; all six with MCPFORM_RELEASE_ALL=1) and checks what a
// user downloads: one archive per target named as .goreleaser.yaml names
// it, holding the binary and the documents; checksums.txt in sha256sum's
// format over exactly the archives; a static, -trimpath binary that reports
// the snapshot's version, commit and date. Then the GitHub Action's steps
// run against that release (TestAction's checks, below).
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpform with the release flags")
	}
	for _, tool := range []string{"bash", "git", "tar", "gzip", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the release script and the action need %s: %v", tool, err)
		}
	}
	all := scriptTargets(t)
	targets := []string{runtime.GOOS + "/" + runtime.GOARCH}
	if os.Getenv(releaseAllEnv) != "" {
		targets = all
	} else if !slices.Contains(all, targets[0]) {
		t.Skipf("%s is not a release target", targets[0])
	}
	if slices.ContainsFunc(targets, func(s string) bool { return strings.HasPrefix(s, "windows/") }) {
		if _, err := exec.LookPath("zip"); err != nil {
			t.Fatalf("the windows archives need zip: %v", err)
		}
	}

	dist := t.TempDir()
	releaseScript(t, nil, "-snapshot", "-out", dist, "-targets", strings.Join(targets, " "))

	commit := strings.TrimSpace(gitOutput(t, "rev-parse", "HEAD"))
	short := strings.TrimSpace(gitOutput(t, "rev-parse", "--short", "HEAD"))
	date := strings.TrimSpace(gitOutput(t, "log", "-1", "--date=format-local:%Y-%m-%dT%H:%M:%SZ", "--format=%cd", "HEAD"))
	base := sourceVersion
	if tag, err := exec.Command("git", "-C", repoRoot, "describe", "--tags", "--abbrev=0", "--match", "v[0-9]*", "HEAD").Output(); err == nil {
		base = strings.TrimPrefix(strings.TrimSpace(string(tag)), "v")
	}
	wantVersion := base + "+snapshot." + short

	var archives []string
	for _, target := range targets {
		goos, goarch, _ := strings.Cut(target, "/")
		name := "mcpform_" + wantVersion + "_" + goos + "_" + goarch
		exe := "mcpform"
		if goos == "windows" {
			name, exe = name+".zip", "mcpform.exe"
		} else {
			name += ".tar.gz"
		}
		archives = append(archives, name)
		files := archiveFiles(t, filepath.Join(dist, name))
		var names []string
		for n := range files {
			names = append(names, n)
		}
		slices.Sort(names)
		if diff := cmp.Diff([]string{"CHANGELOG.md", "LICENSE", "README.md", exe}, names); diff != "" {
			t.Errorf("%s holds (-want +got):\n%s", name, diff)
		}
		if target != runtime.GOOS+"/"+runtime.GOARCH {
			continue
		}
		bin := filepath.Join(t.TempDir(), exe)
		if err := os.WriteFile(bin, files[exe], 0o755); err != nil {
			t.Fatal(err)
		}
		checkReleaseBinary(t, bin, buildStamp{Version: wantVersion, Commit: commit, Date: date, Source: "release",
			GoVersion: runtime.Version(), Platform: goos + "_" + goarch})
	}
	slices.Sort(archives)

	sums := checksums(t, filepath.Join(dist, "checksums.txt"))
	var summed []string
	for name, sum := range sums {
		summed = append(summed, name)
		data, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Errorf("checksums.txt lists %s: %v", name, err)
			continue
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
			t.Errorf("checksums.txt: %s is %s, the file's sha256 is %x", name, sum, got)
		}
	}
	slices.Sort(summed)
	if diff := cmp.Diff(archives, summed); diff != "" {
		t.Errorf("checksums.txt lists (-archives +listed):\n%s", diff)
	}

	// A rebuild of the same commit is byte-identical (the date is the
	// commit's, the archives' entries are dated and owned alike).
	again := t.TempDir()
	releaseScript(t, nil, "-snapshot", "-out", again, "-targets", targets[0])
	first, _ := os.ReadFile(filepath.Join(dist, archives[slices.IndexFunc(archives, func(a string) bool {
		return strings.Contains(a, "_"+strings.ReplaceAll(targets[0], "/", "_")+".")
	})]))
	if second := checksums(t, filepath.Join(again, "checksums.txt")); len(second) != 1 {
		t.Errorf("rebuild: checksums.txt lists %d archives, want 1", len(second))
	} else {
		for name, sum := range second {
			if got := sha256.Sum256(first); hex.EncodeToString(got[:]) != sum {
				t.Errorf("rebuilding %s gave a different archive: the release is not reproducible", name)
			}
		}
	}

	host := runtime.GOOS + "/" + runtime.GOARCH
	if slices.Contains(targets, host) {
		t.Run("action", func(t *testing.T) { testActionSteps(t, dist, wantVersion) })
	}
}

// checkReleaseBinary runs a release binary's version command and reads its
// build settings: CGO_ENABLED=0 and -trimpath, as .goreleaser.yaml says.
func checkReleaseBinary(t *testing.T, bin string, want buildStamp) {
	t.Helper()
	out, err := exec.Command(bin, "version", "-json").Output()
	if err != nil {
		t.Fatalf("%s version -json: %v", bin, err)
	}
	var got buildStamp
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("version -json: %v\n%s", err, out)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the release binary's version -json (-want +got):\n%s", diff)
	}
	human, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(human), "\n"); first != "mcpform v"+want.Version {
		t.Errorf("version's first line is %q, want %q", first, "mcpform v"+want.Version)
	}
	if !strings.Contains(string(human), "commit "+want.Commit+"\n") || !strings.Contains(string(human), "date   "+want.Date+"\n") {
		t.Errorf("version does not show the commit and date:\n%s", human)
	}
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	for _, setting := range []string{"\tbuild\tCGO_ENABLED=0\n", "\tbuild\t-trimpath=true\n"} {
		if !strings.Contains(string(info), setting) {
			t.Errorf("the release binary was not built with %q:\n%s", strings.TrimSpace(setting), info)
		}
	}
}

func gitOutput(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", repoRoot}, args...)...)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// archiveFiles returns the regular files of a .tar.gz or .zip by name.
func archiveFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			files[f.Name] = data
		}
		return files
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: %s is owned by %d:%d, want 0:0", filepath.Base(path), h.Name, h.Uid, h.Gid)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = data
	}
}

// checksumLine is one line of sha256sum's output: 64 hex digits, two
// spaces (text mode), the file name.
var checksumLine = regexp.MustCompile(`^([0-9a-f]{64})  (\S+)$`)

func checksums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := checksumLine.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Errorf("checksums.txt: %q is not a sha256sum line", sc.Text())
			continue
		}
		sums[m[2]] = m[1]
	}
	return sums
}

// goreleaserConfig is the part of .goreleaser.yaml the script must match.
type goreleaserConfig struct {
	Version int `yaml:"version"`
	Builds  []struct {
		ID      string   `yaml:"id"`
		Main    string   `yaml:"main"`
		Binary  string   `yaml:"binary"`
		Env     []string `yaml:"env"`
		Flags   []string `yaml:"flags"`
		Ldflags []string `yaml:"ldflags"`
		Goos    []string `yaml:"goos"`
		Goarch  []string `yaml:"goarch"`
	} `yaml:"builds"`
	Archives []struct {
		Formats         []string `yaml:"formats"`
		FormatOverrides []struct {
			Goos    string   `yaml:"goos"`
			Formats []string `yaml:"formats"`
		} `yaml:"format_overrides"`
		NameTemplate string   `yaml:"name_template"`
		Files        []string `yaml:"files"`
	} `yaml:"archives"`
	Checksum struct {
		NameTemplate string `yaml:"name_template"`
		Algorithm    string `yaml:"algorithm"`
	} `yaml:"checksum"`
	Snapshot struct {
		VersionTemplate string `yaml:"version_template"`
	} `yaml:"snapshot"`
}

// TestGoreleaserConfig holds .goreleaser.yaml, which real releases may use,
// to scripts/release.sh, which CI runs: the same six targets, static
// (CGO_ENABLED=0), -trimpath, the same ldflags, archive names, formats,
// files, checksum file and snapshot version. `goreleaser check` also runs
// when goreleaser is on PATH (installing it from the module proxy takes
// half an hour here, so CI does not).
func TestGoreleaserConfig(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c goreleaserConfig
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&c); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if c.Version != 2 {
		t.Errorf("version: %d, want 2 (goreleaser v2's format)", c.Version)
	}
	if len(c.Builds) != 1 || len(c.Archives) != 1 {
		t.Fatalf("want one build and one archive, got %d and %d", len(c.Builds), len(c.Archives))
	}
	b, a := c.Builds[0], c.Archives[0]
	var targets []string
	for _, goos := range b.Goos {
		for _, goarch := range b.Goarch {
			targets = append(targets, goos+"/"+goarch)
		}
	}
	if diff := cmp.Diff(scriptTargets(t), targets); diff != "" {
		t.Errorf("targets (-release.sh +.goreleaser.yaml):\n%s", diff)
	}
	for _, tc := range []struct{ what, got, want string }{
		{"main", b.Main, "./cmd/mcpform"},
		{"binary", b.Binary, "mcpform"},
		{"env", strings.Join(b.Env, " "), "CGO_ENABLED=0"},
		{"flags", strings.Join(b.Flags, " "), "-trimpath"},
		{"ldflags", strings.Join(b.Ldflags, " "), scriptLdflags(t)},
		{"archive name", a.NameTemplate, "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}"},
		{"archive formats", strings.Join(a.Formats, " "), "tar.gz"},
		{"archive files", strings.Join(a.Files, " "), "LICENSE README.md CHANGELOG.md"},
		{"checksum file", c.Checksum.NameTemplate, "checksums.txt"},
		{"checksum algorithm", c.Checksum.Algorithm, "sha256"},
		{"snapshot version", c.Snapshot.VersionTemplate, "{{ .Version }}+snapshot.{{ .ShortCommit }}"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: .goreleaser.yaml has %q, release.sh uses %q", tc.what, tc.got, tc.want)
		}
	}
	if len(a.FormatOverrides) != 1 || a.FormatOverrides[0].Goos != "windows" || strings.Join(a.FormatOverrides[0].Formats, " ") != "zip" {
		t.Errorf("format_overrides: want windows as zip, as release.sh does; got %+v", a.FormatOverrides)
	}
	// The -X names are variables of this package, so the values land.
	for _, m := range regexp.MustCompile(`-X main\.(\w+)=`).FindAllStringSubmatch(scriptLdflags(t), -1) {
		if !slices.Contains([]string{"buildVersion", "buildCommit", "buildDate"}, m[1]) {
			t.Errorf("ldflags set main.%s, which version.go does not have", m[1])
		}
	}
	if _, err := exec.LookPath("goreleaser"); err == nil {
		cmd := exec.Command("goreleaser", "check")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("goreleaser check: %v\n%s", err, out)
		}
	} else {
		t.Log("goreleaser is not on PATH: `goreleaser check` skipped")
	}
}

// TestDockerfile checks the container image's definition without a Docker
// engine: a build stage that runs scripts/release.sh -binary (so the image's
// binary has the release's flags, CGO_ENABLED=0 among them), a final stage
// from a static base with no shell that runs as a non-root user and starts
// mcpform.
func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	type stage struct {
		from, name string
		lines      []string // instruction lines, continuations joined
	}
	var stages []stage
	var pending string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if pending == "" && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			pending += cont + " "
			continue
		}
		line, pending = pending+line, ""
		instr, rest, _ := strings.Cut(line, " ")
		switch strings.ToUpper(instr) {
		case "FROM":
			f := strings.Fields(rest)
			f = slices.DeleteFunc(f, func(s string) bool { return strings.HasPrefix(s, "--platform=") })
			s := stage{from: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			stages = append(stages, s)
		case "ARG":
			if len(stages) == 0 {
				continue
			}
			fallthrough
		default:
			if len(stages) == 0 {
				t.Fatalf("Dockerfile: %q before any FROM", line)
			}
			stages[len(stages)-1].lines = append(stages[len(stages)-1].lines, line)
		}
	}
	if len(stages) != 2 {
		t.Fatalf("Dockerfile has %d stages, want 2 (build, then the image)", len(stages))
	}
	build, final := stages[0], stages[1]
	if !strings.HasPrefix(build.from, "golang:") || build.name == "" {
		t.Errorf("the build stage is FROM %s AS %q: want a named golang stage", build.from, build.name)
	}
	goVersion := strings.TrimPrefix(runtime.Version(), "go")
	if !strings.Contains(string(data), "ARG GO_VERSION="+goVersion+"\n") {
		t.Errorf("Dockerfile does not build with Go %s (ARG GO_VERSION), the Go of go.mod and CI", goVersion)
	}
	var builds []string
	for _, l := range build.lines {
		if strings.HasPrefix(l, "RUN ") && strings.Contains(l, "release.sh") {
			builds = append(builds, l)
		}
		if strings.HasPrefix(l, "RUN ") && strings.Contains(l, "go build") {
			t.Errorf("the build stage runs go build itself (%q): run scripts/release.sh -binary, whose flags the release uses", l)
		}
	}
	if len(builds) != 1 || !strings.Contains(builds[0], "scripts/release.sh -binary ") {
		t.Errorf("the build stage must run `scripts/release.sh -binary PATH` once, got %q", builds)
	}
	if !strings.HasPrefix(final.from, "gcr.io/distroless/static") && final.from != "scratch" {
		t.Errorf("the image is FROM %s: want distroless/static or scratch (a static binary, no shell)", final.from)
	}
	var user, entrypoint string
	copied := false
	for _, l := range final.lines {
		instr, rest, _ := strings.Cut(l, " ")
		switch instr {
		case "USER":
			user = rest
		case "ENTRYPOINT":
			entrypoint = rest
		case "COPY":
			copied = copied || strings.Contains(rest, "--from="+build.name+" ")
		case "RUN":
			t.Errorf("the image stage runs %q: a distroless image has no shell", l)
		}
	}
	if !copied {
		t.Errorf("the image does not COPY --from=%s", build.name)
	}
	uid, _, _ := strings.Cut(user, ":")
	if user == "" || uid == "0" || uid == "root" {
		t.Errorf("USER is %q: the image must run as a non-root user", user)
	}
	if entrypoint != `["/mcpform"]` {
		t.Errorf("ENTRYPOINT is %s, want [\"/mcpform\"]", entrypoint)
	}
	// What release.sh -binary builds is what the release builds: the same
	// build function, which TestRelease checks for CGO_ENABLED=0 and
	// -trimpath. Build with it here the way the Dockerfile does, without
	// .git (MCPFORM_COMMIT, MCPFORM_DATE), and check the stamp.
	if testing.Short() {
		return
	}
	bin := filepath.Join(t.TempDir(), "mcpform")
	releaseScript(t, []string{"MCPFORM_COMMIT=0123456789abcdef0123456789abcdef01234567", "MCPFORM_DATE=2026-01-02T03:04:05Z"},
		"-binary", bin, "-version", "9.8.7")
	checkReleaseBinary(t, bin, buildStamp{Version: "9.8.7", Commit: "0123456789abcdef0123456789abcdef01234567",
		Date: "2026-01-02T03:04:05Z", Source: "release", GoVersion: runtime.Version(), Platform: runtime.GOOS + "_" + runtime.GOARCH})
}
