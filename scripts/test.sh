#!/usr/bin/env bash
# The test command: installs everything the tests need on a machine that has
# only Go, Node, npm and git, then runs every test. CI runs exactly this
# (.ci/run), and so can you: bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== installing the pinned npm reference servers and the inspector (testdata/npm)"
# npm install, not npm ci: the inspector pulls in vite, whose optional
# dependency napi-windows-process-start-time the registry does not serve, and
# npm ci refuses a lock without it. npm install keeps every version pinned in
# package-lock.json (the lock is left unchanged) and skips the missing one.
(cd testdata/npm && npm install --no-audit --no-fund --loglevel=error)

echo "== downloading Go modules"
go mod download

echo "== go vet"
go vet ./...

echo "== go test"
go test -count=1 -timeout 20m ./...

echo "== the proxy's tests again under the race detector"
# The race detector needs a C compiler (cgo).
if ! command -v gcc >/dev/null; then
  echo "installing gcc for the race detector"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc >/dev/null
fi
CGO_ENABLED=1 go test -race -count=1 -timeout 20m ./runtime/ ./internal/proxymodel/

echo "== fuzzing every fuzz target briefly"
FUZZTIME="${FUZZTIME:-5s}" bash scripts/fuzz.sh

echo "== all tests passed"
