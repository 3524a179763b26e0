#!/usr/bin/env bash
# release.sh builds mcpform's release archives the way .goreleaser.yaml does,
# with nothing but Go, git, tar, gzip and zip: the same six targets, the same
# flags, the same archive names and a checksums.txt in sha256sum's format.
# CI runs it for a snapshot (cmd/mcpform's TestReleaseScript), because
# installing goreleaser from the module proxy takes far longer than CI can
# spend on it; real releases may use either (see .goreleaser.yaml).
#
#   scripts/release.sh [-snapshot] [-version X.Y.Z] [-out DIR] [-targets "OS/ARCH ..."]
#       Build every target (default: all six) into DIR (default: dist):
#       mcpform_<version>_<os>_<arch>.tar.gz (.zip for windows), each holding
#       the binary, LICENSE, README.md and CHANGELOG.md, and checksums.txt.
#   scripts/release.sh -binary PATH [-version X.Y.Z]
#       Build one binary for $GOOS/$GOARCH (default: this machine), with the
#       same flags: what the Dockerfile runs.
#   scripts/release.sh -print-targets | -print-ldflags
#       Print the default targets, or the ldflags template, one per line, for
#       the tests that hold .goreleaser.yaml and the Dockerfile to this script.
#
# The version is -version, else X.Y.Z when HEAD is tagged vX.Y.Z (and
# -snapshot is not given), else a snapshot: the latest tag's version (the
# source's before the first tag) with build metadata,
# 0.1.0+snapshot.<short commit>, which sorts as 0.1.0 so that
# required_version constraints still hold. Commit and date come from git
# (the commit's own date, so that a rebuild is byte-identical), or from
# MCPFORM_COMMIT and MCPFORM_DATE where there is no .git (a container build).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"
PKG=./cmd/mcpform
# -s -w: no symbol table or DWARF (a third of the size); -X: the build stamp
# `mcpform version` reports (cmd/mcpform/version.go).
LDFLAGS_TEMPLATE='-s -w -X main.buildVersion={{.Version}} -X main.buildCommit={{.Commit}} -X main.buildDate={{.CommitDate}}'

snapshot=false version="" out=dist targets="$TARGETS" binary=""
while [ $# -gt 0 ]; do
  case "$1" in
    -snapshot) snapshot=true ;;
    -version) version="${2:?-version needs a value}"; shift ;;
    -out) out="${2:?-out needs a directory}"; shift ;;
    -targets) targets="${2:?-targets needs a list}"; shift ;;
    -binary) binary="${2:?-binary needs a path}"; shift ;;
    -print-targets) printf '%s\n' $TARGETS; exit 0 ;;
    -print-ldflags) printf '%s\n' "$LDFLAGS_TEMPLATE"; exit 0 ;;
    -h|-help|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "release.sh: unknown argument $1 (see -h)" >&2; exit 1 ;;
  esac
  shift
done

have_git=false
if git rev-parse --git-dir >/dev/null 2>&1; then have_git=true; fi
commit="${MCPFORM_COMMIT:-}"
date="${MCPFORM_DATE:-}"
if $have_git; then
  [ -n "$commit" ] || commit="$(git rev-parse HEAD)"
  [ -n "$date" ] || date="$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd HEAD)"
fi
[ -n "$commit" ] || commit=unknown
[ -n "$date" ] || date="1970-01-01T00:00:00Z"

if [ -z "$version" ] && ! $snapshot && $have_git; then
  if tag="$(git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null)"; then
    version="${tag#v}"
  fi
fi
if [ -z "$version" ]; then
  # As goreleaser's snapshot.version_template: the latest tag's version,
  # "+snapshot." and the short commit. Before the first tag, the source's
  # own version (goreleaser would say 0.0.0, which fails required_version).
  base=""
  if $have_git && tag="$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null)"; then
    base="${tag#v}"
  else
    base="$(sed -n 's/^const sourceVersion = "\(.*\)"$/\1/p' cmd/mcpform/version.go)"
  fi
  [ -n "$base" ] || { echo "release.sh: no tag and no sourceVersion in cmd/mcpform/version.go" >&2; exit 1; }
  version="${base%%+*}+snapshot"
  if $have_git && [ -z "${MCPFORM_COMMIT:-}" ]; then
    version="$version.$(git rev-parse --short HEAD)"
  elif [ "$commit" != unknown ]; then
    version="$version.${commit:0:7}"
  fi
fi
version="${version#v}"
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$ ]]; then
  echo "release.sh: version $version is not semver (X.Y.Z[-pre][+meta])" >&2
  exit 1
fi

ldflags="$LDFLAGS_TEMPLATE"
ldflags="${ldflags//\{\{.Version\}\}/$version}"
ldflags="${ldflags//\{\{.Commit\}\}/$commit}"
ldflags="${ldflags//\{\{.CommitDate\}\}/$date}"

# build OS ARCH OUTPUT: one static binary. CGO_ENABLED=0: no libc to match on
# the user's machine (the sandbox's psx works without cgo); -trimpath: no
# build machine paths in the binary; GOFLAGS cleared so that the caller's
# environment cannot add flags the release does not have.
build() {
  CGO_ENABLED=0 GOOS="$1" GOARCH="$2" GOFLAGS= go build -trimpath -ldflags="$ldflags" -o "$3" "$PKG"
}

if [ -n "$binary" ]; then
  build "$(go env GOOS)" "$(go env GOARCH)" "$binary"
  echo "built $binary: mcpform $version ($commit, $date) for $(go env GOOS)/$(go env GOARCH)"
  exit 0
fi

# Reproducible archives: entries sorted, owned by 0:0, dated at the commit.
epoch="$(date -u -d "$date" +%s 2>/dev/null || echo 0)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
archives=()
for t in $targets; do
  os="${t%/*}" arch="${t#*/}"
  name="mcpform_${version}_${os}_${arch}"
  exe=mcpform
  [ "$os" = windows ] && exe=mcpform.exe
  dir="$stage/$name"
  mkdir -p "$dir"
  start=$SECONDS
  build "$os" "$arch" "$dir/$exe"
  for f in LICENSE README.md CHANGELOG.md; do cp "$f" "$dir/"; done
  touch -d "@$epoch" "$dir"/*
  if [ "$os" = windows ]; then
    archive="$name.zip"
    rm -f "$out/$archive"
    (cd "$dir" && zip -q -X "$out/$archive" $exe LICENSE README.md CHANGELOG.md)
  else
    archive="$name.tar.gz"
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
      -C "$dir" -cf - $exe LICENSE README.md CHANGELOG.md | gzip -n -9 >"$out/$archive"
  fi
  archives+=("$archive")
  echo "$archive: $(($(stat -c %s "$dir/$exe") / 1024)) KiB binary, $(($(stat -c %s "$out/$archive") / 1024)) KiB archive, $((SECONDS - start)) s"
done
(cd "$out" && sha256sum "${archives[@]}" >checksums.txt)
echo "mcpform $version ($commit, $date): ${#archives[@]} archives and checksums.txt in $out"
