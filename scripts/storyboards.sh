#!/usr/bin/env bash
# Runs the official AdCP storyboards that concern this seller against the
# real storefront binary in sandbox mode, on two runners, as
# e2e/storyboards.json lists them:
#
#  - STOCK: @adcp/sdk 6.11.0 as pinned in e2e/package-lock.json, on the
#    storyboards it can grade. It fails on any failed check but the ones
#    storyboards.json excuses, each for a named defect.
#  - FIXED: the same runner with its defects worked around: the copy
#    ../shared/tools/adcp-runner-fixes/build.sh builds, with this project's
#    e2e/runner-fixes.diff applied on top, in .cache/ (which git ignores),
#    on the storyboards the stock runner cannot grade. No failure is
#    tolerated.
#
# The seeded media-buy storyboards run once more on the stock runner as
# another principal against the same server, as a second run of the list
# would: each sandbox seeds the same fixture ids.
#
# The README's storyboard table says which storyboard runs where and why;
# a run checks the table's cells for what it ran, so the table cannot
# drift. scripts/test.sh calls this; it can also run alone. --report runs
# every storyboard on both runners without failing and rewrites the
# README's table from the results (also kept in .cache/).
set -euo pipefail
cd "$(dirname "$0")/.."

SPEC="${ADCP_SPEC_DIR:-../shared/adcp-spec}"
FIXES="${ADCP_RUNNER_FIXES_DIR:-../shared/tools/adcp-runner-fixes}"
C="$SPEC/compliance"
if [ ! -d "$C" ]; then
  echo "AdCP compliance storyboards not found at $C: the spec folder (../shared/adcp-spec beside the repository, from github.com/adcontextprotocol/adcp) holds them; put it there or set ADCP_SPEC_DIR" >&2
  exit 1
fi
C="$(cd "$C" && pwd)"
SCHEMAS="$(cd "$SPEC/schemas" && pwd)"
if [ ! -d e2e/node_modules/@adcp/sdk ]; then
  (cd e2e && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ ! -x "$FIXES/build.sh" ]; then
  echo "the runner fixes are not at $FIXES (build.sh): cannot build the fixed runner" >&2
  exit 1
fi
# One folder per version of the two patch sets, so that a changed patch
# gets a fresh copy rather than one patched twice.
sum="$(cat "$FIXES/fixes.diff" e2e/runner-fixes.diff | sha256sum | cut -c1-12)"
FIXED_DIR="$PWD/.cache/adcp-runner-fixed-$sum"
if [ ! -f "$FIXED_DIR/.patched" ]; then
  "$FIXES/build.sh" "$FIXED_DIR" >/dev/null
  patch -s -p1 -N -d "$FIXED_DIR" < e2e/runner-fixes.diff
  grep -q 'PATCH(storefront)' "$FIXED_DIR/node_modules/@adcp/sdk/dist/lib/testing/storyboard/runner.js" ||
    { echo "e2e/runner-fixes.diff did not apply to $FIXED_DIR" >&2; exit 1; }
  touch "$FIXED_DIR/.patched"
fi

report=""
stock=stock fixed=fixed
if [ "${1:-}" = "--report" ]; then
  report="--report"
  stock=all fixed=all
fi

work="$(mktemp -d)"
trap 'kill "${pid:-0}" 2>/dev/null || true; wait "${pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/storefront" ./cmd/storefront
# Created before the server starts: the background redirect may not have
# opened it yet when the loop below first reads it.
: >"$work/out.log"
# --async-discovery: briefs that register a webhook become tasks whose
# answer arrives by a signed webhook, the path webhook-emission grades.
"$work/storefront" serve --sandbox --async-discovery --addr 127.0.0.1:0 >>"$work/out.log" 2>&1 &
pid=$!
addr=""
for _ in $(seq 1 100); do
  addr="$(sed -n 's/.*"storefront serving" addr=\([^ ]*\).*/\1/p' "$work/out.log" | head -1)"
  [ -n "$addr" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/out.log"; echo "the storefront exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$addr" ] || { cat "$work/out.log"; echo "the storefront did not start" >&2; exit 1; }

# The compliance test kit's sandbox key (demo-acme-outdoor-v1), to which
# each storyboard appends its runner label and id; the mode gate's steps
# use the kit's live key themselves.
common=(--url "http://$addr/mcp" --token demo-acme-outdoor-v1 --spec "$C")
status=0
(cd e2e && node storyboards.mjs "${common[@]}" --label stock $report --select "$stock" --out "$work/stock.json") || status=$?
if [ -z "$report" ]; then
  (cd e2e && node storyboards.mjs "${common[@]}" --label again --select again --out "$work/again.json") || status=$?
fi
(cd e2e && SBV_SKIP_REQ_VALIDATION=1 SBV_ADVISORY_ERRORS_OK=1 SBV_SPEC_SCHEMAS="$SCHEMAS" node storyboards.mjs "${common[@]}" \
  --runner "$FIXED_DIR" --label fixed --strict $report --select "$fixed" --out "$work/fixed.json") || status=$?
table=(README.md --spec "$C" --stock "$work/stock.json" --fixed "$work/fixed.json")
if [ -n "$report" ]; then
  mkdir -p .cache && cp "$work/stock.json" "$work/fixed.json" .cache/
  node e2e/storyboard-table.mjs --write "${table[@]}"
  echo "results: .cache/stock.json, .cache/fixed.json; the README's storyboard table is rewritten from them"
else
  node e2e/storyboard-table.mjs --check "${table[@]}" || status=$?
fi
if [ "$status" -ne 0 ]; then
  echo "--- storefront log ---"; tail -50 "$work/out.log"
fi
exit "$status"
