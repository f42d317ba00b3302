#!/usr/bin/env bash
# Fuzzes Ferry's HTTP API from its own OpenAPI document with schemathesis (from PyPI): starts a
# `ferry serve` of its own (embedded PostgreSQL in a temporary data folder), creates a tenant, and
# runs schemathesis against /openapi.json with the tenant key for /v1 and the operator token for
# /admin/v1. It fails on any 5xx and on any answer the document does not allow (status, content
# type, headers, body schema). Settings: deploy/schemathesis/schemathesis.toml.
#
# Environment:
#   FERRY_SCRATCH_PATH          SwiftPM scratch path holding debug/ferry (default .build; built if missing)
#   SCHEMATHESIS_MAX_EXAMPLES   generated cases per operation and phase (default 25)
#   SCHEMATHESIS_MAX_TIME       time budget of the whole run in seconds (default 240)
#   SCHEMATHESIS_SEED           seed, to replay a run (default: random, printed)
#   SCHEMATHESIS_VENV           where to install schemathesis (default <scratch>/schemathesis-venv)
# Extra arguments go to `schemathesis run` (e.g. --phases=fuzzing, --include-path-regex=/v1/blobs).
#
# The fuzzer creates tasks with URLs it makes up; Ferry only fetches http(s) URLs that pass its
# address policy (loopback is allowed here), so some of them may reach out to made-up host names.
set -euo pipefail
cd "$(dirname "$0")/.."

schemathesis_version="4.32.5"
scratch="${FERRY_SCRATCH_PATH:-.build}"
venv="${SCHEMATHESIS_VENV:-$scratch/schemathesis-venv}"
max_examples="${SCHEMATHESIS_MAX_EXAMPLES:-25}"
max_time="${SCHEMATHESIS_MAX_TIME:-240}"
seed="${SCHEMATHESIS_SEED:-$(( (RANDOM << 15) | RANDOM ))}"

# schemathesis, pinned, in a virtual environment of its own.
if [ "$("$venv/bin/schemathesis" --version 2>/dev/null || true)" != "schemathesis, version $schemathesis_version" ]; then
    echo "Installing schemathesis $schemathesis_version into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$schemathesis_version"
fi

ferry="$scratch/debug/ferry"
if [ ! -x "$ferry" ]; then
    swift build --scratch-path "$scratch" --product ferry
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/ferry-schemathesis.XXXXXX")"
ferry_pid=""
cleanup() {
    if [ -n "$ferry_pid" ] && kill -0 "$ferry_pid" 2>/dev/null; then
        kill -TERM "$ferry_pid" 2>/dev/null || true
        wait "$ferry_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
base="http://127.0.0.1:$port"
operator_token="$(python3 -c 'import secrets; print(secrets.token_hex(24))')"

FERRY_DATA_DIR="$work/data" FERRY_HOST=127.0.0.1 FERRY_PORT="$port" FERRY_ADMIN_TOKEN="$operator_token" \
    FERRY_ALLOW_NETWORKS=127.0.0.0/8 FERRY_INSTANCE_ID=schemathesis FERRY_WORKERS=2 FERRY_LOG_LEVEL=warning \
    "$ferry" serve >"$work/ferry.log" 2>&1 &
ferry_pid=$!

for _ in $(seq 1 120); do
    if curl -fsS "$base/readyz" >/dev/null 2>&1; then break; fi
    if ! kill -0 "$ferry_pid" 2>/dev/null; then
        echo "ferry serve exited before it was ready:" >&2
        cat "$work/ferry.log" >&2
        exit 1
    fi
    sleep 0.5
done
curl -fsS "$base/readyz" >/dev/null

curl -fsS -X POST "$base/admin/v1/tenants" -H "Authorization: Bearer $operator_token" \
    -d '{"name": "schemathesis"}' >"$work/tenant.json"
tenant_id="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["id"])' "$work/tenant.json")"
tenant_key="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["apiKey"])' "$work/tenant.json")"

echo "Fuzzing $base/openapi.json (seed $seed, $max_examples examples per operation, at most ${max_time}s)" >&2
status=0
# One worker: with two, hypothesis (6.155, Python 3.11) sometimes fails inside its own AST
# parsing ("AST constructor recursion depth mismatch"), a runtime error of the tool, not of Ferry.
FERRY_TENANT_ID="$tenant_id" FERRY_TENANT_KEY="$tenant_key" FERRY_OPERATOR_TOKEN="$operator_token" \
    SCHEMATHESIS_HOOKS="deploy/schemathesis/ferry_hooks.py" \
    "$venv/bin/schemathesis" --config-file deploy/schemathesis/schemathesis.toml run "$base/openapi.json" \
    --max-examples "$max_examples" --max-time "$max_time" --seed "$seed" \
    --workers 1 --no-color --report junit --report-dir "$work/report" "$@" || status=$?

if grep -q "unhandled error" "$work/ferry.log"; then
    echo "Ferry logged unhandled errors (each answered 500):" >&2
    grep "unhandled error" "$work/ferry.log" | head -20 >&2
    status=1
fi
if [ "$status" -ne 0 ]; then
    mkdir -p "$scratch/schemathesis-report"
    cp -R "$work/report/." "$scratch/schemathesis-report/" 2>/dev/null || true
    cp "$work/ferry.log" "$scratch/schemathesis-report/ferry.log"
    echo "schemathesis failed (seed $seed); report and Ferry's log in $scratch/schemathesis-report" >&2
fi
exit "$status"
