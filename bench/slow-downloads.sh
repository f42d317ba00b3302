#!/usr/bin/env bash
# N (default 10000) concurrent slow downloads in one Ferry instance: nginx sends each at RATE
# (limit_rate, default 4k per second) a SIZE file (default 512 KiB, so about two minutes each,
# longer than creating them takes). Prints ferry's peak RSS above its idle RSS divided by N
# (target: well under 100 KiB per transfer) and how many tasks failed (target: 0).
#
# httpMaximumConnectionsPerHost is at most 64 per session and host, so the tasks are spread
# over SESSIONS sessions (default 20; creating tasks in one session is serialised) and
# ceil(N/SESSIONS/64) loopback addresses (127.0.0.1, 127.0.0.2, …), all served by one nginx.
source "$(dirname "$0")/lib.sh"

N="${1:-${N:-10000}}"
RATE="${RATE:-4k}"
SIZE="${SIZE:-524288}"
SESSIONS="${SESSIONS:-20}"
PER_HOST=64
PER_SESSION=$(( (N + SESSIONS - 1) / SESSIONS ))
HOSTS=$(( (PER_SESSION + PER_HOST - 1) / PER_HOST ))
WWW="$BENCH_OUT/www"

# Every transfer holds a socket and its .part file open, plus nginx's end of the connection.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
log "open files limit: $(ulimit -n) (hard $(ulimit -Hn)); each transfer needs about 2 in ferry"

install_dependencies
build_ferry
mkdir -p "$WWW/slow"
[ "$(stat -c %s "$WWW/slow/slow.bin" 2>/dev/null || echo 0)" -eq "$SIZE" ] || head -c "$SIZE" /dev/urandom > "$WWW/slow/slow.bin"
start_nginx "$WWW" "$RATE" "$HOSTS"
start_ferry
create_tenant
sessions=()
for _ in $(seq 1 "$SESSIONS"); do
    create_session "{\"kind\": \"default\", \"httpMaximumConnectionsPerHost\": $PER_HOST, \"timeoutIntervalForRequest\": 120}"
    sessions+=("$SESSION")
done
SESSION="${sessions[*]}"
export FERRY_URL KEY SESSION

LIST="$BENCH_TMP/urls.txt"
mapfile -t hosts < <(loopback_hosts "$HOSTS")
for i in $(seq 0 $(( N - 1 ))); do
    # A query of its own per task: the same URL would be answered from Ferry's URL cache once the
    # first transfer finished, and the later tasks would not transfer at all.
    echo "${sessions[$(( i % SESSIONS ))]} http://${hosts[$(( i / SESSIONS % HOSTS ))]}:$NGINX_PORT/slow/slow.bin?task=$i"
done > "$LIST"

sleep 2
idle_kib=$(rss_kib "$FERRY_PID")
log "ferry idle RSS: $idle_kib KiB; creating $N tasks in $SESSIONS sessions, over $HOSTS hosts"

# Sample ferry's RSS, nginx's connections and ferry's open files every half second until told to stop.
SAMPLES="$BENCH_TMP/samples.txt"
(
    while kill -0 "$FERRY_PID" 2>/dev/null && [ ! -f "$BENCH_TMP/stop-sampling" ]; do
        printf '%s %s %s %s\n' "$(date +%s.%N)" "$(rss_kib "$FERRY_PID")" "$(nginx_active_connections || echo 0)" \
            "$(find "/proc/$FERRY_PID/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)"
        sleep 0.5
    done
) > "$SAMPLES" &
SAMPLER=$!

pg_pids="$(postgres_pids)"
cpu_before=("$(cpu_seconds "$FERRY_PID")" "$(cpu_seconds $pg_pids)")
start=$(now)
created="$(ferry_bulk create "$LIST" --concurrency 8)"
log "created: $created in $(elapsed "$start" "$(now)") s"
ferry_bulk wait --timeout 3600 --interval 1 > /dev/null || log "waiting failed; ferry alive: $(kill -0 "$FERRY_PID" 2>/dev/null && echo yes || echo no)"
total_seconds=$(elapsed "$start" "$(now)")
cpu_after=("$(cpu_seconds "$FERRY_PID")" "$(cpu_seconds $pg_pids)")
touch "$BENCH_TMP/stop-sampling"
wait "$SAMPLER" || true
hwm_at_end=$(hwm_kib "$FERRY_PID")
summary="$(ferry_bulk summary)"

peak_kib=$(awk 'BEGIN {m = 0} $2 > m {m = $2} END {print m}' "$SAMPLES")
peak_connections=$(awk 'BEGIN {m = 0} $3 > m {m = $3} END {print m - 1}' "$SAMPLES")
peak_files=$(awk 'BEGIN {m = 0} $4 > m {m = $4} END {print m}' "$SAMPLES")
machine_summary
printf 'transfers: %s at %s/s of %s bytes each, in %s sessions over %s loopback hosts; all done in %s s\n' "$N" "$RATE" "$SIZE" "$SESSIONS" "$HOSTS" "$total_seconds"
printf 'creating tasks: %s\n' "$created"
printf 'peak concurrent connections at nginx: %s; most files ferry had open: %s\n' "$peak_connections" "$peak_files"
printf 'ferry RSS: idle %s KiB, peak sampled %s KiB, VmHWM %s KiB\n' "$idle_kib" "$peak_kib" "$hwm_at_end"
printf 'memory per transfer: %s KiB (peak sampled - idle) / N; %s KiB by VmHWM (target: well under 100)\n' \
    "$("$PYTHON" -c "print(f'{($peak_kib - $idle_kib) / $N:.1f}')")" "$("$PYTHON" -c "print(f'{($hwm_at_end - $idle_kib) / $N:.1f}')")"
# Mostly heartbeats: each renews every running transfer's lease once a second.
printf 'CPU over the run: ferry %s s, postgres %s s\n' \
    "$(elapsed "${cpu_before[0]}" "${cpu_after[0]}")" "$(elapsed "${cpu_before[1]}" "${cpu_after[1]}")"
printf 'tasks: %s\n' "$(jq -c '{tasks, states, failed, errors}' <<<"$summary")"
printf 'failed: %s (target 0)\n' "$(jq -r .failed <<<"$summary")"
printf 'ferry warnings and errors logged: %s\n' "$(grep -cE ' (warning|error|critical) ' "$BENCH_TMP/ferry.log" || true)"
grep -E ' (warning|error|critical) ' "$BENCH_TMP/ferry.log" | sed -E 's/^[^ ]+ //; s/task=[^ ]+/task=…/g' | sort | uniq -c | sort -rn | head -5 || true
