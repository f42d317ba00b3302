#!/usr/bin/env bash
# Webhook delivery to a local receiver: BENCH_TASKS (default 500) downloads of 64 KiB files from
# nginx, created with "resume": true as fast as the API takes them, in a session whose delegate
# is bench/webhook_receiver.py on loopback (Python's ThreadingHTTPServer: checks the signature,
# notes the arrival, answers 204). The delegate subscribes to every event type except the
# decision events (nothing waits for the receiver's decision) and the opt-in
# dataTask.didReceiveData. Waits until the receiver has every subscribed event of Ferry's event
# log and Ferry lists no pending delivery, then prints:
#   - events delivered per second, from the first arrival to the last;
#   - the delay from each event's `timestamp` (the body's: when Ferry wrote the event, i.e.
#     PostgreSQL's now() of the transaction that wrote it, in milliseconds; the webhook-timestamp
#     header is whole seconds and is the attempt's time) to its arrival at the receiver:
#     median, p95, p99, and where it goes on Ferry's own records (fan-out, queue, request);
#   - events that arrived out of order within their task (target: 0).
# Then a steady load well under capacity (LIGHT_TASKS downloads at LIGHT_RATE a second): the
# delay from event to arrival. Then a backlog: the same downloads in a second session while the receiver answers 503 with a
# long Retry-After (the deliveries wait), drained once the endpoint is enabled again; prints
# the drain's events per second: Ferry's line rate to the receiver, and the CPU it used per
# delivery against what 0.8x of wrk's rate would leave Ferry and PostgreSQL on these cores.
# For reference, the same receiver under wrk: signed POSTs of a real webhook body on
# REFERENCE_CONNECTIONS connections (default 16: a delegate's default `maximumInFlight`, the
# requests Ferry may have in flight to its URL) for REFERENCE_DURATION (default 5s).
# CONNECTIONS (default 16) is the session's httpMaximumConnectionsPerHost.
source "$(dirname "$0")/lib.sh"

BENCH_TASKS="${BENCH_TASKS:-500}"
CONNECTIONS="${CONNECTIONS:-16}"
REFERENCE_CONNECTIONS="${REFERENCE_CONNECTIONS:-16}"
REFERENCE_DURATION="${REFERENCE_DURATION:-5s}"
WWW="$BENCH_OUT/www"
SMALL="$WWW/small"
# EventType.allCases minus the decision events (isDecision) and the opt-in dataTask.didReceiveData.
EVENTS="session.didBecomeInvalidWithError,session.didFinishEvents,task.didCreateTask,task.isWaitingForConnectivity"
EVENTS+=",task.needNewBodyStream,task.didSendBodyData,task.didFinishCollectingMetrics,task.didCompleteWithError"
EVENTS+=",dataTask.didBecomeDownloadTask,downloadTask.didWriteData,downloadTask.didResumeAtOffset,downloadTask.didFinishDownloadingTo"

install_dependencies
build_ferry
mkdir -p "$SMALL"
if [ "$(find "$SMALL" -name '*.bin' | wc -l)" -lt "$BENCH_TASKS" ]; then
    log "generating $BENCH_TASKS files of 64 KiB in $SMALL"
    for i in $(seq 1 "$BENCH_TASKS"); do [ -f "$SMALL/$i.bin" ] || head -c 65536 /dev/urandom > "$SMALL/$i.bin"; done
fi
start_nginx "$WWW"
start_ferry

start_webhook_receiver

create_tenant
delegate="$(jq -nc --arg url "$RECEIVER_URL/webhook" --arg secret "$SECRET" --arg events "$EVENTS" \
    '{url: $url, secret: $secret, events: ($events | split(","))}')"
SESSION="$(api POST /v1/sessions \
    "{\"configuration\": {\"kind\": \"default\", \"httpMaximumConnectionsPerHost\": $CONNECTIONS}, \"delegate\": $delegate}" | jq -r .id)"
export FERRY_URL KEY SESSION

# The other reader of the same events: a Server-Sent Events stream of the tenant, open before
# the tasks are created.
"$PYTHON" "$BENCH_DIR/webhook_receiver.py" sse --count $((BENCH_TASKS * 5)) --out "$BENCH_TMP/sse.json" --timeout 300 \
    > "$BENCH_TMP/sse.log" 2>&1 &
SSE_PID=$!
sleep 0.5

LIST="$BENCH_TMP/urls.txt"
for i in $(seq 1 "$BENCH_TASKS"); do echo "$NGINX_URL/small/$i.bin"; done > "$LIST"

