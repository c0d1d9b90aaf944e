"""Third-party telemetry, field by field: real instrumentation packages, one scripted run.

Each scenario runs the shared script (tests/self_traced/scenario.py: one tool answers, a
second raises, then the model answers) as a real agent under a real, pinned
instrumentation package, its model the scripted OpenAI-compatible server of
``openai_server``.  The agent's process records provenance in process
(``otel_prov.configure()``'s processor, into one store) and exports OTLP to a real
``otel-prov receive`` (into another).  Both stores must give a reader the same run, and
each field of it must be the script's, unless the scenario says why not:

- ``absent``: the instrumentation does not put the value in its spans (the reason says
  where it goes instead);
- ``lost``: the spans hold it and the mapping loses it today: a strict expected failure,
  which fails the suite the day the field is read, so that the entry is removed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conformance import fields
from tests.conformance.openai_server import ScriptedOpenAI
from tests.receiver import Receivers
from tests.side_venv import installed

ROOT = Path(__file__).resolve().parents[2]

_REDACTED = (
    "openai-agents records a failing function tool's error as 'Error running tool (non-fatal)' "
    "with its details redacted, and the exception nowhere else in its spans"
)


@dataclass(frozen=True)
class Scenario:
    name: str
    module: str
    arguments: tuple[str, ...]
    absent: Mapping[str, str] = field(default_factory=dict)
    lost: Mapping[str, str] = field(default_factory=dict)
    environment: Mapping[str, str] = field(default_factory=dict)
    """What the agent's process is given besides the model's and the receiver's URLs."""
    venv: tuple[str, str] | None = None
    """The agent's side venv, for packages that cannot share ``.venv``: the script that
    installs it and the variable that may name its directory (``tests/side_venv.py``)."""


_OLL_LAST_TURN = (
    "OpenLLMetry records an openai-agents Chat Completions turn's text and calls only in "
    "the next request's gen_ai.input.messages (read from there); the last turn has no "
    "next request, and its text is in no span (the openai.response spans carry only "
    "gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model and "
    "gen_ai.input.messages; weather.agent and Agent Workflow no output)"
)
_NO_STREAM_USAGE = (
    "openai-agents streams Chat Completions without asking for usage "
    "(ModelSettings.include_usage unset), so the spans carry no token counts"
)
_OLL_CHAT = (
    "OpenLLMetry records an openai-agents Chat Completions generation with its input "
    "messages only: no output messages and no usage"
)

_GENAI_CONTENT = {
    "default": {},
    "latest": {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
    },
}
"""The official packages' content modes: none by default, or the newest conventions with
content on spans."""

_NO_CONTENT = (
    "the official packages record no content unless "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT says so"
)
_GENAI_ABSENT: Mapping[str, Mapping[str, str]] = {
    "default": {
        name: _NO_CONTENT for name in ("question", "answer", "thoughts", "arguments", "observation")
    },
    "latest": {},
}

_REACT_ABSENT: Mapping[str, str] = {
    "agent": "OpenInference's llama-index spans carry no agent name attribute: the name is "
    "only inside Python reprs of LlamaIndex events (current_agent_name='weather' in "
    "BaseWorkflowAgent.init_run's output.value)",
    "call_ids": "a ReAct model writes its calls as text, with no call id, and the "
    "FunctionTool.acall TOOL spans carry none (LlamaIndex's own uuid tool_id is only in "
    "Python reprs of its events)",
}
_REACT_STREAM_USAGE = (
    "OpenAILike streams without asking for usage (no stream_options.include_usage), so "
    "the server sends none and the astream_chat LLM spans carry no llm.token_count"
)

_MCP_FAILURE = (
    "openai-agents hands an MCP tool result flagged isError to the model as the tool's "
    "output: the get_forecast TOOL span ends OK, the error's text only in its output.value"
)
_MCP_ERROR = {"failed_call": _MCP_FAILURE, "failed_count": _MCP_FAILURE, "error_text": _MCP_FAILURE}

