#!/usr/bin/env bash
# Runs every test: installs missing system packages, builds, and runs the whole suite. The
# tests start their own PostgreSQL cluster and origin servers on loopback; nothing else is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
# gdb prints the stacks of a hung test run (deploy/watch-tests.sh); only the tests need it.
deploy/install-dependencies.sh gdb
# The webhook tests check deliveries with the Standard Webhooks project's reference verifier.
python3 -m pip install --quiet --disable-pip-version-check standardwebhooks
swift build --build-tests
# Swift Testing runs every test at once by default. Many of these tests start real transfers
# and webhook deliveries with latency bounds; on a 2-core machine hundreds of them in flight
# starve each other, so the width is bounded (override by exporting the variable).
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-4}"
# CI keeps only the end of what a run prints, and hundreds of tests finish after a failing one:
# on failure the run ends by repeating every failure line, so they are what CI shows.
log="$(mktemp)"
# A test that hangs would otherwise use up CI's time and show nothing: after this long without
# output the watchdog prints what had not ended, with every thread's stack, and kills the run.
deploy/watch-tests.sh "$log" "${FERRY_TEST_STALL_SECONDS:-600}" &
watchdog=$!
trap 'kill "$watchdog" 2> /dev/null || true; rm -f "$log" "$log.unfinished"' EXIT
if ! swift test --skip-build "$@" 2>&1 | tee "$log"; then
    echo
    echo "=== what failed (repeated from above) ==="
    grep -a '✘' "$log" | head -200 || true
    # A crash ends the run without a ✘ line for the test that crashed.
    grep -a -E 'Fatal error|exited with (signal|unexpected)' "$log" | head -20 || true
    # A hang: the tests the watchdog found unfinished (its report, with the stacks, is above).
    if [ -s "$log.unfinished" ]; then
        echo "=== tests still running when the run stalled ==="
        cat "$log.unfinished"
    fi
    exit 1
fi
# The API fuzzed from its own OpenAPI document: no 5xx, no answer the document does not allow.
# Only for the whole suite (not with --filter). A fixed seed keeps CI reproducible; set
# SCHEMATHESIS_SEED to another number to explore further.
if [ $# -eq 0 ]; then
    SCHEMATHESIS_SEED="${SCHEMATHESIS_SEED:-20261121}" SCHEMATHESIS_MAX_TIME="${SCHEMATHESIS_MAX_TIME:-120}" deploy/schemathesis.sh
fi
