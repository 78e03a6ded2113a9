#!/usr/bin/env bash
# The storefront's one test command. It installs and starts what the tests
# need (PostgreSQL, the pinned npm packages, Chromium), then runs go vet,
# the whole Go test suite and the AdCP storyboards. .ci/run calls it with
# CI=true, under which tests that cannot find what they need fail instead
# of skipping. A failed step does not stop the later ones, so go vet and
# go test always run; the script exits non-zero if any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n==> %s\n' "$*"; }
failed=()
step() { # step NAME COMMAND...: run a step, remembering a failure
  local name="$1"; shift
  "$@" || { echo "FAILED: $name"; failed+=("$name"); }
}

# PostgreSQL: start the local cluster if it is down, then point the tests
# at it. A database of the caller's choosing wins.
say "PostgreSQL"
if [ -z "${STOREFRONT_TEST_DATABASE_URL:-}" ]; then
  export STOREFRONT_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
  if command -v pg_isready >/dev/null 2>&1; then
    if ! pg_isready -q -h 127.0.0.1 -p 5432; then
      if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
        echo "starting the local PostgreSQL cluster"
        pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
      fi
      for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
    fi
    pg_isready -h 127.0.0.1 -p 5432 || echo "PostgreSQL is not reachable: database tests will skip (or fail under CI=true)"
  else
    echo "pg_isready not found: database tests will skip (or fail under CI=true)"
  fi
fi

# The real buyer client, pinned by e2e/package-lock.json, and the Node
# peer the load benchmark compares against, pinned by its own lock file.
say "npm packages (e2e/, bench/peer-node/)"
if command -v npm >/dev/null 2>&1; then
  step "npm ci in e2e/" npm ci --prefix e2e --no-audit --no-fund --loglevel=error
  step "npm ci in bench/peer-node/" npm ci --prefix bench/peer-node --no-audit --no-fund --loglevel=error
else
  echo "npm not found: end-to-end tests with the @adcp/sdk client will skip (or fail under CI=true)"
fi

# Headless Chromium for the console's browser tests (e2e/console_test.go).
say "Chromium"
if command -v chromium >/dev/null 2>&1; then
  chromium --version 2>/dev/null || true
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y chromium || { apt-get update && apt-get install -y chromium; } ||
    echo "installing chromium failed: the console's browser tests will skip (or fail under CI=true)"
else
  echo "chromium not found: the console's browser tests will skip (or fail under CI=true)"
fi

say "go.mod is tidy"
# go.mod and go.sum must say exactly what the code imports (-diff prints
# what tidy would change and fails; it changes nothing).
step "go mod tidy" go mod tidy -diff

say "go vet"
step "go vet" go vet ./...

say "go test"
# e2e runs the real binary and the Node client; on a loaded 2-core machine
# it can pass 10 minutes, go test's default per-package limit.
step "go test" go test -count=1 -timeout 15m ./...

say "go test with the clock moved (scripts/test-clock-shift.sh)"
# The part of the any-date check cheap enough for every run: the
# machine's clock, as Go reads it, two years back and the tests' pinned
# clock five years on, over the clock rule and the overlay's own check
# (internal/clock), both stores' conformance suite, and the program run
# on moved clocks (agent, admin). The whole suite moved is a separate
# command (README, "Tests on any date").
step "go test, clock moved" env STOREFRONT_TEST_CLOCK_SHIFT=+5y ./scripts/test-clock-shift.sh -2y -timeout 15m \
  ./internal/clock ./store/... ./agent ./admin

say "fuzzing, a short budget (scripts/fuzz.sh)"
# Every fuzz target (whole-path dispatch, admin writes, request decoding,
# the composer, the screen) for FUZZTIME each, on one worker: enough to
# replay the seed corpora and catch a regression they reach. The long run
# (30 minutes a target) and its figures are in the README. A fresh cache
# folder, so that the budget fuzzes from the committed seeds whatever this
# machine fuzzed before.
fuzzcache="$(mktemp -d)"
step "fuzz" env FUZZTIME="${FUZZTIME:-15s}" FUZZCACHE="$fuzzcache" ./scripts/fuzz.sh
rm -rf "$fuzzcache"

say "AdCP storyboards (stock and fixed @adcp/sdk runner, sandbox binary)"
step "storyboards" ./scripts/storyboards.sh

if [ "${#failed[@]}" -gt 0 ]; then
  printf '\nfailed: %s\n' "${failed[*]}"
  exit 1
fi
echo
echo "all tests passed"
