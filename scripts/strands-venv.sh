#!/usr/bin/env bash
# Install Strands Agents (with its OpenAI model) and this checkout of otel-prov into their own
# venv, for the conformance suite's Strands agent (tests/conformance).
#
# Usage: scripts/strands-venv.sh [DIR]   (DIR defaults to .cache/strands-venv in the repo root)
#
# strands-agents pins mcp<2.2 and its OpenAI model openai<3, where the project's dev extra
# pins mcp 2.3 and openai-agents (openai>=3), so it cannot share .venv. otel-prov goes in
# editable: the suite runs this checkout. New versions here or a change of what pip installs
# otel-prov from (scripts/editable_key.py, not the dev extra's pins) reinstall. The last line
# printed is the path of the venv's `python`.
set -euo pipefail

PACKAGES=(
    "strands-agents[openai]==1.62.0"
    "openai==2.54.0"
)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROJECT="$("${PYTHON:-python3}" "$ROOT/scripts/editable_key.py")"
exec bash "$ROOT/scripts/side-venv.sh" "${1:-$ROOT/.cache/strands-venv}" \
    "${PACKAGES[*]} otel-prov@$PROJECT" python "${PACKAGES[@]}" -e "$ROOT"
