package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpform/mcpform/lang"
)

// TestResolveBuild specifies where `mcpform version` takes each value from:
// the release's ldflags first, then the module version of go install
// …@vX.Y.Z (or the commit and time inside a pseudo-version), then the VCS
// stamps of a build in a checkout, then the source's own version.
func TestResolveBuild(t *testing.T) {
	platform := runtime.GOOS + "_" + runtime.GOARCH
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "1111111111111111111111111111111111111111"},
		{Key: "vcs.time", Value: "2026-11-30T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	info := func(version string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/mcpform/mcpform", Version: version}, Settings: settings}
	}
	tests := []struct {
		name          string
		ldv, ldc, ldd string
		bi            *debug.BuildInfo
		want          buildStamp
	}{
		{name: "release build", ldv: "0.2.0", ldc: "abcdef0123456789abcdef0123456789abcdef01", ldd: "2026-12-01T00:00:00Z",
			bi:   info("(devel)", vcs...),
			want: buildStamp{Version: "0.2.0", Commit: "abcdef0123456789abcdef0123456789abcdef01", Date: "2026-12-01T00:00:00Z", Source: "release", GoVersion: "go1.26.8", Platform: platform}},
		{name: "release build, v prefix and snapshot metadata", ldv: "v0.2.0+snapshot.abc1234", ldc: "abc", ldd: "2026-12-01T00:00:00Z",
			bi:   info("(devel)"),
			want: buildStamp{Version: "0.2.0+snapshot.abc1234", Commit: "abc", Date: "2026-12-01T00:00:00Z", Source: "release", GoVersion: "go1.26.8", Platform: platform}},
		{name: "ldflags that are not a version are ignored", ldv: "main",
			bi:   info("v0.3.1"),
			want: buildStamp{Version: "0.3.1", Source: "module", GoVersion: "go1.26.8", Platform: platform}},
		{name: "go install @vX.Y.Z",
			bi:   info("v0.3.1"),
			want: buildStamp{Version: "0.3.1", Source: "module", GoVersion: "go1.26.8", Platform: platform}},
		{name: "go install @v pre-release",
			bi:   info("v0.4.0-rc.1"),
			want: buildStamp{Version: "0.4.0-rc.1", Source: "module", GoVersion: "go1.26.8", Platform: platform}},
		{name: "go install @main: a pseudo-version is no release, but names the commit",
			bi:   info("v0.0.0-20261130153000-0123456789ab"),
			want: buildStamp{Version: sourceVersion, Commit: "0123456789ab", Date: "2026-11-30T15:30:00Z", Source: "source", GoVersion: "go1.26.8", Platform: platform}},
		{name: "pseudo-version after a tag",
			bi:   info("v0.2.1-0.20261130153000-0123456789ab"),
			want: buildStamp{Version: sourceVersion, Commit: "0123456789ab", Date: "2026-11-30T15:30:00Z", Source: "source", GoVersion: "go1.26.8", Platform: platform}},
		{name: "go build in a dirty checkout: the VCS stamps win over the pseudo-version's",
			bi:   info("v0.0.0-20261130153000-0123456789ab+dirty", vcs...),
			want: buildStamp{Version: sourceVersion, Commit: "1111111111111111111111111111111111111111", Modified: true, Date: "2026-11-30T10:00:00Z", Source: "source", GoVersion: "go1.26.8", Platform: platform}},
		{name: "ldflags commit over the VCS stamps: the release's commit is clean",
			ldc:  "2222222222222222222222222222222222222222",
			bi:   info("(devel)", vcs...),
			want: buildStamp{Version: sourceVersion, Commit: "2222222222222222222222222222222222222222", Date: "2026-11-30T10:00:00Z", Source: "source", GoVersion: "go1.26.8", Platform: platform}},
		{name: "-buildvcs=false: nothing but the source",
			bi:   info("(devel)"),
			want: buildStamp{Version: sourceVersion, Source: "source", GoVersion: "go1.26.8", Platform: platform}},
		{name: "no build info",
			want: buildStamp{Version: sourceVersion, Source: "source", GoVersion: runtime.Version(), Platform: platform}},
	}
	for _, tt := range tests {
		got := resolveBuild(tt.ldv, tt.ldc, tt.ldd, tt.bi)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestParseVersionFlags(t *testing.T) {
	testParse(t, parseVersionFlags, []parseCase[versionFlags]{
		{args: nil, want: versionFlags{}},
		{args: []string{"-json"}, want: versionFlags{json: true}},
		{args: []string{"extra"}, wantErr: true},
		{args: []string{"extra", "-json"}, wantErr: true},
		{args: []string{"-nope"}, wantErr: true},
	})
}

func TestWriteVersion(t *testing.T) {
	for _, tt := range []struct {
		b    buildStamp
		want string
	}{
		{buildStamp{Version: "0.2.0", Commit: "abc", Date: "2026-12-01T00:00:00Z", Source: "release", GoVersion: "go1.26.8", Platform: "linux_arm64"},
			"mcpform v0.2.0\ncommit abc\ndate   2026-12-01T00:00:00Z\nbuilt  with go1.26.8 for linux_arm64\n"},
		{buildStamp{Version: "0.3.1", Source: "module", GoVersion: "go1.26.8", Platform: "linux_amd64"},
			"mcpform v0.3.1\ncommit unknown (built without version control information)\nbuilt  with go1.26.8 for linux_amd64\n"},
		// A build of the source (a clone, go install …@main) is not the
		// release of the same number, and says so.
		{buildStamp{Version: "0.1.0", Commit: "abc", Modified: true, Source: "source", GoVersion: "go1.26.8", Platform: "darwin_amd64"},
			"mcpform v0.1.0-dev (development build, not a release)\ncommit abc (with uncommitted changes)\nbuilt  with go1.26.8 for darwin_amd64\n"},
		{buildStamp{Version: "0.1.0", Commit: "3ef4bfa", Date: "2026-11-30T10:00:00Z", Source: "source", GoVersion: "go1.26.8", Platform: "linux_amd64"},
			"mcpform v0.1.0-dev (development build, not a release)\ncommit 3ef4bfa\ndate   2026-11-30T10:00:00Z\nbuilt  with go1.26.8 for linux_amd64\n"},
		{buildStamp{Version: "0.1.0", Source: "source", GoVersion: "go1.26.8", Platform: "windows_amd64"},
			"mcpform v0.1.0-dev (development build, not a release)\ncommit unknown (built without version control information)\nbuilt  with go1.26.8 for windows_amd64\n"},
	} {
		var b bytes.Buffer
		writeVersion(&b, tt.b)
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("writeVersion(%+v) (-want +got):\n%s", tt.b, diff)
		}
	}
}

