#!/usr/bin/env bash
# Install Google ADK and this checkout of otel-prov into their own venv, for the tests of
# ADK's built-in tracing (tests/self_traced/test_adk.py, the conformance suite).
#
# Usage: scripts/adk-venv.sh [DIR]     (DIR defaults to .cache/adk-venv in the repo root)
#
# ADK pins opentelemetry-api/sdk <= 1.44 and the project's dev extra pins the 1.45 line, so
# ADK cannot share .venv (~190 MB, ~1.5 min to install). otel-prov goes in editable: the
# tests run this checkout. New versions here or a change of what pip installs otel-prov from
# (scripts/editable_key.py, not the dev extra's pins) reinstall. The last line
# printed is the path of the venv's `python`.
set -euo pipefail

PACKAGES=(
    "google-adk==2.13.0"
)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROJECT="$("${PYTHON:-python3}" "$ROOT/scripts/editable_key.py")"
exec bash "$ROOT/scripts/side-venv.sh" "${1:-$ROOT/.cache/adk-venv}" \
    "${PACKAGES[*]} otel-prov@$PROJECT" python "${PACKAGES[@]}" -e "$ROOT"
