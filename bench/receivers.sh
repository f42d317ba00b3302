#!/usr/bin/env bash
# Many receivers, one slow (issue 15): ENDPOINTS (default 1000) delegate endpoints, each the
# delegate of a session of its own, all served by path by one bench/webhook_receiver.py on
# loopback, in three tenants: "big" with BIG_ENDPOINTS (default 900) of them, "small" with one,
# "mid" with the rest. Each endpoint's session downloads TASKS_PER_ENDPOINT (default 1) small
# files from nginx; the delegates subscribe to the events webhooks.sh subscribes to (no decision
# events). Two rounds in one run, on one Ferry, each with new tenants and sessions:
#   (a) every endpoint answers at once (204);
#   (b) the same, except two of the big tenant's endpoints: one never answers (each attempt
#       ends at Ferry's request timeout, 10 s, and is retried) and one answers after 2 s. Each of
#       the two gets FAULTY_TASKS (default 16) downloads, so that it can fill its delegate's
#       maximumInFlight (16 by default) and hold that many of Ferry's slots.
# In each round the small tenant's one session creates SMALL_TASKS (default 20) downloads, one
# every 100 ms, starting while the big tenant's are created, i.e. while the big tenant has a
# backlog of deliveries. Each round waits until every healthy endpoint has every event of its
# session's log. Prints per round:
#   - the healthy endpoints' events per second (first to last arrival), and the ratio (b)/(a)
#     (target: at least 0.9, "slow the others by no more than 10 %");
#   - the delay from each event (its body's `timestamp`, when Ferry wrote it) to its arrival,
#     median and p99, for the small tenant and for the big one, and whether the small tenant's
#     events were written while the big tenant's were still arriving (the fairness target: the
#     one-endpoint tenant is not starved by the 900-endpoint one);
#   - what the faulty endpoints received.
# ANALYZE=1 (a diagnostic) has PostgreSQL gather fresh statistics of webhook_endpoints once each
# round's endpoints exist, before its tasks start: with the statistics of an almost empty table
# the planner joins each fanned-out event to every endpoint of its tenant (see bench/README.md).
source "$(dirname "$0")/lib.sh"

ENDPOINTS="${ENDPOINTS:-1000}"
BIG_ENDPOINTS="${BIG_ENDPOINTS:-900}"
TASKS_PER_ENDPOINT="${TASKS_PER_ENDPOINT:-1}"
FAULTY_TASKS="${FAULTY_TASKS:-16}"
SMALL_TASKS="${SMALL_TASKS:-20}"
MID_ENDPOINTS=$((ENDPOINTS - BIG_ENDPOINTS - 1))
[ "$MID_ENDPOINTS" -ge 0 ] || die "ENDPOINTS must be more than BIG_ENDPOINTS"
WWW="$BENCH_OUT/www"
# The same as webhooks.sh: EventType.allCases minus the decision events and dataTask.didReceiveData.
EVENTS="session.didBecomeInvalidWithError,session.didFinishEvents,task.didCreateTask,task.isWaitingForConnectivity"
EVENTS+=",task.needNewBodyStream,task.didSendBodyData,task.didFinishCollectingMetrics,task.didCompleteWithError"
EVENTS+=",dataTask.didBecomeDownloadTask,downloadTask.didWriteData,downloadTask.didResumeAtOffset,downloadTask.didFinishDownloadingTo"

install_dependencies
build_ferry
mkdir -p "$WWW"
[ -f "$WWW/endpoint.bin" ] || head -c 4096 /dev/urandom > "$WWW/endpoint.bin"
start_nginx "$WWW"
start_ferry
start_webhook_receiver
export FERRY_URL

# new_tenant NAME: prints the new tenant's API key.
new_tenant() {
    curl -fsS -X POST "$FERRY_URL/admin/v1/tenants" -H "Authorization: Bearer $BENCH_ADMIN_TOKEN" -d "{\"name\": \"$1\"}" | jq -r .apiKey
}

