#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME (default 5s) each, on top
# of its checked-in seed corpus (testdata/fuzz/FuzzXxx). A failure leaves the
# crashing input in testdata/fuzz for a regression seed.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-5s}"
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "-- $pkg $target ($fuzztime)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" >/tmp/mcpform-fuzz.log 2>&1 || { cat /tmp/mcpform-fuzz.log; exit 1; }
  done
done