start=$(now)
created="$(ferry_bulk create "$LIST" --concurrency 8 --ids "$BENCH_TMP/ids.txt")"
created_at=$(now)
ferry_bulk wait --timeout 600 > /dev/null
completed_at=$(now)
summary="$(ferry_bulk summary)"
log "tasks completed after $(elapsed "$start" "$completed_at") s; waiting for the webhooks"
figures="$("$PYTHON" "$BENCH_DIR/webhook_receiver.py" collect --receiver "$RECEIVER_URL" --events "$EVENTS" --timeout 300)"
printf '%s\n' "$figures" > "$BENCH_TMP/figures.json"

wait "$SSE_PID" || log "the event stream reader failed: $(cat "$BENCH_TMP/sse.log")"
sse_figures="$("$PYTHON" "$BENCH_DIR/webhook_receiver.py" sse-figures --records "$BENCH_TMP/sse.json")"
# Resumed from the middle with Last-Event-ID: the rest, every one of them, in order. (Positions
# are opaque cursors, not ordered: the rest is what came after the middle one.)
positions="$(jq -c .positions <<<"$sse_figures")"
middle="$(jq -r '.[length / 2 | floor]' <<<"$positions")"
rest="$(jq -c '.[(length / 2 | floor) + 1:]' <<<"$positions")"
"$PYTHON" "$BENCH_DIR/webhook_receiver.py" sse --after "$middle" --count "$(jq length <<<"$rest")" --out "$BENCH_TMP/sse-resumed.json" --timeout 30
resumed="$(jq -c '[.[].position]' "$BENCH_TMP/sse-resumed.json")"
# Paging the session's log with ?after=, as a poller would.
paging_start=$(now)
paged="$("$PYTHON" -c 'import sys; sys.path.insert(0, sys.argv[1]); import webhook_receiver as w; print(len(w.ferry_pages("/v1/sessions/" + sys.argv[2] + "/events")))' "$BENCH_DIR" "$SESSION")"
paging_seconds="$(elapsed "$paging_start" "$(now)")"

# The reference: the same receiver, the same work per request, driven by wrk.
"$PYTHON" "$BENCH_DIR/webhook_receiver.py" reference-lua --receiver "$RECEIVER_URL" --secret "$SECRET" --out "$BENCH_TMP/reference.lua"
reference_cpu_before="$(cpu_seconds "$RECEIVER_PID")"
wrk -t1 -c"$REFERENCE_CONNECTIONS" -d"$REFERENCE_DURATION" --latency -s "$BENCH_TMP/reference.lua" "$RECEIVER_URL" > "$BENCH_TMP/wrk.txt"
reference_cpu="$(elapsed "$reference_cpu_before" "$(cpu_seconds "$RECEIVER_PID")")"
reference_requests="$(awk '$2 == "requests" && $3 == "in" {print $1}' "$BENCH_TMP/wrk.txt")"
reference_rate="$(awk '/^Requests\/sec:/ {print $2}' "$BENCH_TMP/wrk.txt")"
reference_median="$(awk '$1 == "50%" {print $2}' "$BENCH_TMP/wrk.txt")"
reference_bad="$(curl -fsS "$RECEIVER_URL/stats" | jq -c .bad)"

# At a steady load well under what Ferry delivers: LIGHT_TASKS (default 400) downloads created
# at LIGHT_RATE a second (default 100: 500 events a second), in a session of their own; the
# delay from each event to its arrival is the figure.
LIGHT_TASKS="${LIGHT_TASKS:-400}"
LIGHT_RATE="${LIGHT_RATE:-100}"
curl -fsS -X POST "$RECEIVER_URL/reset"
SESSION="$(api POST /v1/sessions \
    "{\"configuration\": {\"kind\": \"default\", \"httpMaximumConnectionsPerHost\": $CONNECTIONS}, \"delegate\": $delegate}" | jq -r .id)"
export SESSION
head -n "$LIGHT_TASKS" "$LIST" > "$BENCH_TMP/light-urls.txt"
ferry_bulk create "$BENCH_TMP/light-urls.txt" --concurrency 1 --rate "$LIGHT_RATE" --then-wait > /dev/null
light_figures="$("$PYTHON" "$BENCH_DIR/webhook_receiver.py" collect --receiver "$RECEIVER_URL" --events "$EVENTS" --timeout 120 --quiet 0)"
printf '%s\n' "$light_figures" > "$BENCH_TMP/light-figures.json"