# round LABEL FAULTY: one round (FAULTY 1: with the two faulty endpoints); writes the figures
# to $BENCH_TMP/figures-LABEL.json.
round() {
    local label="$1" faulty="$2" dir="$BENCH_TMP/round-$1"
    mkdir -p "$dir"
    local -A keys
    local tenant
    for tenant in big mid small; do keys[$tenant]="$(new_tenant "$tenant-$label")"; done

    # Endpoint N of the round is /webhook/LABEL/ep/N, or /hang/N or /slow/N for the faulty two.
    local index=0 first last path
    for tenant in big mid small; do
        case "$tenant" in
            big) first=1; last=$BIG_ENDPOINTS ;;
            mid) first=$((BIG_ENDPOINTS + 1)); last=$((BIG_ENDPOINTS + MID_ENDPOINTS)) ;;
            small) first=$ENDPOINTS; last=$ENDPOINTS ;;
        esac
        : > "$dir/urls-$tenant.txt"
        for index in $(seq "$first" "$last"); do
            path=ep
            if [ "$faulty" = 1 ] && [ "$index" = 1 ]; then path=hang; fi
            if [ "$faulty" = 1 ] && [ "$index" = 2 ]; then path=slow; fi
            echo "$RECEIVER_URL/webhook/$label/$path/$index" >> "$dir/urls-$tenant.txt"
        done
        KEY="${keys[$tenant]}" ferry_bulk sessions "$dir/urls-$tenant.txt" --secret "$SECRET" --events "$EVENTS" \
            > "$dir/sessions-$tenant.txt"
        # The plan: ROLE KEY SESSION URL, a line per endpoint; the tasks: SESSION URL.
        paste -d' ' "$dir/sessions-$tenant.txt" "$dir/urls-$tenant.txt" | while read -r session url; do
            local role="$tenant" count="$TASKS_PER_ENDPOINT"
            case "$url" in */hang/*) role=hang; count=$FAULTY_TASKS ;; */slow/*) role=slow; count=$FAULTY_TASKS ;; esac
            echo "$role ${keys[$tenant]} $session $url" >> "$dir/plan.txt"
            [ "$tenant" = small ] && continue
            for k in $(seq 1 "$count"); do echo "$session $NGINX_URL/endpoint.bin?round=$label&session=$session&task=$k"; done
        done > "$dir/tasks-$tenant.txt"
    done
    if [ -n "${ANALYZE:-}" ]; then
        psql -X -q "postgresql:///ferry?host=$FERRY_DATA/postgres/run&user=ferry" -c 'ANALYZE webhook_endpoints' \
            || die "ANALYZE failed"
    fi
    log "round $label: $(wc -l < "$dir/plan.txt") endpoints, $(cat "$dir"/tasks-*.txt | wc -l) tasks + $SMALL_TASKS of the small tenant"

    local small_session
    small_session="$(cat "$dir/sessions-small.txt")"
    local start
    start=$(now)
    KEY="${keys[big]}" ferry_bulk create "$dir/tasks-big.txt" --concurrency 4 > "$dir/created-big.json" &
    local big_pid=$!
    if [ -s "$dir/tasks-mid.txt" ]; then KEY="${keys[mid]}" ferry_bulk create "$dir/tasks-mid.txt" --concurrency 2 > "$dir/created-mid.json"; fi
    # The one-endpoint tenant's downloads, a few a second, while the big tenant's events queue.
    for k in $(seq 1 "$SMALL_TASKS"); do
        KEY="${keys[small]}" api POST "/v1/sessions/$small_session/tasks" \
            "{\"kind\": \"download\", \"request\": {\"url\": \"$NGINX_URL/endpoint.bin?round=$label&small=$k\"}, \"resume\": true}" > /dev/null
        sleep 0.1
    done
    wait "$big_pid" || die "creating the big tenant's tasks failed"
    local created_at
    created_at=$(now)
    for tenant in big mid small; do
        SESSION="$(tr '\n' ' ' < "$dir/sessions-$tenant.txt")" KEY="${keys[$tenant]}" ferry_bulk wait --timeout 600 > /dev/null
    done
    elapsed "$start" "$created_at" > "$BENCH_TMP/created-seconds-$label"
    log "round $label: tasks created in $(elapsed "$start" "$created_at") s, all completed after $(elapsed "$start" "$(now)") s; waiting for the webhooks"
    "$PYTHON" "$BENCH_DIR/webhook_receiver.py" collect-endpoints --receiver "$RECEIVER_URL" --plan "$dir/plan.txt" \
        --events "$EVENTS" --timeout 300 > "$BENCH_TMP/figures-$label.json"
    jq -c '{created: .created, failures: .failures}' "$dir"/created-*.json | tr '\n' ' ' | sed 's/^/  created: /' >&2; echo >&2
}

machine_summary
round a 0
round b 1

a() { jq -r "$@" "$BENCH_TMP/figures-a.json"; }
b() { jq -r "$@" "$BENCH_TMP/figures-b.json"; }
delays() { jq -r ".roles.$2.delayMs | \"median \(.median) ms, p99 \(.p99) ms\"" "$BENCH_TMP/figures-$1.json"; }
for label in a b; do
    f() { jq -r "$@" "$BENCH_TMP/figures-$label.json"; }
    printf 'round %s (%s): %s endpoints, %s healthy events (%s expected, %s missing, %s duplicates, %s out of order)\n' \
        "$label" "$(if [ "$label" = a ]; then echo 'all healthy'; else echo 'one never answers, one answers after 2 s'; fi)" \
        "$(f .endpoints)" "$(f .healthyEvents)" "$(f .expected)" "$(f .missing)" "$(f .duplicates)" "$(f .outOfOrder)"
    printf '  healthy endpoints: %s events/s (first to last arrival, %s s; the tasks were created in %s s); the last arrived %s s after the last was written\n' \
        "$(f .eventsPerSecond)" "$(f .spanSeconds)" "$(cat "$BENCH_TMP/created-seconds-$label")" "$(f .drainSeconds)"
    printf '  event -> arrival: small tenant (1 endpoint) %s; big tenant (%s endpoints) %s; mid %s\n' \
        "$(delays "$label" small)" "$BIG_ENDPOINTS" "$(delays "$label" big)" "$(delays "$label" mid)"
    for role in small big; do
        printf '    %-5s event -> delivery created (fan-out) %s; -> first attempt starts %s; -> arrival %s\n' "$role" \
            "$(f ".roles.$role.eventToFanOutMs.median") ms" "$(f ".roles.$role.fanOutToAttemptMs.median") ms" \
            "$(f ".roles.$role.attemptToArrivalMs.median") ms"
    done
    printf '  the small tenant'"'"'s events were written %s..%s s after the big tenant'"'"'s first arrival, which arrived until %s s\n' \
        "$(elapsed "$(f .roles.big.firstArrival)" "$(f .roles.small.firstWritten)")" \
        "$(elapsed "$(f .roles.big.firstArrival)" "$(f .roles.small.lastWritten)")" \
        "$(elapsed "$(f .roles.big.firstArrival)" "$(f .roles.big.lastArrival)")"
    if [ "$label" = b ]; then
        printf '  faulty endpoints: never answering: %s requests (%s events); answering after 2 s: %s of its events arrived\n' \
            "$(f '.roles.hang.arrivals // 0')" "$(f '.roles.hang.events // 0')" "$(f '.roles.slow.events // 0')"
    fi
done
printf 'ratio of the healthy endpoints'"'"' events/s, (b) / (a): %s (target >= 0.9)\n' "$(ratio "$(b .eventsPerSecond)" "$(a .eventsPerSecond)")"
