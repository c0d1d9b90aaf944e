#!/usr/bin/env bash
# Install Semantic Kernel and this checkout of otel-prov into their own venv, for the
# conformance suite's Semantic Kernel agent (tests/conformance), which Semantic Kernel
# traces itself.
#
# Usage: scripts/semantic-kernel-venv.sh [DIR]   (DIR defaults to .cache/semantic-kernel-venv in the repo root)
#
# semantic-kernel pins pydantic<2.14 and mcp<1.31, where the project's dev extra pins a
# newer pydantic and mcp 2.3 (and the frameworks venv pydantic 2.14), so it cannot share
# either. otel-prov goes in editable: the suite runs this checkout. New versions here or a
# change of what pip installs otel-prov from (scripts/editable_key.py, not the dev extra's
# pins) reinstall. The last line printed is the path of the venv's `python`.
set -euo pipefail

PACKAGES=(
    "semantic-kernel==1.45.0"
    "openai==3.63.0"
)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROJECT="$("${PYTHON:-python3}" "$ROOT/scripts/editable_key.py")"
exec bash "$ROOT/scripts/side-venv.sh" "${1:-$ROOT/.cache/semantic-kernel-venv}" \
    "${PACKAGES[*]} otel-prov@$PROJECT" python "${PACKAGES[@]}" -e "$ROOT"
