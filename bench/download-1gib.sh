#!/usr/bin/env bash
# One 1 GiB file from nginx on loopback: `curl -o` against Ferry (from task creation to
# completion: the file is on disk, fsynced and renamed), then `cmp`. Target: Ferry within 1.2x.
source "$(dirname "$0")/lib.sh"

SIZE=$(( 1024 * 1024 * 1024 ))
WWW="$BENCH_OUT/www"
SOURCE="$WWW/1gib.bin"

install_dependencies
build_ferry
mkdir -p "$WWW"
if [ ! -f "$SOURCE" ] || [ "$(stat -c %s "$SOURCE")" -ne "$SIZE" ]; then
    log "generating $SOURCE"
    head -c "$SIZE" /dev/urandom > "$SOURCE.tmp" && mv "$SOURCE.tmp" "$SOURCE"
fi
start_nginx "$WWW"
start_ferry
create_tenant
create_session

URL="$NGINX_URL/1gib.bin"
sync
log "warming the page cache"
curl -fsS -o /dev/null "$URL"

CURL_FILE="$BENCH_TMP/curl.bin"
start=$(now)
curl -fsS -o "$CURL_FILE" "$URL"
curl_seconds=$(elapsed "$start" "$(now)")
cmp "$CURL_FILE" "$SOURCE" || die "curl's copy differs"
rm -f "$CURL_FILE"
sync

start=$(now)
TASK="$(create_task "$URL")"
task_json="$(wait_task "$TASK")"
ferry_seconds=$(elapsed "$start" "$(now)")
[ "$(jq -r .error <<<"$task_json")" = null ] || die "the task failed: $(jq -c .error <<<"$task_json")"
cmp "$(download_path "$TASK")" "$SOURCE" || die "Ferry's copy differs"

machine_summary
printf 'curl -o:  %6.3f s  (%.0f MiB/s)\n' "$curl_seconds" "$("$PYTHON" -c "print(1024 / $curl_seconds)")"
printf 'ferry:    %6.3f s  (%.0f MiB/s)\n' "$ferry_seconds" "$("$PYTHON" -c "print(1024 / $ferry_seconds)")"
printf 'ratio ferry/curl: %s (target <= 1.20)\n' "$(ratio "$ferry_seconds" "$curl_seconds")"
