#!/usr/bin/env bash
# Ferry's API under wrk: GET /v1/tasks/{id} and POST /v1/sessions/{id}/tasks (suspended
# download tasks, so nothing is transferred). Prints requests/s and latency percentiles.
# DURATION (default 15s), CONNECTIONS (default 32), THREADS (default 2).
source "$(dirname "$0")/lib.sh"

DURATION="${DURATION:-15s}"
CONNECTIONS="${CONNECTIONS:-32}"
THREADS="${THREADS:-2}"

install_dependencies
build_ferry
start_ferry
create_tenant
create_session
TASK="$(api POST "/v1/sessions/$SESSION/tasks" '{"kind": "download", "request": {"url": "http://127.0.0.1:9/never.bin"}}' | jq -r .id)"
export FERRY_URL KEY SESSION

cat > "$BENCH_TMP/create-task.lua" <<LUA
wrk.method = "POST"
wrk.path = "/v1/sessions/$SESSION/tasks"
wrk.body = '{"kind": "download", "request": {"url": "http://127.0.0.1:9/never.bin"}, "taskDescription": "wrk"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $KEY"
LUA

machine_summary
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION (wrk shares the 2 cores with ferry and its PostgreSQL)"
echo
echo "== GET /v1/tasks/{id}"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -H "Authorization: Bearer $KEY" "$FERRY_URL/v1/tasks/$TASK"
echo
echo "== POST /v1/sessions/{id}/tasks (suspended download tasks)"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$BENCH_TMP/create-task.lua" "$FERRY_URL"
echo
printf 'tasks in the session after the run: %s\n' "$("$PYTHON" -c '
import json, os, urllib.request
req = urllib.request.Request(os.environ["FERRY_URL"] + "/v1/sessions/" + os.environ["SESSION"] + "/tasks?limit=1000",
    headers={"Authorization": "Bearer " + os.environ["KEY"]})
print(len(json.load(urllib.request.urlopen(req))["data"]), "(first page, at most 1000)")' 2>/dev/null || echo '?')"
