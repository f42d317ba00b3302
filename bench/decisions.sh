#!/usr/bin/env bash
# Decision events at the receiver's speed: BENCH_TASKS (default 1000) data tasks, then as many
# downloads, of a 22-byte file from nginx, each kind twice in one run: in a session without a
# delegate, and in a session whose delegate subscribes to every event (the default when `events`
# is absent) and answers every decision event with {"disposition": "allow"} at once
# (bench/webhook_receiver.py). Tasks are created with tasks/batch requests of up to 1000;
# CONNECTIONS (default 16) is each session's httpMaximumConnectionsPerHost; KINDS (default
# "data download") the kinds to run. Prints, per kind:
#   - the time from the first request to the last completion, with and without the delegate, and
#     their ratio (target: at most 2);
#   - who decided the decision events (target: every one "receiver", none "default");
#   - how long transfers paused for the receiver's decisions, as Ferry measures it (from the
#     pause to the decision handed back to the transfer: ferry_decision_pause_seconds at
#     /metrics, read before and after the run; target: median < 5 ms, here including the
#     receiver's own time, well under a millisecond);
#   - each decision's overhead as the receiver and the event log see it: from its event (the
#     transfer paused) to the task's next event (it went on), minus the receiver's time from
#     arrival to answer; an upper bound, since the next event also waits for the transfer's own
#     next step and for its turn to be written;
#   - the CPU each run used per task: Ferry, PostgreSQL and the receiver share the machine's cores;
#     and what the 2x target leaves a task, every core busy for twice the run without a delegate.
source "$(dirname "$0")/lib.sh"

BENCH_TASKS="${BENCH_TASKS:-1000}"
CONNECTIONS="${CONNECTIONS:-16}"
WWW="$BENCH_OUT/www"

install_dependencies
build_ferry
mkdir -p "$WWW"
printf 'twenty-two bytes long.' > "$WWW/tiny.txt"
start_nginx "$WWW"
start_ferry

start_webhook_receiver
create_tenant
export FERRY_URL KEY

# run KIND DELEGATE_JSON: creates the tasks in a new session and waits for them; prints the
# seconds from the first request to the last completion, the session's id, and the CPU
# milliseconds per task of Ferry, PostgreSQL and the receiver. Each URL differs, so that none is
# answered from the session's URL cache.
run() {
    # Runs in a subshell ($(run …)): nothing it sets outlives it.
    local kind="$1" delegate="$2" round list result
    round="$(date +%s%N)"
    list="$BENCH_TMP/urls-$round.txt"
    SESSION="$(api POST /v1/sessions \
        "{\"configuration\": {\"kind\": \"default\", \"httpMaximumConnectionsPerHost\": $CONNECTIONS}${delegate:+, \"delegate\": $delegate}}" | jq -r .id)"
    export SESSION
    for i in $(seq 1 "$BENCH_TASKS"); do echo "$NGINX_URL/tiny.txt?round=$round&task=$i"; done > "$list"
    local pg_pids before after
    pg_pids="$(postgres_pids)"
    before="$(cpu_seconds "$FERRY_PID") $(cpu_seconds $pg_pids) $(cpu_seconds "$RECEIVER_PID")"
    result="$(ferry_bulk create "$list" --kind "$kind" --batch 1000 --concurrency 1 --then-wait --timeout 600)"
    # Read over the same span as the time: the summary's listing of every task is not the run's.
    after="$(cpu_seconds "$FERRY_PID") $(cpu_seconds $pg_pids) $(cpu_seconds "$RECEIVER_PID")"
    [ "$(jq -r '.created' <<<"$result")" = "$BENCH_TASKS" ] || die "creating tasks failed: $result"
    local failed
    failed="$(ferry_bulk summary | jq -r .failed)"
    [ "$failed" = 0 ] || log "$failed $kind tasks failed"
    printf '%s %s %s\n' "$(jq -r '(.seconds + .waited) * 1000 | round / 1000' <<<"$result")" "$SESSION" \
        "$("$PYTHON" -c "import sys; b, a, n = sys.argv[1].split(), sys.argv[2].split(), int(sys.argv[3]); print(' '.join(f'{(float(y) - float(x)) * 1000 / n:.2f}' for x, y in zip(b, a)))" "$before" "$after" "$BENCH_TASKS")"
}