// TestDevelopmentBuildMeetsRequiredVersion: a development build shows
// "-dev", but required_version is checked against the source's version, so
// the configuration the source's own README shows (">= 0.1.0") still loads.
// In semver "0.1.0-dev" sorts before "0.1.0": checking the displayed string
// would refuse it.
func TestDevelopmentBuildMeetsRequiredVersion(t *testing.T) {
	b := resolveBuild("", "", "", &debug.BuildInfo{Main: debug.Module{Path: "github.com/mcpform/mcpform", Version: "(devel)"}})
	if b.Source != "source" || b.Version != sourceVersion {
		t.Fatalf("a (devel) build resolves to %+v, want the source's version", b)
	}
	if got, want := b.displayVersion(), sourceVersion+"-dev"; got != want {
		t.Errorf("displayVersion() = %q, want %q", got, want)
	}
	dir := t.TempDir()
	hcl := "mcpform {\n  required_version = \">= " + sourceVersion + "\"\n}\n\nserver \"time\" {\n  command = [\"mcp-server-time\"]\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "mcp.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{b.Version, "0.2.0"} {
		if _, diags := lang.Load(dir, lang.Options{Version: v}); diags.HasErrors() {
			t.Errorf("required_version \">= %s\" with mcpform %s: %v", sourceVersion, v, diags)
		}
	}
	// The check is real: an older release is refused.
	if _, diags := lang.Load(dir, lang.Options{Version: "0.0.9"}); !diags.HasErrors() {
		t.Errorf("required_version \">= %s\" accepted mcpform 0.0.9", sourceVersion)
	}
}
