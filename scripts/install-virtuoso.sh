#!/usr/bin/env bash
# Install Virtuoso open source (virtuoso-t, isql-vt) from Debian packages, for integration tests.
# Idempotent: does nothing when virtuoso-t is already on PATH. Needs root (or sudo) and apt-get.
set -euo pipefail

if command -v virtuoso-t >/dev/null 2>&1; then
    echo "install-virtuoso: virtuoso-t already installed at $(command -v virtuoso-t)"
    exit 0
fi

fail() {
    echo "install-virtuoso: ERROR: $*" >&2
    exit 1
}

command -v apt-get >/dev/null 2>&1 \
    || fail "apt-get not found; install the Virtuoso open source server (virtuoso-t) by hand"

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || fail "must run as root (or have sudo) to apt-get install"
    SUDO=(sudo)
fi

echo "install-virtuoso: installing virtuoso-opensource with apt-get"
"${SUDO[@]}" apt-get update \
    || fail "apt-get update failed"
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends virtuoso-opensource \
    || fail "apt-get install virtuoso-opensource failed"

command -v virtuoso-t >/dev/null 2>&1 \
    || fail "virtuoso-opensource installed but virtuoso-t is not on PATH"
echo "install-virtuoso: installed $(command -v virtuoso-t)"