# cpu_line FERRY POSTGRES RECEIVER: CPU milliseconds per task, as printed.
cpu_line() { printf 'Ferry %s ms, PostgreSQL %s ms, the receiver %s ms' "$1" "$2" "$3"; }

# metrics_to FILE: Ferry's /metrics text (empty if it cannot be read: the pause is then not printed).
metrics_to() {
    curl -fsS "$FERRY_URL/metrics" -H "Authorization: Bearer $BENCH_ADMIN_TOKEN" > "$1" || { log "cannot read /metrics"; : > "$1"; }
}

delegate="$(jq -nc --arg url "$RECEIVER_URL/webhook" --arg secret "$SECRET" '{url: $url, secret: $secret}')"
machine_summary
for kind in ${KINDS:-data download}; do
    read -r plain _ plain_cpu <<<"$(run "$kind" "")"
    metrics_to "$BENCH_TMP/metrics-before-$kind.txt"
    read -r hooked SESSION hooked_cpu <<<"$(run "$kind" "$delegate")"
    metrics_to "$BENCH_TMP/metrics-after-$kind.txt"
    figures="$(SESSION="$SESSION" "$PYTHON" "$BENCH_DIR/webhook_receiver.py" decisions --receiver "$RECEIVER_URL")"
    printf '%s tasks: without a delegate %s s, with a deciding delegate %s s; ratio %s (target <= 2)\n' \
        "$BENCH_TASKS $kind" "$plain" "$hooked" "$(ratio "$hooked" "$plain")"
    # shellcheck disable=SC2086 # three numbers, split on purpose
    printf '  CPU per task: without a delegate %s; with it %s\n' "$(cpu_line $plain_cpu)" "$(cpu_line $hooked_cpu)"
    # What the 2x target leaves on this machine: all of its cores for twice the run without a
    # delegate (nginx and this script's client not counted), against what the run with one used.
    # shellcheck disable=SC2086 # three numbers, split on purpose
    "$PYTHON" - "$(nproc)" "$plain" "$BENCH_TASKS" $hooked_cpu <<'PY'
import sys
cores, plain, tasks = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
used = sum(float(x) for x in sys.argv[4:7])
print(f"  CPU budget at 2x ({2 * plain:.3f} s on {cores} cores, every core busy throughout): {2 * plain * cores * 1000 / tasks:.2f} ms a task; "
      f"the run with the delegate used {used:.2f} ms (Ferry, PostgreSQL and the receiver)")
PY
    printf '  decided: %s\n' "$(jq -c .decidedBy <<<"$figures")"
    printf '  pause for a decision (Ferry'"'"'s ferry_decision_pause_seconds): %s\n' \
        "$("$PYTHON" "$BENCH_DIR/pause_histogram.py" "$BENCH_TMP/metrics-before-$kind.txt" "$BENCH_TMP/metrics-after-$kind.txt")"
    printf '  decision overhead (paused -> goes on, minus the receiver'"'"'s time): %s\n' \
        "$(jq -r '.overheadMs | "median \(.median) ms, p95 \(.p95) ms, p99 \(.p99) ms, max \(.max) ms"' <<<"$figures")"
    printf '  decision event -> arrival at the receiver: %s\n' \
        "$(jq -r '.eventToArrivalMs | "median \(.median) ms, p95 \(.p95) ms, p99 \(.p99) ms"' <<<"$figures")"
    for step in eventToClaim claimToAttempt attemptToArrival answeredToRecorded recordedToNextEvent; do
        printf '    %-20s %s\n' "$step" \
            "$(jq -r --arg step "$step" '.stepsMs[$step] // empty | "median \(.median) ms, p95 \(.p95) ms"' <<<"$figures")"
    done
done
