#!/usr/bin/env bash
# Install Arize Phoenix (an OTLP trace receiver, used by integration tests) into its own venv.
#
# Usage: scripts/phoenix-venv.sh [DIR]     (DIR defaults to .cache/phoenix-venv in the repo root)
#
# Phoenix is big (~850 MB, ~2 min to install), so it lives outside the project's .venv
# (scripts/side-venv.sh). Changing PHOENIX_VERSION reinstalls. The last line printed is the
# path of the `phoenix` executable.
set -euo pipefail

PHOENIX_VERSION="20.26.1"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec bash "$ROOT/scripts/side-venv.sh" "${1:-$ROOT/.cache/phoenix-venv}" \
    "$PHOENIX_VERSION" phoenix "arize-phoenix==$PHOENIX_VERSION"
