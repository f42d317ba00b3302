#!/usr/bin/env bash
# A thousand 64 KiB files from nginx on loopback: `aria2c -j 16 -i list` against Ferry (all
# tasks created with "resume": true, as aria2c is handed its list: in batches of BATCH (default
# 250, POST .../tasks/batch; BATCH=1 creates them one request each), until the last completes).
# Target: Ferry faster. FILES (default 1000) and CONNECTIONS (Ferry's httpMaximumConnectionsPerHost,
# default 16, as aria2c's -j) can be changed.
source "$(dirname "$0")/lib.sh"

FILES="${FILES:-1000}"
CONNECTIONS="${CONNECTIONS:-16}"
BATCH="${BATCH:-250}"
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
create_session "{\"kind\": \"default\", \"httpMaximumConnectionsPerHost\": $CONNECTIONS}"
export FERRY_URL KEY SESSION

LIST="$BENCH_TMP/urls.txt"
for i in $(seq 1 "$FILES"); do echo "$NGINX_URL/small/$i.bin"; done > "$LIST"
cat "$LIST" > /dev/null   # warm: nginx serves from the page cache for both

ARIA_DIR="$BENCH_TMP/aria2"
mkdir -p "$ARIA_DIR"
start=$(now)
aria2c -q -j 16 -i "$LIST" -d "$ARIA_DIR" --allow-overwrite=true --auto-file-renaming=false --file-allocation=none
aria_seconds=$(elapsed "$start" "$(now)")
[ "$(find "$ARIA_DIR" -name '*.bin' | wc -l)" -eq "$FILES" ] || die "aria2c did not download every file"

start=$(now)
created="$(python3 "$BENCH_DIR/ferry_bulk.py" create "$LIST" --concurrency "$([ "$BATCH" -gt 1 ] && echo 1 || echo 8)" --batch "$BATCH" --ids "$BENCH_TMP/ids.txt")"
created_at=$(now)
# The last task created is about the last to run (tasks start in creation order): long-poll it,
# as a client waiting for its list would, then poll the list for any still running.
python3 "$BENCH_DIR/ferry_bulk.py" wait --timeout 600 --first-wait-for "$(tail -n 1 "$BENCH_TMP/ids.txt")" > /dev/null
ferry_seconds=$(elapsed "$start" "$(now)")
summary="$(python3 "$BENCH_DIR/ferry_bulk.py" summary)"
failed="$(jq -r .failed <<<"$summary")"

# Spot-check content: every file against its source.
mismatches=0
paste -d' ' "$BENCH_TMP/ids.txt" <(seq 1 "$FILES") | while read -r id n; do
    cmp -s "$(download_path "$id")" "$SMALL/$n.bin" || echo "$id"
done > "$BENCH_TMP/mismatches.txt"
mismatches=$(wc -l < "$BENCH_TMP/mismatches.txt")

machine_summary
printf 'aria2c -j 16: %6.3f s\n' "$aria_seconds"
printf 'ferry:        %6.3f s  (creating the %s tasks, %s per request, took %s s: %s; connections per host %s)\n' \
    "$ferry_seconds" "$FILES" "$BATCH" "$(elapsed "$start" "$created_at")" "$(jq -c '{created, failures}' <<<"$created")" "$CONNECTIONS"
printf 'ferry tasks: %s failed, %s files differ; first created to last completed (Ferry clock) %s s\n' \
    "$failed" "$mismatches" "$(jq -r .firstCreatedToLastCompleted <<<"$summary")"
printf 'ratio ferry/aria2c: %s (target < 1.00)\n' "$(ratio "$ferry_seconds" "$aria_seconds")"
