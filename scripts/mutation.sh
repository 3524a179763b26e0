#!/usr/bin/env bash
# Mutation checks (docs/GUARANTEES.md): for each protection, build with
# -tags mcpform_mutation, switch that one protection off with
# MCPFORM_MUTATION=<name> (internal/mutation), and run the tests that stand
# for it. A protection whose tests still pass without it is a mutation that
# survived: a missing test. Exits non-zero if any survives, if the tests
# fail even with nothing switched off, or if a mutation's tests do not build
# (a build failure kills nothing).
#
#   bash scripts/mutation.sh            # every mutation
#   bash scripts/mutation.sh taint      # only the named ones
#
# The whole script is one braced block, so bash reads all of it before it
# runs any: an edit to this file during a run cannot change the run.
{
set -uo pipefail
cd "$(dirname "$0")/.."

# name | packages | tests (-run)
mutations=(
  "lockserve|./internal/proxymodel ./runtime ./internal/e2e|^(TestProxyMatchesModel|TestTranscripts|TestHostileModes)\$"
  "argcheck|./internal/proxymodel ./runtime ./internal/e2e|^(TestProxyMatchesModel|TestTranscripts|TestHostileModes)\$"
  "outputcheck|./internal/proxymodel ./runtime ./runtime/enforce ./internal/e2e|^(TestProxyMatchesModel|TestTranscripts|TestCheckResult|TestHostileModes)\$"
  "casekeys|./internal/proxymodel ./runtime ./internal/e2e|^(TestProxyMatchesModel|TestProxySeeds|TestTranscripts|TestHostileModes)\$"
  "inputrequests|./internal/proxymodel ./runtime ./internal/e2e|^(TestProxyMatchesModel|TestTranscripts|TestHostileModes)\$"
  "quarantine|./internal/proxymodel ./runtime ./internal/e2e|^(TestProxyMatchesModel|TestTranscripts|TestHostileModes)\$"
  "blockchanged|./internal/proxymodel ./runtime ./internal/e2e|^(TestProxyMatchesModel|TestTranscripts|TestHostileModes)\$"
  "expose|./internal/proxymodel ./runtime ./internal/e2e|^(TestProxyMatchesModel|TestTranscripts|TestHostileModes)\$"
  "taint|./internal/proxymodel ./runtime ./internal/e2e|^(TestProxyMatchesModel|TestTaintHostileInjectedSinkCall|TestHostileModes)\$"
  "landlock|./runtime/sandbox ./internal/e2e|^(TestHostileServer|TestHostileModes)\$"
  "seccomp|./runtime/sandbox|^(TestHostileServer)\$"
  "netns|./runtime/sandbox|^(TestHostileServer|TestNoNetwork)\$"
  "mountns|./runtime/sandbox|^(TestHostileServer|TestViewHidesOutside)\$"
  "memfd|./runtime/sandbox|^(TestHostileServer)\$"
  "limits|./runtime/sandbox|^(TestLimits)\$"
  "dupcloexec|./runtime|^(TestPollableIsCloseOnExec)\$"
  "fdsweep|./mcp ./internal/e2e|^(TestStartPassesOnlyStdio|TestServerGetsOnlyStdio)\$"
  "reaptree|./mcp ./internal/e2e|^(TestServerExitEndsDescendants)\$"
  "watchexit|./runtime|^(TestServerExitWhileItsOutputIsHeld)\$"
  "outcomefirst|./runtime|^(TestAuditOutcomeBeforeResult)\$"
  "egress|./runtime/egress ./runtime/sandbox ./internal/e2e|^(TestPolicy|TestHostileServer|TestHostileModes)\$"
  "relaytokens|./runtime|^(TestTaintForgedRelayRetry|TestTranscripts)\$"
  "taskids|./runtime|^(TestTranscripts|TestTaintTaskResult)\$"
  "auditchain|./runtime/audit ./internal/proxymodel|^(TestAuditConcurrentAppends|TestProxyMatchesModel)\$"
  "envwithheld|./mcp ./internal/e2e|^(TestStartPassesOnlyNamedEnv|TestHostileModes)\$"
  "sessionverify|./mcp ./runtime|^(TestHTTPSessionReestablished|TestRemoteSessionReestablished|TestRemoteSessionNewInstructions)\$"
  "pins|./runtime|^(TestPinsRefuseStart)\$"
  "approvals|./cmd/mcpform|^(TestForgedLockWithRecomputedDigests)\$"
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

# failures names what failed in $log: each failing test under its package
# (a parent whose subtests failed through those subtests), and a package
# that failed with no "--- FAIL" line (a panic, a timeout, os.Exit, a build
# error) by its first panic, fatal or compiler line. A test may print NUL
# bytes (a hostile server's output does; grep then took the log for binary
# and named nothing), so NULs are dropped first; other control bytes in a
# quoted line print as "?".
failures() {
  tr -d '\000' <"$log" | awk -v max=6 '
    function short(p) { sub(/^github\.com\/mcpform\/mcpform\/?/, "", p); return p == "" ? "." : p }
    /^[ \t]*--- FAIL: / { tests[++n] = $3; next }
    /^(panic: |fatal error: |\*\*\* Test killed|test timed out|[^ \t]+\.go:[0-9]+:[0-9]+: )/ && why == "" {
      why = substr($0, 1, 100); gsub(/[^[:print:]]/, "?", why); next
    }
    /^FAIL[ \t]+[^ \t]/ {
      group = short($2) ":"
      if (n == 0) group = group " no --- FAIL line" (why == "" ? "" : " (" why ")")
      for (i = 1; i <= n; i++) {
        leaf = 1
        for (j = 1; j <= n; j++) if (index(tests[j], tests[i] "/") == 1) leaf = 0
        if (leaf && ++shown <= max) group = group " " tests[i]
      }
      out = out (out == "" ? "" : "; ") group
      n = 0; why = ""; next
    }
    /^ok[ \t]/ { n = 0; why = "" }
    END {
      if (shown > max) out = out sprintf(" and %d more", shown - max)
      print out
    }'
}

echo "== baseline: the same tests with the hooks compiled in and nothing switched off"
allpkgs=$(for m in "${selected[@]}"; do IFS='|' read -r _ pkgs _ <<<"$m"; echo $pkgs; done | tr ' ' '\n' | sort -u | paste -sd' ' -)
alltests=$(for m in "${selected[@]}"; do IFS='|' read -r _ _ tests <<<"$m"; t=${tests#^(}; echo "${t%)\$}"; done | tr '|' '\n' | sort -u | paste -sd'|' -)
if ! run "" "$allpkgs" "^($alltests)\$"; then
  echo "the tests fail with nothing switched off: $(failures)"; tr -d '\000' <"$log"; exit 1
fi

killed=0
survived=()
unbuilt=()
for m in "${selected[@]}"; do
  IFS='|' read -r name pkgs tests <<<"$m"
  start=$(date +%s)
  if run "$name" "$pkgs" "$tests"; then
    echo "SURVIVED $name: $pkgs -run '$tests' passed with it switched off"
    survived+=("$name")
  elif tr -d '\000' <"$log" | grep -qE '^FAIL[[:space:]].*\[(build|setup) failed\]'; then
    echo "ERROR    $name: the tests did not build, so nothing was killed: $(failures)"
    unbuilt+=("$name")
  else
    failing=$(failures)
    echo "killed   $name ($(( $(date +%s) - start ))s) by ${failing:-go test failing before any package ran: $(tr -d '\000' <"$log" | head -1 | cut -c1-100 | tr -c '[:print:]\n' '?')}"
    killed=$((killed + 1))
  fi
done
echo "killed $killed of ${#selected[@]}"
[ ${#survived[@]} -eq 0 ] && [ ${#unbuilt[@]} -eq 0 ]
exit
}
