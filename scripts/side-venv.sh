#!/usr/bin/env bash
# Install packages the tests need into a venv of their own, beside the project's .venv.
#
# Usage: scripts/side-venv.sh DIR STAMP EXECUTABLE PIP_ARGUMENT...
#
# For what cannot share .venv: too big (Arize Phoenix) or pinning other versions of what
# the project pins (Google ADK's OpenTelemetry). Idempotent: STAMP (what is installed, as
# text) is kept in DIR/.installed-PACKAGE (PACKAGE: the first PIP_ARGUMENT's name); when
# it matches and DIR/bin/EXECUTABLE exists the script does nothing, and a new STAMP
# reinstalls. The last line printed is the executable's path.
set -euo pipefail

[ "$#" -ge 4 ] || { echo "usage: $0 DIR STAMP EXECUTABLE PIP_ARGUMENT..." >&2; exit 2; }
DIR="$1"
WANTED="$2"
EXECUTABLE="$DIR/bin/$3"
shift 3
PYTHON="${PYTHON:-python3}"
STAMP="$DIR/.installed-${1%%[=<>]*}"
NAME="side-venv $(basename "$DIR")"

fail() {
    echo "$NAME: ERROR: $*" >&2
    exit 1
}

up_to_date() {
    [ -x "$EXECUTABLE" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANTED" ]
}

if up_to_date; then
    echo "$EXECUTABLE"
    exit 0
fi

command -v "$PYTHON" >/dev/null 2>&1 || fail "$PYTHON not found"
mkdir -p "$(dirname "$DIR")" || fail "cannot create $(dirname "$DIR")"

# Two runs at once (parallel test sessions) would install into the same venv: take a lock.
if command -v flock >/dev/null 2>&1; then
    exec 9>"$DIR.lock"
    flock 9 || fail "cannot lock $DIR.lock"
    if up_to_date; then # installed by the run we waited for
        echo "$EXECUTABLE"
        exit 0
    fi
fi

if [ -e "$DIR" ]; then
    # Only ever delete what looks like a venv (or an empty directory), never a wrong argument.
    if [ -f "$DIR/pyvenv.cfg" ] || [ -z "$(ls -A "$DIR" 2>/dev/null)" ]; then
        echo "$NAME: replacing $DIR (stamp: $(cat "$STAMP" 2>/dev/null || echo none))" >&2
        rm -rf "$DIR"
    else
        fail "$DIR exists and is not a venv; remove it or pass another directory"
    fi
fi

echo "$NAME: creating venv $DIR" >&2
"$PYTHON" -m venv "$DIR" \
    || fail "'$PYTHON -m venv $DIR' failed (on Debian: apt-get install python3-venv)"

echo "$NAME: installing $*" >&2
"$DIR/bin/python" -m pip install --disable-pip-version-check -q "$@" >&2 \
    || fail "pip install $* into $DIR failed"

[ -x "$EXECUTABLE" ] || fail "installed $*, but $EXECUTABLE is missing"
echo "$WANTED" >"$STAMP"
echo "$NAME: installed $WANTED" >&2
echo "$EXECUTABLE"
