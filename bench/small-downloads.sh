#!/usr/bin/env bash
# A thousand 64 KiB files from nginx on loopback: `aria2c -j 16 -i list` against Ferry (all
# tasks created with "resume": true, as aria2c is handed its list: in batches of BATCH (default
# 250, POST .../tasks/batch; BATCH=1 creates them one request each), the first of FIRST_BATCH
# (default 25) so that transfers start while the rest are created, until the last completes).
# Target: Ferry faster. ROUNDS (default 5) rounds, alternating which of the two goes first; the
# medians are compared. FILES (default 1000) and CONNECTIONS (Ferry's httpMaximumConnectionsPerHost,
# default 16, as aria2c's -j) can be changed.
source "$(dirname "$0")/lib.sh"

FILES="${FILES:-1000}"
CONNECTIONS="${CONNECTIONS:-16}"
BATCH="${BATCH:-250}"
FIRST_BATCH="${FIRST_BATCH:-25}"
ROUNDS="${ROUNDS:-5}"
WWW="$BENCH_OUT/www"
SMALL="$WWW/small"

install_dependencies
build_ferry
mkdir -p "$SMALL"
if [ "$(find "$SMALL" -name '*.bin' | wc -l)" -lt "$FILES" ]; then
    log "generating $FILES files of 64 KiB in $SMALL"
    for i in $(seq 1 "$FILES"); do head -c 65536 /dev/urandom > "$SMALL/$i.bin"; done
fi
start_nginx "$WWW"
start_ferry
create_tenant
export FERRY_URL KEY

LIST="$BENCH_TMP/urls.txt"
for i in $(seq 1 "$FILES"); do echo "$NGINX_URL/small/$i.bin"; done > "$LIST"
cat "$SMALL"/*.bin > /dev/null   # warm: nginx serves from the page cache for both

# One round of aria2c, into a folder of its own; sets ARIA_SECONDS.
run_aria2c() {
    local folder="$BENCH_TMP/aria2-$1" start
    mkdir -p "$folder"
    start=$(now)
    aria2c -q -j 16 -i "$LIST" -d "$folder" --allow-overwrite=true --auto-file-renaming=false --file-allocation=none
    ARIA_SECONDS=$(elapsed "$start" "$(now)")
    [ "$(find "$folder" -name '*.bin' | wc -l)" -eq "$FILES" ] || die "aria2c did not download every file"
}

# One round of Ferry, in a session of its own (so its URL cache starts empty, as aria2c keeps
# none); sets FERRY_SECONDS and checks every task and file.
run_ferry() {
    local ids="$BENCH_TMP/ids-$1.txt" start created summary failed mismatches
    create_session "{\"kind\": \"default\", \"httpMaximumConnectionsPerHost\": $CONNECTIONS}"
    export SESSION
    start=$(now)
    # One client process, as aria2c is one: it creates the tasks, then long-polls the last one
    # created (tasks start in creation order, so it is about the last to run), as a client
    # waiting for its list would, then asks the list for any still running and long-polls those.
    created="$(ferry_bulk create "$LIST" --concurrency "$([ "$BATCH" -gt 1 ] && echo 1 || echo 8)" --batch "$BATCH" --first-batch "$FIRST_BATCH" --ids "$ids" \
        --then-wait --timeout 600)"
    FERRY_SECONDS=$(elapsed "$start" "$(now)")
    summary="$(ferry_bulk summary)"
    failed="$(jq -r .failed <<<"$summary")"
    mismatches=$(paste -d' ' "$ids" <(seq 1 "$FILES") | while read -r id n; do
        cmp -s "$(download_path "$id")" "$SMALL/$n.bin" || echo "$id"
    done | wc -l)
    [ "$failed" -eq 0 ] && [ "$mismatches" -eq 0 ] || die "round $1: $failed tasks failed, $mismatches files differ"
    FERRY_DETAIL="creating took $(jq -r .seconds <<<"$created") s: $(jq -c '{created, failures}' <<<"$created"); first created to last completed (Ferry clock) $(jq -r .firstCreatedToLastCompleted <<<"$summary") s"
}

# Whichever runs first in a round was measured slower (file creation on this disk varies from
# run to run), so the rounds alternate who goes first and the medians are compared.
aria_times=() ferry_times=()
for round in $(seq 1 "$ROUNDS"); do
    if [ $((round % 2)) -eq 1 ]; then
        run_aria2c "$round"; run_ferry "$round"
    else
        run_ferry "$round"; run_aria2c "$round"
    fi
    aria_times+=("$ARIA_SECONDS") ferry_times+=("$FERRY_SECONDS")
    printf 'round %s (%s first): aria2c %6.3f s, ferry %6.3f s (%s)\n' "$round" \
        "$([ $((round % 2)) -eq 1 ] && echo aria2c || echo ferry)" "$ARIA_SECONDS" "$FERRY_SECONDS" "$FERRY_DETAIL"
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
aria_median=$(median "${aria_times[@]}")
ferry_median=$(median "${ferry_times[@]}")

machine_summary
printf 'aria2c -j 16: median %6.3f s of %s rounds\n' "$aria_median" "$ROUNDS"
printf 'ferry:        median %6.3f s of %s rounds (tasks created %s per request%s; connections per host %s; every task succeeded, every file matches)\n' \
    "$ferry_median" "$ROUNDS" "$BATCH" "$([ "$BATCH" -gt 1 ] && echo ", the first $FIRST_BATCH")" "$CONNECTIONS"
printf 'ratio ferry/aria2c: %s (target < 1.00)\n' "$(ratio "$ferry_median" "$aria_median")"