# Line rate: a backlog drained. While the receiver answers 503 with Retry-After: 3600 (each
# task's first delivery is retried an hour later, its others wait behind it), a second session's
# BENCH_TASKS downloads write their events and the fan-out makes their deliveries; then the
# receiver answers again and the endpoint is enabled, which makes every waiting delivery due. From
# enabling to the last arrival, Ferry delivers with nothing else to wait for: the rate to set
# against wrk's. (The first run's rate is bounded by how fast the events are written.)
curl -fsS -X POST "$RECEIVER_URL/reset" && curl -fsS -X POST "$RECEIVER_URL/busy"
SESSION="$(api POST /v1/sessions \
    "{\"configuration\": {\"kind\": \"default\", \"httpMaximumConnectionsPerHost\": $CONNECTIONS}, \"delegate\": $delegate}" | jq -r .id)"
export SESSION
ferry_bulk create "$LIST" --concurrency 8 --ids "$BENCH_TMP/backlog-ids.txt" > /dev/null
ferry_bulk wait --timeout 600 > /dev/null
backlog="$("$PYTHON" "$BENCH_DIR/webhook_receiver.py" backlog-ready --events "$EVENTS" --out "$BENCH_TMP/backlog-events.json")"
curl -fsS -X POST "$RECEIVER_URL/open"
endpoint="$(api GET "/v1/sessions/$SESSION/delegate" | jq -r .id)"
# Where the drain's CPU goes: Ferry, PostgreSQL and the receiver share the machine's cores.
pg_pids="$(postgres_pids)"
cpu_before=("$(cpu_seconds "$FERRY_PID")" "$(cpu_seconds $pg_pids)" "$(cpu_seconds "$RECEIVER_PID")")
enabled_at=$(now)
api POST "/v1/webhooks/endpoints/$endpoint/enable" > /dev/null
# The CPU is read when the receiver has every event, before the collector reads Ferry's lists.
cpu_groups="$(jq -nc --arg ferry "$FERRY_PID" --arg postgres "$pg_pids" --arg receiver "$RECEIVER_PID" \
    '{ferry: ($ferry | split(" ") | map(select(. != ""))), postgres: ($postgres | split(" ") | map(select(. != ""))),
      receiver: ($receiver | split(" ") | map(select(. != "")))}')"
backlog_figures="$("$PYTHON" "$BENCH_DIR/webhook_receiver.py" collect --receiver "$RECEIVER_URL" --events "$EVENTS" --timeout 300 --quiet 0 \
    --expected-ids "$BENCH_TMP/backlog-events.json" --cpu-groups "$cpu_groups")"
printf '%s\n' "$backlog_figures" > "$BENCH_TMP/backlog-figures.json"
b() { jq -r "$@" <<<"$backlog_figures"; }
drained_at="$(b .cpuWhenComplete.at)"
cpu_after=("$(b .cpuWhenComplete.ferry)" "$(b .cpuWhenComplete.postgres)" "$(b .cpuWhenComplete.receiver)")
cpu_used() { elapsed "${cpu_before[$1]}" "${cpu_after[$1]}"; }
backlog_seconds="$(elapsed "$enabled_at" "$(b .lastArrival)")"
backlog_rate="$("$PYTHON" -c "import sys; print(round(int(sys.argv[1]) / float(sys.argv[2]), 1))" "$(b .unique)" "$backlog_seconds")"

f() { jq -r "$@" <<<"$figures"; }
ms() { jq -r "$1 | \"median \(.median) ms, p95 \(.p95) ms, p99 \(.p99) ms, max \(.max) ms\"" <<<"$figures"; }

machine_summary
printf 'ferry tasks: %s (creating them took %s s: %s), %s failed; first created to last completed %s s\n' \
    "$BENCH_TASKS" "$(elapsed "$start" "$created_at")" "$(jq -c '{created, failures}' <<<"$created")" \
    "$(jq -r .failed <<<"$summary")" "$(elapsed "$start" "$completed_at")"
printf 'events: %s received once (%s expected from the event log; %s missing, %s unexpected, %s duplicates; bad requests %s)\n' \
    "$(f .unique)" "$(f .expected)" "$(f .missing)" "$(f .unexpected)" "$(f .duplicates)" "$(f -c .badRequests)"
printf '  by type: %s\n' "$(f -c .types)"
printf 'events per second: %s (first to last arrival, %s s); last event arrived %s s after the first task was created\n' \
    "$(f .eventsPerSecond)" "$(f .spanSeconds)" "$(if [ "$(f .lastArrival)" != null ]; then elapsed "$start" "$(f .lastArrival)"; else echo '?'; fi)"
