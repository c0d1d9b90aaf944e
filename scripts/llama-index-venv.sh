#!/usr/bin/env bash
# Install LlamaIndex's OpenAI LLMs, OpenInference's instrumentor and this checkout of otel-prov
# into their own venv, for the conformance suite's ReActAgent (tests/conformance).
#
# Usage: scripts/llama-index-venv.sh [DIR]   (DIR defaults to .cache/llama-index-venv in the repo root)
#
# llama-index-llms-openai pins openai<3 and the project's dev extra pins openai-agents, which
# needs openai>=3, so the two cannot share .venv. otel-prov goes in editable: the suite runs
# this checkout. New versions here or a change of what pip installs otel-prov from
# (scripts/editable_key.py, not the dev extra's pins) reinstall. The last line printed
# is the path of the venv's `python`.
set -euo pipefail

PACKAGES=(
    "llama-index-core==0.14.25"
    "llama-index-llms-openai-like==0.8.1"
    "llama-index-llms-openai==0.8.3"
    "openai==2.54.0"
    "openinference-instrumentation-llama-index==4.6.1"
)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROJECT="$("${PYTHON:-python3}" "$ROOT/scripts/editable_key.py")"
exec bash "$ROOT/scripts/side-venv.sh" "${1:-$ROOT/.cache/llama-index-venv}" \
    "${PACKAGES[*]} otel-prov@$PROJECT" python "${PACKAGES[@]}" -e "$ROOT"
