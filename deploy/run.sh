#!/usr/bin/env bash
# Runs Ferry on this machine: installs missing system packages, builds a release binary, and
# starts `ferry serve` (with its own PostgreSQL under FERRY_DATA_DIR unless DATABASE_URL is set).
# Arguments are passed to `ferry serve` (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-dependencies.sh
swift build -c release --product ferry
exec .build/release/ferry serve "$@"
