#!/usr/bin/env bash
# Install Chromium and its WebDriver (chromium, chromium-driver) from Debian packages, for
# the browser tests of `otel-prov serve` (selenium drives /usr/bin/chromium through
# /usr/bin/chromedriver; selenium-manager and playwright's own browser downloads cannot
# work offline). Idempotent: does nothing when both are already installed.
# Needs root (or sudo) and apt-get.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    echo "install-chromium: chromium and chromedriver already installed"
    exit 0
fi

fail() {
    echo "install-chromium: ERROR: $*" >&2
    exit 1
}

command -v apt-get >/dev/null 2>&1 \
    || fail "apt-get not found; install chromium and its chromedriver by hand"

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || fail "must run as root (or have sudo) to apt-get install"
    SUDO=(sudo)
fi

echo "install-chromium: installing chromium and chromium-driver with apt-get"
"${SUDO[@]}" apt-get update \
    || fail "apt-get update failed"
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends chromium chromium-driver \
    || fail "apt-get install chromium chromium-driver failed"

command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 \
    || fail "chromium-driver installed but chromium or chromedriver is not on PATH"
echo "install-chromium: installed $(command -v chromium) and $(command -v chromedriver)"
