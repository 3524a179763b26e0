package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// sourceVersion is the version of this source tree: what a build reports
// when neither the release build nor the Go module system told it better.
// Bump it with each release tag.
const sourceVersion = "0.1.0"

// Set by a release build, as scripts/release.sh and .goreleaser.yaml do:
//
//	-ldflags "-X main.buildVersion=0.2.0 -X main.buildCommit=<sha> -X main.buildDate=<RFC 3339>"
//
// -X can set only package-level string variables, hence these three; nothing
// writes them at run time.
var (
	buildVersion string
	buildCommit  string
	buildDate    string
)

// version is mcpform's own version, without a leading "v": what
// required_version is checked against, what the lock's generator and SARIF's
// tool.driver.version say.
var version = currentBuild().Version

// buildStamp is what `mcpform version` reports.
type buildStamp struct {
	Version string `json:"version"`
	// Commit is the full revision the binary was built from; "" when the
	// build recorded none (go install module@version records none).
	Commit string `json:"commit"`
	// Modified is set when the working tree had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// Date is the commit's time (RFC 3339, UTC), as goreleaser's
	// {{.CommitDate}} and Go's vcs.time; "" when unknown.
	Date string `json:"date"`
	// Source says where Version came from: "release" (ldflags), "module"
	// (go install …@vX.Y.Z), "source" (sourceVersion).
	Source    string `json:"source"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

func currentBuild() buildStamp {
	bi, _ := debug.ReadBuildInfo()
	return resolveBuild(buildVersion, buildCommit, buildDate, bi)
}

// pseudoVersion matches the tail of a Go pseudo-version,
// "v0.0.0-20260102150405-abcdef123456" and its two other forms, capturing
// the commit time and the 12-digit revision prefix.
var pseudoVersion = regexp.MustCompile(`[-.](\d{14})-([0-9a-f]{12})(?:\+incompatible)?$`)

// releaseVersion matches what a release may be called: semver with an
// optional pre-release and build metadata, with or without the "v".
var releaseVersion = regexp.MustCompile(`^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$`)

// resolveBuild decides what the binary reports, from the three ldflags
// values and the build info Go embeds. Each of version, commit and date is
// taken from the first source that has it:
//
//   - the ldflags of a release build;
//   - the module version of `go install github.com/mcpform/mcpform/cmd/mcpform@vX.Y.Z`,
//     or the commit and time inside a pseudo-version (…@main, …@<sha>);
//   - the vcs.revision, vcs.time and vcs.modified Go stamps when it builds
//     inside a git checkout (go build without -buildvcs=false);
//   - sourceVersion, and no commit or date.
//
// A pseudo-version or a "(devel)" build is not a release: its version is
// sourceVersion, so that required_version constraints keep working.
func resolveBuild(ldVersion, ldCommit, ldDate string, bi *debug.BuildInfo) buildStamp {
	b := buildStamp{Version: sourceVersion, Source: "source", GoVersion: runtime.Version(), Platform: runtime.GOOS + "_" + runtime.GOARCH}
	var vcsRev, vcsTime string
	var vcsModified bool
	if bi != nil {
		if bi.GoVersion != "" {
			b.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				vcsRev = s.Value
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				vcsModified = s.Value == "true"
			}
		}
		mv := strings.TrimSuffix(bi.Main.Version, "+dirty")
		if m := pseudoVersion.FindStringSubmatch(mv); m != nil {
			if vcsRev == "" {
				vcsRev = m[2]
			}
			if t, err := time.Parse("20060102150405", m[1]); vcsTime == "" && err == nil {
				vcsTime = t.UTC().Format(time.RFC3339)
			}
		} else if m := releaseVersion.FindStringSubmatch(mv); m != nil {
			b.Version, b.Source = m[1], "module"
		}
		if strings.HasSuffix(bi.Main.Version, "+dirty") {
			vcsModified = true
		}
	}
	if m := releaseVersion.FindStringSubmatch(ldVersion); m != nil {
		b.Version, b.Source = m[1], "release"
	}
	b.Commit, b.Date, b.Modified = vcsRev, vcsTime, vcsModified
	if ldCommit != "" {
		b.Commit, b.Modified = ldCommit, false
	}
	if ldDate != "" {
		b.Date = ldDate
	}
	return b
}

type versionFlags struct {
	json bool
}

func parseVersionFlags(args []string, stderr io.Writer) (versionFlags, error) {
	var f versionFlags
	fs := newFlagSet("version", stderr, `Usage: mcpform version [-json]

Prints mcpform's version, the commit and commit date it was built from, and the Go
version and platform. Release binaries carry all of them; `+"`go install …@vX.Y.Z`"+` knows
the version but no commit; a build in a git checkout knows the commit.
`)
	fs.BoolVar(&f.json, "json", false, "print the version, commit, date, Go version and platform as JSON")
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcpform version takes no arguments (got %q)\n", fs.Arg(0))
		return f, fmt.Errorf("arguments")
	}
	return f, nil
}

func runVersion(_ context.Context, io *stdio, f versionFlags) int {
	b := currentBuild()
	if f.json {
		data, _ := json.MarshalIndent(b, "", "  ")
		fmt.Fprintf(io.out, "%s\n", data)
		return exitOK
	}
	writeVersion(io.out, b)
	return exitOK
}

// displayVersion is the version as a person reads it: a build that no
// release or tagged module stamped is a development build of the source,
// "0.1.0-dev". Only the display says so: Version stays sourceVersion, since
// in semver 0.1.0-dev sorts before 0.1.0 and would fail a required_version
// of ">= 0.1.0" that the same source meets.
func (b buildStamp) displayVersion() string {
	if b.Source == "source" {
		return b.Version + "-dev"
	}
	return b.Version
}

// writeVersion prints the human form. A release's first line is
// "mcpform vX.Y.Z", which the GitHub Action and scripts read; a development
// build's says that it is one, so that nobody takes it for the release of
// the same number.
func writeVersion(w io.Writer, b buildStamp) {
	if b.Source == "source" {
		fmt.Fprintf(w, "mcpform v%s (development build, not a release)\n", b.displayVersion())
	} else {
		fmt.Fprintf(w, "mcpform v%s\n", b.displayVersion())
	}
	switch {
	case b.Commit == "":
		fmt.Fprintln(w, "commit unknown (built without version control information)")
	case b.Modified:
		fmt.Fprintf(w, "commit %s (with uncommitted changes)\n", b.Commit)
	default:
		fmt.Fprintf(w, "commit %s\n", b.Commit)
	}
	if b.Date != "" {
		fmt.Fprintf(w, "date   %s\n", b.Date)
	}
	fmt.Fprintf(w, "built  with %s for %s\n", b.GoVersion, b.Platform)
}
