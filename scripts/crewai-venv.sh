#!/usr/bin/env bash
# Install CrewAI, OpenInference's and OpenLLMetry's CrewAI and OpenAI instrumentors (CrewAI's
# own OpenAI LLM calls the openai client) and this checkout of otel-prov into their own venv,
# for the conformance suite's crews (tests/conformance).
#
# Usage: scripts/crewai-venv.sh [DIR]   (DIR defaults to .cache/crewai-venv in the repo root)
#
# crewai pins openai<3, mcp<2 and pydantic<2.13, where the project's dev extra pins
# openai-agents (openai>=3), mcp 2.3 and a newer pydantic, so it cannot share .venv (~1.1 GB,
# with chromadb). otel-prov goes in editable: the suite runs this
# checkout. New versions here or a change of what pip installs otel-prov from
# (scripts/editable_key.py, not the dev extra's pins) reinstall. The last line printed is
# the path of the venv's `python`.
set -euo pipefail

PACKAGES=(
    "crewai==1.15.30"
    "openinference-instrumentation-crewai==1.1.21"
    "openinference-instrumentation-openai==0.1.66"
    "opentelemetry-instrumentation-crewai==0.62.4"
    "opentelemetry-instrumentation-openai==0.62.4"
)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROJECT="$("${PYTHON:-python3}" "$ROOT/scripts/editable_key.py")"
exec bash "$ROOT/scripts/side-venv.sh" "${1:-$ROOT/.cache/crewai-venv}" \
    "${PACKAGES[*]} otel-prov@$PROJECT" python "${PACKAGES[@]}" -e "$ROOT"