printf 'delay from the event timestamp to arrival: %s\n' "$(ms .delayMs)"
printf '  event -> delivery created (fan-out):      %s\n' "$(ms .eventToFanOutMs)"
printf '  delivery created -> first attempt starts: %s\n' "$(ms .fanOutToAttemptMs)"
printf '  first attempt starts -> arrival:          %s\n' "$(ms .attemptToArrivalMs)"
printf 'out of order within a task: %s events in %s of %s tasks (target 0)\n' \
    "$(f .outOfOrder)" "$(f .streamsOutOfOrder)" "$(f .streams)"
printf 'ferry deliveries: %s (%s), %s attempts\n' "$(f .deliveries)" "$(f -c .deliveryStatuses)" "$(f .attempts)"
printf 'reference, wrk -t1 -c%s -d%s on the same receiver: %s requests/s, median latency %s (bad requests after it %s)\n' \
    "$REFERENCE_CONNECTIONS" "$REFERENCE_DURATION" "$reference_rate" "$reference_median" "$reference_bad"
printf 'event stream (SSE, open before the tasks): %s events, %s events/s, delay median %s ms, p99 %s ms\n' \
    "$(jq -r .events <<<"$sse_figures")" "$(jq -r .eventsPerSecond <<<"$sse_figures")" \
    "$(jq -r .delayMs.median <<<"$sse_figures")" "$(jq -r .delayMs.p99 <<<"$sse_figures")"
printf 'event stream resumed with Last-Event-ID %s: %s of the %s after it, %s\n' "$middle" "$(jq length <<<"$resumed")" \
    "$(jq length <<<"$rest")" "$(if [ "$resumed" = "$rest" ]; then echo "all, in order"; else echo "NOT the same"; fi)"
printf 'the session log read with ?after= pages: %s events in %s s\n' "$paged" "$paging_seconds"
printf 'ratio ferry events/s (as the events were written) / reference requests/s: %s\n' \
    "$(if [ "$(f .eventsPerSecond)" != null ] && [ -n "$reference_rate" ]; then ratio "$(f .eventsPerSecond)" "$reference_rate"; else echo '?'; fi)"
printf 'steady load, %s downloads created at %s a second (%s events/s): delay from event to arrival %s; fan-out %s\n' \
    "$LIGHT_TASKS" "$LIGHT_RATE" "$(jq -r .eventsPerSecond <<<"$light_figures")" \
    "$(jq -r '.delayMs | "median \(.median) ms, p95 \(.p95) ms, p99 \(.p99) ms"' <<<"$light_figures")" \
    "$(jq -r '.eventToFanOutMs | "median \(.median) ms, p99 \(.p99) ms"' <<<"$light_figures")"
printf 'backlog: %s pending deliveries drained in %s s after enabling the endpoint: %s events/s (%s missing, %s duplicates, %s out of order)\n' \
    "$backlog" "$backlog_seconds" "$backlog_rate" "$(b .missing)" "$(b .duplicates)" "$(b .outOfOrder)"
printf '  CPU while draining (%s s until the receiver had them all; 2 cores): ferry %s s, postgres %s s, receiver %s s\n' \
    "$(elapsed "$enabled_at" "$drained_at")" "$(cpu_used 0)" "$(cpu_used 1)" "$(cpu_used 2)"
printf 'ratio backlog events/s / reference requests/s: %s\n' "$(ratio "$backlog_rate" "$reference_rate")"
# What the 0.8x target leaves Ferry and PostgreSQL on this machine: the receiver's CPU per request
# is what wrk's run cost it; the cores are shared by all three.
"$PYTHON" - "$(nproc)" "$reference_rate" "$reference_cpu" "$reference_requests" "$(b .unique)" "$(cpu_used 0)" "$(cpu_used 1)" "$(cpu_used 2)" <<'PY'
import sys
cores, rate, receiver_cpu, requests, delivered = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
ferry, postgres, receiver = (float(x) for x in sys.argv[6:9])
per_request = receiver_cpu / requests
target = 0.8 * rate
left = (cores - target * per_request) / target
print(f"  CPU budget at 0.8x ({target:.0f} deliveries/s on {cores} cores): the receiver takes {per_request * 1000:.3f} ms a request "
      f"(under wrk), leaving Ferry and PostgreSQL together {left * 1000:.3f} ms a delivery; the drain used "
      f"{(ferry + postgres) / delivered * 1000:.3f} ms (Ferry {ferry / delivered * 1000:.3f}, PostgreSQL {postgres / delivered * 1000:.3f}; "
      f"the receiver {receiver / delivered * 1000:.3f})")
PY
