#!/usr/bin/env bash
# Mutation checks (docs/GUARANTEES.md): for each protection, build with
# -tags mcpform_mutation, switch that one protection off with
# MCPFORM_MUTATION=<name> (internal/mutation), and run the tests that stand
# for it. A protection whose tests still pass without it is a mutation that
# survived: a missing test. Exits non-zero if any survives, or if the tests
# fail even with nothing switched off.
#
#   bash scripts/mutation.sh            # every mutation
#   bash scripts/mutation.sh taint      # only the named ones
set -uo pipefail
cd "$(dirname "$0")/.."

# name | packages | tests (-run)
mutations=(
  "lockserve|./internal/proxymodel ./runtime ./internal/e2e|^(TestProxyMatchesModel|TestTranscripts|TestHostileModes)\$"
  "argcheck|./internal/proxymodel ./runtime ./internal/e2e|^(TestProxyMatchesModel|TestTranscripts|TestHostileModes)\$"
  "casekeys|./internal/proxymodel ./runtime ./internal/e2e|^(TestProxyMatchesModel|TestProxySeeds|TestTranscripts|TestHostileModes)\$"
  "inputrequests|./internal/proxymodel ./runtime ./internal/e2e|^(TestProxyMatchesModel|TestTranscripts|TestHostileModes)\$"
  "quarantine|./internal/proxymodel ./runtime ./internal/e2e|^(TestProxyMatchesModel|TestTranscripts|TestHostileModes)\$"
  "taint|./internal/proxymodel ./runtime ./internal/e2e|^(TestProxyMatchesModel|TestTaintHostileInjectedSinkCall|TestHostileModes)\$"
  "landlock|./runtime/sandbox ./internal/e2e|^(TestHostileServer|TestHostileModes)\$"
  "seccomp|./runtime/sandbox|^(TestHostileServer)\$"
  "netns|./runtime/sandbox|^(TestHostileServer|TestNoNetwork)\$"
  "egress|./runtime/egress ./runtime/sandbox ./internal/e2e|^(TestPolicy|TestHostileServer|TestHostileModes)\$"
  "auditchain|./runtime ./internal/proxymodel|^(TestAuditConcurrentAppends|TestProxyMatchesModel)\$"
  "envwithheld|./mcp ./internal/e2e|^(TestStartPassesOnlyNamedEnv|TestHostileModes)\$"
)

only=("$@")
selected=()
for m in "${mutations[@]}"; do
  name=${m%%|*}
  if [ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " == *" $name "* ]]; then
    selected+=("$m")
  fi
done

# Property-test sessions per run under mutation: enough to meet each rule.
export MCPFORM_PROP_SESSIONS="${MCPFORM_PROP_SESSIONS:-1500}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run() { # name pkgs tests
  MCPFORM_MUTATION="$1" go test -tags mcpform_mutation -count=1 -run "$3" $2 >"$log" 2>&1
}

echo "== baseline: the same tests with the hooks compiled in and nothing switched off"
allpkgs=$(for m in "${selected[@]}"; do IFS='|' read -r _ pkgs _ <<<"$m"; echo $pkgs; done | tr ' ' '\n' | sort -u | paste -sd' ' -)
alltests=$(for m in "${selected[@]}"; do IFS='|' read -r _ _ tests <<<"$m"; t=${tests#^(}; echo "${t%)\$}"; done | tr '|' '\n' | sort -u | paste -sd'|' -)
if ! run "" "$allpkgs" "^($alltests)\$"; then
  echo "the tests fail with nothing switched off:"; cat "$log"; exit 1
fi

killed=0
survived=()
for m in "${selected[@]}"; do
  IFS='|' read -r name pkgs tests <<<"$m"
  start=$(date +%s)
  if run "$name" "$pkgs" "$tests"; then
    echo "SURVIVED $name: $pkgs -run '$tests' passed with it switched off"
    survived+=("$name")
  else
    failing=$(grep -E -- '^\s*--- FAIL' "$log" | sed -E 's/^\s*--- FAIL: ([^ ]+).*/\1/' | head -4 | paste -sd' ' -)
    echo "killed   $name ($(( $(date +%s) - start ))s) by ${failing:-a failing package}"
    killed=$((killed + 1))
  fi
done
echo "killed $killed of ${#selected[@]}"
[ ${#survived[@]} -eq 0 ]
