#!/usr/bin/env bash
# Runs every test: installs missing system packages, builds, and runs the whole suite. The
# tests start their own PostgreSQL cluster and origin servers on loopback; nothing else is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-dependencies.sh
swift build --build-tests
swift test --skip-build "$@"
