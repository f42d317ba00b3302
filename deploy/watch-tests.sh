#!/usr/bin/env bash
# Watches a running `swift test` whose output goes to LOG. When LOG has not grown for
# STALL_SECONDS, something is stuck: a test waiting for what never comes, or the process
# unable to exit. Rather than let the run use up CI's time and end with nothing to go on, this
# prints the tests that started and never ended, the stack of every thread of the test
# process, and kills it, so that the run fails with what hung.
#
# usage: deploy/watch-tests.sh LOG [STALL_SECONDS] &   (runs until killed; deploy/test.sh kills it)
set -uo pipefail
log="$1"
stall_seconds="${2:-600}"

# Only this checkout's test process: another run on the machine is none of its business.
# (The physical path, as SwiftPM names its build products.)
test_processes() { pgrep -f "$(pwd -P)/\.build/.*PackageTests\.xctest" || true; }

# Names of tests that printed "◇ Test … started." but neither passed nor failed. Parameterised
# cases ("◇ Test case passing …") are left out: their test's own line is enough.
unfinished_tests() {
    local started ended
    started="$(sed -n -E '/^◇ Test case /d; s/^◇ Test (.*) started\.$/\1/p' "$log" | sort)"
    # (✔|✘), not a bracket expression: each is several bytes, which a C locale reads apart.
    ended="$(sed -n -E 's/^(✔|✘) Test (.*) (passed|failed)( after .*)?$/\2/p' "$log" \
        | sed -E 's/ with [0-9]+ test cases?$//' | sort)"
    comm -23 <(printf '%s\n' "$started") <(printf '%s\n' "$ended")
}

report_and_kill() {
    echo
    echo "=== no test output for ${stall_seconds} s: the run is stuck ==="
    echo "--- tests started and not ended ---"
    # Also kept for deploy/test.sh, which repeats them last, after the stacks.
    unfinished_tests | tee "$log.unfinished"
    for pid in $(test_processes); do
        echo "--- threads of the test process $pid ---"
        if command -v gdb > /dev/null; then
            local stacks
            stacks="$(timeout 120 gdb -p "$pid" -batch -ex 'thread apply all bt' 2>&1)"
            # Frames only; if gdb could not attach, what it said instead.
            grep -E '^(#|Thread )' <<<"$stacks" || tail -5 <<<"$stacks"
        else
            echo "(gdb is not installed: no stacks)"
        fi
        kill -9 "$pid"
    done
    echo "=== end of the stuck run's report ==="
}

while sleep 15; do
    [ -n "$(test_processes)" ] || continue
    quiet_for=$(( $(date +%s) - $(stat -c %Y "$log") ))
    if [ "$quiet_for" -ge "$stall_seconds" ]; then
        report_and_kill
        exit 1
    fi
done
