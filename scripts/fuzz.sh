#!/usr/bin/env bash
# Runs every fuzz target of the storefront for a while each and prints one
# line per target: executions, new inputs found, and the result. Any
# failure (a panic, a 5xx, an answer of no defined arm, an accepted write
# that breaks serving) stops that target and fails the script, leaving the
# failing input under the package's testdata/fuzz/ to rerun with go test.
#
#   ./scripts/fuzz.sh              # 30 minutes per target (the long run)
#   FUZZTIME=15s ./scripts/fuzz.sh # what the test command runs
#   TARGETS="agent:FuzzDispatch" ./scripts/fuzz.sh
#   FUZZCACHE=/tmp/fresh ./scripts/fuzz.sh # start from the committed seeds only
#
# FUZZCACHE, when set, is the folder for the inputs fuzzing finds instead
# of Go's shared cache: a short budget then spends its time fuzzing from
# the committed seeds rather than replaying every input this machine's
# earlier runs kept (which on a machine that ran the long runs takes longer
# than the budget).
set -uo pipefail
cd "$(dirname "$0")/.."

fuzztime="${FUZZTIME:-30m}"
targets="${TARGETS:-agent:FuzzDispatch agent:FuzzFastPath admin:FuzzAdminWrites products:FuzzDecodeRequest jsonfield:FuzzUnmarshal decline:FuzzCompose sanitize:FuzzScreen}"
status=0
printf '%-28s %10s %14s %10s %s\n' target fuzztime executions new result
for t in $targets; do
  pkg="${t%%:*}" name="${t##*:}"
  log="$(mktemp)"
  # -parallel 1: one worker, so the figures do not depend on how many
  # cores the shared machine lends the run.
  cache=()
  if [ -n "${FUZZCACHE:-}" ]; then
    cache=(-test.fuzzcachedir="$FUZZCACHE")
  fi
  go test "./$pkg" -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" -parallel=1 "${cache[@]}" >"$log" 2>&1
  rc=$?
  last="$(grep -E '^fuzz: elapsed' "$log" | tail -1)"
  execs="$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")"
  new="$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")"
  result=ok
  if [ "$rc" -ne 0 ]; then
    result=FAILED
    status=1
  fi
  printf '%-28s %10s %14s %10s %s\n' "$pkg.$name" "$fuzztime" "${execs:-0}" "${new:-0}" "$result"
  if [ "$rc" -ne 0 ]; then
    grep -vE '^fuzz: elapsed' "$log" | head -60
  fi
  rm -f "$log"
done
exit "$status"