_STRANDS_CONVENTIONS: Mapping[str, Mapping[str, str]] = {
    "default": {},
    "latest": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"},
}
"""Strands' span shapes: content in message events by default, or the newest conventions."""
_STRANDS_PROVIDER = (
    "Strands records its own name, strands-agents, as gen_ai.system (default) or "
    "gen_ai.provider.name (latest) on every span; its model's provider, OpenAI, is in none"
)
_ADK_PROVIDER = (
    "ADK writes gen_ai.provider.name gcp.gemini on the generate_content span of every "
    "BaseLlm model, this OpenAI-compatible one too; the model's provider is in no span"
)
_ADK_ABSENT: Mapping[str, Mapping[str, str]] = {
    "default": {
        **_GENAI_ABSENT["default"],
        "error_text": "ADK's failed execute_tool span has status TOOL_ERROR and error.type "
        "TOOL_ERROR; the error's text is only in gen_ai.tool.call.result, content ADK "
        "records only under the GenAI opt-ins",
        "provider": _ADK_PROVIDER,
    },
    "latest": {"provider": _ADK_PROVIDER},
}
SCENARIOS = (
    Scenario(
        "openinference-openai-agents-chat-run",
        "openai_agents_agent",
        ("openinference", "chat", "run"),
        absent={"error_text": _REDACTED},
    ),
    Scenario(
        "openinference-openai-agents-chat-stream",
        "openai_agents_agent",
        ("openinference", "chat", "stream"),
        absent={"error_text": _REDACTED, "tokens": _NO_STREAM_USAGE},
    ),
    *(
        Scenario(
            f"openinference-openai-agents-responses-{mode}",
            "openai_agents_agent",
            ("openinference", "responses", mode),
            absent={"error_text": _REDACTED},
        )
        for mode in ("run", "stream")
    ),
    Scenario(
        "openinference-mcp-openai-agents-chat-run",
        "openai_agents_agent",
        ("openinference", "chat", "run", "mcp"),
        absent=_MCP_ERROR,
    ),
    *(
        Scenario(
            f"openllmetry-openai-agents-chat-{mode}",
            "openai_agents_agent",
            ("openllmetry", "chat", mode),
            absent={
                "error_text": _REDACTED,
                "answer": _OLL_CHAT,
                "tokens": _OLL_CHAT,
                "thoughts": _OLL_LAST_TURN,
            },
        )
        for mode in ("run", "stream")
    ),
    *(
        Scenario(
            f"openllmetry-openai-agents-responses-{mode}",
            "openai_agents_agent",
            ("openllmetry", "responses", mode),
            absent={"error_text": _REDACTED},
        )
        for mode in ("run", "stream")
    ),
    *(
        Scenario(
            f"openinference-openai-{api}-{mode}",
            "openai_client_agent",
            ("openinference", api, mode),
        )
        for api in ("chat", "responses")
        for mode in ("run", "stream")
    ),
    *(
        Scenario(
            f"genai-openai-v2-{content}-{mode}",
            "openai_client_agent",
            ("genai", "chat", mode),
            environment=_GENAI_CONTENT[content],
            absent=_GENAI_ABSENT[content],
        )
        for content in _GENAI_CONTENT
        for mode in ("run", "stream")
    ),
    *(
        Scenario(
            f"{instrumentation}-langchain-{mode}",
            "langchain_agent",
            (instrumentation, mode),
        )
        for instrumentation in ("openinference", "openllmetry")
        for mode in ("run", "stream")
    ),
    *(
        Scenario(
            f"openinference-smolagents-{mode}",
            "smolagents_agent",
            (mode,),
        )
        for mode in ("run", "stream")
    ),
    *(
        Scenario(
            f"pydantic-ai-v{version}-{mode}",
            "pydantic_ai_agent",
            (str(version), mode),
        )
        for version in (2, 5, 6)
        for mode in ("run", "stream")
    ),
    *(
        Scenario(
            f"openinference-llama-index-react-{mode}",
            "llama_index_agent",
            (mode,),
            venv=("llama-index-venv.sh", "OTEL_PROV_LLAMA_INDEX_VENV"),
            absent={
                **_REACT_ABSENT,
                **({"tokens": _REACT_STREAM_USAGE} if mode == "stream" else {}),
            },
        )
        for mode in ("run", "stream")
    ),
    *(
        Scenario(
            f"strands-{conventions}",
            "strands_agent",
            (),
            environment=_STRANDS_CONVENTIONS[conventions],
            venv=("strands-venv.sh", "OTEL_PROV_STRANDS_VENV"),
            absent={"provider": _STRANDS_PROVIDER},
        )
        for conventions in _STRANDS_CONVENTIONS
    ),
    Scenario(
        "openinference-crewai",
        "crewai_agent",
        (),
        venv=("crewai-venv.sh", "OTEL_PROV_CREWAI_VENV"),
    ),
    *(
        Scenario(
            f"adk-{content}",
            "adk_agent",
            (),
            environment=_GENAI_CONTENT[content],
            venv=("adk-venv.sh", "OTEL_PROV_ADK_VENV"),
            absent=_ADK_ABSENT[content],
        )
        for content in _GENAI_CONTENT
    ),
)


