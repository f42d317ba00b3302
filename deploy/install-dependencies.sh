#!/usr/bin/env bash
# Installs the Debian packages Ferry builds and runs with, when they are missing:
# libcurl (OpenSSL flavour), libpq and OpenSSL headers (client keys are decrypted with
# libcrypto), the PostgreSQL server for the embedded database, and pkg-config. Extra package names given as arguments are installed too
# (the benchmarks ask for nginx, aria2 and wrk this way, the tests for gdb).
set -euo pipefail

packages=(libcurl4-openssl-dev libpq-dev libssl-dev postgresql pkg-config "$@")
missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing missing packages: ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
