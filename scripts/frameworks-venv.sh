#!/usr/bin/env bash
# Install eight agent frameworks, the instrumentations the conformance suite runs them
# under, and this checkout of otel-prov into one venv of their own (tests/conformance):
# DSPy, Haystack, AutoGen AgentChat, Microsoft Agent Framework, Agno, LiteLLM, AG2 and
# BeeAI, with OpenInference's DSPy, Haystack, Agno, LiteLLM and BeeAI instrumentors and
# OpenLLMetry's OpenAI instrumentor (AutoGen's tracing guide sets it beside AutoGen's own
# spans).
#
# Usage: scripts/frameworks-venv.sh [DIR]   (DIR defaults to .cache/frameworks-venv in the repo root)
#
# Their pins agree with each other (openai 3.63, pydantic 2.14, OpenTelemetry 1.45, one
# resolution of 121 packages), so they share one venv: one install instead of eight. They
# stay out of .venv, whose dev extra they would grow by a hundred packages (litellm,
# huggingface_hub, boto3, numpy...) that no other test needs. otel-prov goes in editable:
# the suite runs this checkout. New versions here or a change of what pip installs
# otel-prov from (scripts/editable_key.py, not the dev extra's pins) reinstall. The last
# line printed is the path of the venv's `python`.
set -euo pipefail

PACKAGES=(
    "dspy==3.4.1"
    "openinference-instrumentation-dspy==0.1.48"
    "haystack-ai==3.4.1"
    "openinference-instrumentation-haystack==0.1.46"
    "autogen-agentchat==0.7.5"
    "autogen-ext[openai]==0.7.5"
    "opentelemetry-instrumentation-openai==0.62.4"
    "agent-framework-core==1.23.0"
    "agent-framework-openai==1.17.0"
    "agno==3.1.10"
    "openinference-instrumentation-agno==1.0.15"
    "litellm==1.110.2"
    "openinference-instrumentation-litellm==0.1.51"
    "ag2[openai]==1.2.1"
    "beeai-framework==0.1.85"
    "openinference-instrumentation-beeai==0.1.30"
    "openinference-instrumentation-openai==0.1.66"
    "openai==3.63.0"
)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROJECT="$("${PYTHON:-python3}" "$ROOT/scripts/editable_key.py")"
exec bash "$ROOT/scripts/side-venv.sh" "${1:-$ROOT/.cache/frameworks-venv}" \
    "${PACKAGES[*]} otel-prov@$PROJECT" python "${PACKAGES[@]}" -e "$ROOT"
