# Shared by the benchmarks: builds a release ferry, starts nginx and ferry on loopback with
# private state, and talks to Ferry's API. Source it; it cleans up on exit.
#
# Environment:
#   FERRY_SCRATCH_PATH  SwiftPM scratch path for the release build (default .build)
#   BENCH_SKIP_BUILD    set to use an existing binary without building
#   FERRY_BIN           a ferry binary to use instead of building one
#   BENCH_KEEP          set to keep the temporary folders (logs, data) after the run
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(dirname "$BENCH_DIR")"
BENCH_OUT="$BENCH_DIR/out"
FERRY_SCRATCH_PATH="${FERRY_SCRATCH_PATH:-.build}"
BENCH_ADMIN_TOKEN="bench-operator-token"
mkdir -p "$BENCH_OUT"
# Ferry's embedded PostgreSQL runs as an unprivileged user, so its folders live in /tmp (same disk here).
BENCH_TMP="$(mktemp -d /tmp/ferry-bench.XXXXXX)"
chmod 755 "$BENCH_TMP"
NGINX_PID=""
FERRY_PID=""
RECEIVER_PID=""

log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
now() { date +%s.%N; }
# The interpreter itself, not a version manager's shim (pyenv's costs ~0.1 s of bash per start,
# which would be counted in Ferry's time: its client is a python script).
PYTHON="$(python3 -c 'import sys; print(sys.executable)')"
# The benchmarks' API client. It uses the standard library only: -S skips site-packages, whose
# start-up files (certifi's, here) cost ~30 ms per start that aria2c does not pay.
ferry_bulk() { "$PYTHON" -S "$BENCH_DIR/ferry_bulk.py" "$@"; }
# elapsed START END -> seconds with 3 decimals
elapsed() { "$PYTHON" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$1" "$2"; }
ratio() { "$PYTHON" -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.2f}')" "$1" "$2"; }

bench_cleanup() {
    local status=$?
    if [ -n "$RECEIVER_PID" ] && kill -0 "$RECEIVER_PID" 2>/dev/null; then
        kill -TERM "$RECEIVER_PID" 2>/dev/null || true
        wait "$RECEIVER_PID" 2>/dev/null || true
    fi
    if [ -n "$FERRY_PID" ] && kill -0 "$FERRY_PID" 2>/dev/null; then
        kill -TERM "$FERRY_PID" 2>/dev/null || true
        for _ in $(seq 1 150); do kill -0 "$FERRY_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$FERRY_PID" 2>/dev/null || true
    fi
    stop_embedded_postgres
    if [ -n "$NGINX_PID" ] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill -QUIT "$NGINX_PID" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.1; done
    fi
    if [ -n "${BENCH_KEEP:-}" ] || [ "$status" -ne 0 ]; then
        log "kept $BENCH_TMP (logs: ferry.log, nginx/error.log)"
    else
        rm -rf "$BENCH_TMP"
    fi
}
trap bench_cleanup EXIT

# start_webhook_receiver: bench/webhook_receiver.py on loopback, with a new signing secret.
# Sets SECRET, RECEIVER_URL and RECEIVER_PID (stopped by the cleanup).
start_webhook_receiver() {
    SECRET="whsec_$(head -c 32 /dev/urandom | base64 -w0)"
    local port
    port="$(free_port)"
    RECEIVER_URL="http://127.0.0.1:$port"
    "$PYTHON" "$BENCH_DIR/webhook_receiver.py" serve --port "$port" --secret "$SECRET" > "$BENCH_TMP/receiver.log" 2>&1 &
    RECEIVER_PID=$!
    wait_for_http "$RECEIVER_URL/stats" 10 || die "the receiver did not start: $(cat "$BENCH_TMP/receiver.log")"
    log "webhook receiver (pid $RECEIVER_PID) at $RECEIVER_URL"
}

# cpu_seconds PID… -> the CPU time (user + system) those processes have used so far, in seconds.
cpu_seconds() {
    local ticks=0 pid
    for pid in "$@"; do
        [ -r "/proc/$pid/stat" ] && ticks=$((ticks + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
    done
    "$PYTHON" -c "import os, sys; print(f'{int(sys.argv[1]) / os.sysconf(\"SC_CLK_TCK\"):.2f}')" "$ticks"
}

# The embedded cluster's processes (postmaster and backends): they run as its own system user.
postgres_pids() { pgrep -u ferry-postgres | tr '\n' ' '; }

# A ferry that died (or was killed) leaves its embedded cluster running: stop it.
stop_embedded_postgres() {
    local cluster="$BENCH_TMP/ferry-data/postgres"
    [ -f "$cluster/postmaster.pid" ] || return 0
    local pid
    pid="$(head -1 "$cluster/postmaster.pid")"
    kill -0 "$pid" 2>/dev/null || return 0
    log "stopping the embedded PostgreSQL left behind (pid $pid)"
    kill -QUIT "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
}

install_dependencies() {
    "$REPO_DIR/deploy/install-dependencies.sh" nginx aria2 wrk jq
}

build_ferry() {
    if [ -n "${FERRY_BIN:-}" ]; then
        [ -x "$FERRY_BIN" ] || die "FERRY_BIN=$FERRY_BIN is not executable"
        return 0
    fi
    if [ -z "${BENCH_SKIP_BUILD:-}" ]; then
        log "building ferry (release, scratch path $FERRY_SCRATCH_PATH)"
        (cd "$REPO_DIR" && swift build -c release --scratch-path "$FERRY_SCRATCH_PATH" --product ferry >&2)
    fi
    FERRY_BIN="$(cd "$REPO_DIR" && cd "$FERRY_SCRATCH_PATH" && pwd)/release/ferry"
    [ -x "$FERRY_BIN" ] || die "no ferry binary at $FERRY_BIN"
}

free_port() {
    "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

wait_for_http() { # URL SECONDS
    local deadline=$(( $(date +%s) + $2 ))
    until curl -fsS -o /dev/null "$1" 2>/dev/null; do
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}

# start_nginx ROOT [RATE [HOSTS]]: serves ROOT on a free port; /slow/ is limited to RATE per
# connection (nginx limit_rate, e.g. 4k). HOSTS loopback addresses to listen on (default 1:
# 127.0.0.1); more spread connections over hosts. Sets NGINX_PORT and NGINX_URL.
start_nginx() {
    local root="$1" rate="${2:-0}" hosts="${3:-1}"
    local prefix="$BENCH_TMP/nginx"
    mkdir -p "$prefix/logs" "$prefix/tmp"
    NGINX_PORT="$(free_port)"
    NGINX_URL="http://127.0.0.1:$NGINX_PORT"
    local listens="" user=""
    for address in $(loopback_hosts "$hosts"); do listens+="        listen $address:$NGINX_PORT backlog=4096;"$'\n'; done
    [ "$(id -u)" -eq 0 ] && user="user root;"
    cat > "$prefix/nginx.conf" <<CONF
$user
worker_processes 2;
worker_rlimit_nofile 20000;
pid $prefix/nginx.pid;
error_log $prefix/error.log warn;
events { worker_connections 16000; multi_accept on; }
http {
    access_log off;
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    client_body_temp_path $prefix/tmp;
    proxy_temp_path $prefix/tmp;
    fastcgi_temp_path $prefix/tmp;
    uwsgi_temp_path $prefix/tmp;
    scgi_temp_path $prefix/tmp;
    server {
$listens
        root $root;
        location /slow/ { limit_rate $rate; }
        location = /nginx-status { stub_status; }
    }
}
CONF
    nginx -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/error.log" -g 'daemon off;' &
    NGINX_PID=$!
    wait_for_http "$NGINX_URL/" 10 || curl -s -o /dev/null -w '%{http_code}' "$NGINX_URL/" | grep -q 40 \
        || die "nginx did not start: $(cat "$prefix/error.log")"
    log "nginx (pid $NGINX_PID) serves $root at $NGINX_URL"
}

# The first N loopback addresses: 127.0.0.1, 127.0.0.2, … (all of 127/8 reaches this machine).
loopback_hosts() {
    "$PYTHON" -c 'import sys
for k in range(int(sys.argv[1])):
    print(f"127.0.{k // 250}.{k % 250 + 1}")' "$1"
}

# start_ferry: a release ferry serve with its own data folder and embedded PostgreSQL.
# Sets FERRY_PID, FERRY_URL, FERRY_DATA. Extra environment can be passed as arguments (NAME=value).
start_ferry() {
    FERRY_DATA="$BENCH_TMP/ferry-data"
    mkdir -p "$FERRY_DATA"
    local port
    port="$(free_port)"
    FERRY_URL="http://127.0.0.1:$port"
    env -u DATABASE_URL FERRY_DATA_DIR="$FERRY_DATA" FERRY_PORT="$port" FERRY_ALLOW_NETWORKS=127.0.0.0/8 \
        FERRY_ADMIN_TOKEN="$BENCH_ADMIN_TOKEN" FERRY_INSTANCE_ID=bench FERRY_LOG_LEVEL="${FERRY_LOG_LEVEL:-warning}" "$@" \
        "$FERRY_BIN" serve > "$BENCH_TMP/ferry.log" 2>&1 &
    FERRY_PID=$!
    local deadline=$(( $(date +%s) + 90 ))
    until [ "$(curl -s -o /dev/null -w '%{http_code}' "$FERRY_URL/readyz")" = 200 ]; do
        kill -0 "$FERRY_PID" 2>/dev/null || die "ferry exited: $(tail -20 "$BENCH_TMP/ferry.log")"
        [ "$(date +%s)" -lt "$deadline" ] || die "ferry not ready in 90 s: $(tail -20 "$BENCH_TMP/ferry.log")"
        sleep 0.1
    done
    log "ferry (pid $FERRY_PID) ready at $FERRY_URL, data in $FERRY_DATA"
}

# api METHOD PATH [JSON]: with the tenant key (KEY); prints the body, fails on >= 400.
api() {
    curl -fsS -X "$1" "$FERRY_URL$2" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' ${3:+-d "$3"}
}

# create_tenant: sets KEY and TENANT.
create_tenant() {
    local answer
    answer="$(curl -fsS -X POST "$FERRY_URL/admin/v1/tenants" -H "Authorization: Bearer $BENCH_ADMIN_TOKEN" -d '{"name": "bench"}')"
    KEY="$(jq -r .apiKey <<<"$answer")"
    TENANT="$(jq -r .id <<<"$answer")"
}

# create_session [CONFIGURATION_JSON]: sets SESSION.
create_session() {
    local configuration="${1:-}"
    [ -n "$configuration" ] || configuration='{"kind": "default"}'
    SESSION="$(api POST /v1/sessions "{\"configuration\": $configuration}" | jq -r .id)"
}

# create_task URL: a download that starts at once; prints its id.
create_task() {
    api POST "/v1/sessions/$SESSION/tasks" "{\"kind\": \"download\", \"request\": {\"url\": \"$1\"}, \"resume\": true}" | jq -r .id
}

# wait_task ID: long-polls until the task completes; prints the task.
wait_task() {
    local task
    while true; do
        task="$(api GET "/v1/tasks/$1?wait=120")"
        [ "$(jq -r .state <<<"$task")" = completed ] && break
    done
    printf '%s\n' "$task"
}

# The downloaded file of a task, in Ferry's data folder.
download_path() {
    printf '%s/tenants/%s/downloads/%s\n' "$FERRY_DATA" "$TENANT" "$1"
}

# nginx's open client connections (stub_status "Active connections", this request included).
nginx_active_connections() {
    curl -fsS "$NGINX_URL/nginx-status" | awk '/^Active connections:/ {print $3}'
}

# Resident and peak resident memory of a process, in KiB.
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
hwm_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }

machine_summary() {
    printf 'machine: %s cores, %s RAM, %s; load average %s\n' "$(nproc)" "$(free -h | awk '/^Mem:/ {print $2}')" "$(uname -sr)" "$(cut -d' ' -f1-3 /proc/loadavg)"
}
