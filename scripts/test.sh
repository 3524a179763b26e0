#!/usr/bin/env bash
# The test command: installs everything the tests need on a machine that has
# only Go, Node, npm and git, then runs every test. CI runs exactly this
# (.ci/run), and so can you: bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== installing the pinned npm reference servers, the inspector (v2 and the v1 CLI), the conformance suite and Node 22 (testdata/npm)"
# npm install, not npm ci: the inspector pulls in vite, whose optional
# dependency napi-windows-process-start-time the registry does not serve, and
# npm ci refuses a lock without it. npm install keeps every version pinned in
# package-lock.json (the lock is left unchanged) and skips the missing one.
(cd testdata/npm && npm install --no-audit --no-fund --loglevel=error)
# Without them the tests that run them skip (CI=true makes them fail
# instead); here the install has just run, so a missing one is its failure.
for bin in mcp-inspector mcp-inspector-cli mcp-server-everything mcp-server-filesystem mcp-server-memory conformance supergateway node; do
  if [ ! -x "testdata/npm/node_modules/.bin/$bin" ]; then
    echo "npm install in testdata/npm did not install $bin (testdata/npm/node_modules/.bin/$bin)" >&2
    exit 1
  fi
done

echo "== downloading Go modules"
go mod download

echo "== go mod tidy -diff"
if ! go mod tidy -diff; then
  echo "go.mod and go.sum are not tidy: run go mod tidy and commit the result (above: what it would change)" >&2
  exit 1
fi

echo "== go vet"
go vet ./...

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './testdata/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change these files: run gofmt -w on them and commit the result:" >&2
  echo "$unformatted" >&2
  exit 1
fi

echo "== staticcheck"
# Pinned, so a new release cannot fail a commit that passed: 2026.2.2, the
# newest release, which supports Go 1.26. go run builds it from the module
# proxy into the build cache once (about 40 s with empty caches), then
# reuses it.
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

echo "== python3 with venv and pip, for the PyPI tests (pins/pypi, plan, run_pypi_tree)"
# They install real wheels with the real pip into venvs; a machine without
# python3 -m venv or python3 -m pip gets Debian's (pip 22.3 or later has
# --python, which they need).
# The sandboxed PyPI script runs Debian's own /usr/bin/python3, which the
# sandbox's system directories cover.
if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -m pip --version >/dev/null 2>&1 ||
  ! /usr/bin/python3 -m venv --help >/dev/null 2>&1 || ! /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
  echo "installing Debian's python3, python3-venv and python3-pip"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv python3-pip >/dev/null
fi

echo "== openssh-client, for the signed approvals' tests (approval, sign_review_flow)"
# They sign with the real ssh-keygen -Y sign and verify with ssh-keygen -Y
# verify, and hold a key in the real ssh-agent.
if ! command -v ssh-keygen >/dev/null || ! command -v ssh-agent >/dev/null || ! command -v ssh-add >/dev/null; then
  echo "installing Debian's openssh-client"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-client >/dev/null
fi

echo "== go test"
go test -count=1 -timeout 20m ./...

echo "== the proxy's tests again under the race detector"
# The race detector needs a C compiler (cgo).
if ! command -v gcc >/dev/null; then
  echo "installing gcc for the race detector"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc >/dev/null
fi
# The tests that drive the built mcpform binary with real clients (interop,
# conformance, the inspector matrix) run no proxy code in the test process:
# the race detector would see nothing of them, so they run once, above.
CGO_ENABLED=1 go test -race -count=1 -timeout 20m -skip '^(TestInterop|TestConformanceThroughRun|TestInspectorMatrix|TestTaintInspector)' ./runtime/ ./internal/proxymodel/

echo "== fuzzing every fuzz target briefly"
FUZZTIME="${FUZZTIME:-5s}" bash scripts/fuzz.sh

echo "== all tests passed"