@dataclass(frozen=True)
class Stores:
    in_process: Path
    received: Path


def run_scenario(scenario: Scenario, directory: Path) -> Stores:
    """Run ``scenario``'s agent in ``directory``: its in-process and received stores."""
    stores = Stores(directory / "in-process", directory / "received")
    python = installed(*scenario.venv) if scenario.venv else Path(sys.executable)
    receivers = Receivers(directory)
    try:
        receiver = receivers.start("--store", str(stores.received), "--trace-idle", "0.5")
        with ScriptedOpenAI() as model:
            done = subprocess.run(
                [
                    str(python),
                    "-m",
                    f"tests.conformance.{scenario.module}",
                    str(stores.in_process),
                    *scenario.arguments,
                ],
                cwd=directory,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
                env={
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "HOME": str(directory),
                    "PYTHONPATH": str(ROOT),
                    "OPENAI_BASE_URL": model.base_url,
                    "OPENAI_API_KEY": "not-a-key",
                    "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.http,
                    **scenario.environment,
                },
            )
        assert done.returncode == 0, done.stderr[-4000:]
        assert receiver.stop() == 0, receiver.log_text()[-4000:]
    finally:
        receivers.close()
    return stores


CASES = [
    pytest.param(
        scenario,
        name,
        id=f"{scenario.name}-{name}",
        marks=[pytest.mark.xfail(strict=True, reason=scenario.lost[name])]
        if name in scenario.lost
        else [],
    )
    for scenario in SCENARIOS
    for name in fields.FIELDS
]


@pytest.mark.integration
@pytest.mark.parametrize(("scenario", "name"), CASES)
def test_a_field_is_read_as_the_script_has_it(
    scenario: Scenario,
    name: str,
    stores_of: Callable[[Scenario], Stores],
    observed_of: Callable[[Path], Mapping[str, object]],
) -> None:
    stores = stores_of(scenario)
    in_process = observed_of(stores.in_process)[name]
    received = observed_of(stores.received)[name]
    assert in_process == received, f"in process {in_process!r}, through receive {received!r}"
    if name in scenario.absent:
        assert not fields.matches(name, in_process), (
            f"{name} is read now ({in_process!r}): drop its 'absent' entry "
            f"({scenario.absent[name]})"
        )
        return
    assert fields.matches(name, in_process), (
        f"{name}: {in_process!r}, the script has {fields.EXPECTED[name]!r}"
    )


def test_every_scenario_accounts_for_every_field_it_does_not_read() -> None:
    for scenario in SCENARIOS:
        assert set(scenario.absent) <= set(fields.FIELDS), scenario.name
        assert set(scenario.lost) <= set(fields.FIELDS), scenario.name
        assert not set(scenario.absent) & set(scenario.lost), scenario.name
        for reason in (*scenario.absent.values(), *scenario.lost.values()):
            assert len(reason.split()) >= 5, (scenario.name, reason)
