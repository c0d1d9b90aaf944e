#!/usr/bin/env bash
# Install Arize Phoenix (an OTLP trace receiver, used by integration tests) into its own venv.
#
# Usage: scripts/phoenix-venv.sh [DIR]     (DIR defaults to .cache/phoenix-venv in the repo root)
#
# Phoenix is big (~850 MB, ~2 min to install), so it lives outside the project's .venv.
# Idempotent: a stamp file in DIR records the pinned version; when it matches and the
# executable exists, the script does nothing. Changing PHOENIX_VERSION reinstalls.
# The last line printed is the path of the `phoenix` executable.
set -euo pipefail

PHOENIX_VERSION="20.26.1"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/.cache/phoenix-venv}"
PYTHON="${PYTHON:-python3}"
STAMP="$DIR/.installed-arize-phoenix"
PHOENIX="$DIR/bin/phoenix"

fail() {
    echo "phoenix-venv: ERROR: $*" >&2
    exit 1
}

up_to_date() {
    [ -x "$PHOENIX" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$PHOENIX_VERSION" ]
}

if up_to_date; then
    echo "$PHOENIX"
    exit 0
fi

command -v "$PYTHON" >/dev/null 2>&1 || fail "$PYTHON not found"
mkdir -p "$(dirname "$DIR")" || fail "cannot create $(dirname "$DIR")"

# Two runs at once (parallel test sessions) would install into the same venv: take a lock.
if command -v flock >/dev/null 2>&1; then
    exec 9>"$DIR.lock"
    flock 9 || fail "cannot lock $DIR.lock"
    if up_to_date; then # installed by the run we waited for
        echo "$PHOENIX"
        exit 0
    fi
fi

if [ -e "$DIR" ]; then
    # Only ever delete what looks like a venv (or an empty directory), never a wrong argument.
    if [ -f "$DIR/pyvenv.cfg" ] || [ -z "$(ls -A "$DIR" 2>/dev/null)" ]; then
        echo "phoenix-venv: replacing $DIR (stamp: $(cat "$STAMP" 2>/dev/null || echo none))" >&2
        rm -rf "$DIR"
    else
        fail "$DIR exists and is not a venv; remove it or pass another directory"
    fi
fi

echo "phoenix-venv: creating venv $DIR" >&2
"$PYTHON" -m venv "$DIR" \
    || fail "'$PYTHON -m venv $DIR' failed (on Debian: apt-get install python3-venv)"

echo "phoenix-venv: installing arize-phoenix==$PHOENIX_VERSION (about 2 minutes, 850 MB)" >&2
"$DIR/bin/python" -m pip install --disable-pip-version-check -q "arize-phoenix==$PHOENIX_VERSION" >&2 \
    || fail "pip install arize-phoenix==$PHOENIX_VERSION into $DIR failed"

[ -x "$PHOENIX" ] || fail "arize-phoenix installed but $PHOENIX is missing"
echo "$PHOENIX_VERSION" >"$STAMP"
echo "phoenix-venv: installed arize-phoenix $PHOENIX_VERSION" >&2
echo "$PHOENIX"
