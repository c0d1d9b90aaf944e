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

import dataclasses
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conformance import fields
from tests.conformance.openai_server import ScriptedOpenAI
from tests.conformance.tee import OtlpTee
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
    unread: Mapping[str, str] = field(default_factory=dict)
    """Readers of ``test_readers`` that cannot tell the run yet, and why: a strict expected
    failure, which fails the suite the day the reader tells it."""
    framework: str = ""
    """The agent's framework, as its package is named (the support matrix gives its pin)."""
    instrumentation: tuple[str, ...] = ()
    """The instrumentation packages that trace it; none: the framework traces itself."""


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
_OFFLINE = {
    "HAYSTACK_TELEMETRY_ENABLED": "False",
    "AGNO_TELEMETRY": "false",
    "CREWAI_DISABLE_TELEMETRY": "true",
    "ANONYMIZED_TELEMETRY": "false",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "TRACELOOP_TELEMETRY": "false",
}
"""The frameworks' own telemetry and downloads off: the network is closed to them (a call
home only slows the run down), and LiteLLM reads its model price map from the package."""
_FRAMEWORKS = ("frameworks-venv.sh", "OTEL_PROV_FRAMEWORKS_VENV")
_SK_SPANS = {
    "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS": "true",
    "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE": "true",
}
"""Semantic Kernel's spans, with what of their content it puts on spans."""
_SK_LOGS = (
    "in log records (issue 41): Semantic Kernel writes each chat span's messages (the "
    "user's question, the model's text) as Python log records, not on its chat spans"
)
_SK_WHY = (
    "why reaches a step's failed call from the step, and a step from its thought or the "
    "observations it used: Semantic Kernel's steps after the first have neither until its "
    "log records are read (issue 41), and its calls are part of its AutoFunctionInvocationLoop "
    "span, not of the session why reaches"
)
_NO_MODEL_SPAN = (
    "AutoGen AgentChat's own spans are invoke_agent and execute_tool only: no span of a "
    "model call, so no question, text, answer, model, provider or usage"
)
_AUTOGEN_TOOL = (
    "AutoGen's execute_tool spans carry the tool's name and call id only, not its "
    "arguments or result"
)
_LAST_TURN = (
    "with no model-call span the steps are the tool calls: the last turn, which calls no "
    "tool, is in no span"
)
_HAYSTACK_REPR = (
    "OpenInference's Haystack spans flatten the model's tool calls without their id, and "
    "the next request's tool messages with neither id nor content: the call id, the "
    "result and its error flag are only inside Python reprs of Haystack ChatMessage "
    "objects (ToolCallResult(result=..., error=True) in input.value)"
)
_LANGCHAIN = {
    "openinference": "openinference-instrumentation-langchain",
    "openllmetry": "opentelemetry-instrumentation-langchain",
}
_CREWAI = {
    "openinference": (
        "openinference-instrumentation-crewai",
        "openinference-instrumentation-openai",
    ),
    "openllmetry": ("opentelemetry-instrumentation-crewai", "opentelemetry-instrumentation-openai"),
}
_OLL_CREWAI_FAILURE = (
    "OpenLLMetry's CrewAI instrumentation records no span of a tool's run: the calls are "
    "read from the model's messages, and a failed one is only CrewAI's text handed to the "
    "model as its result ('Error executing tool: no forecast for Paris'), which no span "
    "marks as an error"
)
_CREWAI_ABSENT: Mapping[str, Mapping[str, str]] = {
    "openinference": {},
    "openllmetry": {
        name: _OLL_CREWAI_FAILURE for name in ("failed_call", "error_text", "failed_count")
    },
}
_HAYSTACK_NAME = (
    "a Haystack Agent has no name: OpenInference's Agent.run span is named by its class "
    "and carries no agent attribute"
)
_AGNO_ANSWER = (
    "Agno's run output (RunOutput.content, the AGENT span's output.value) joins the text "
    "of every model turn, the tool-calling turns' too: that is the agent's answer as Agno "
    "gives it"
)
_DSPY_IDS = (
    "a DSPy ReAct model names its tool and arguments in next_tool_name and "
    "next_tool_args text fields, with no call id, and the __call__ TOOL spans carry none"
)
_DSPY_NAME = "a DSPy module has no name: the ReAct.forward span is named by its class"
_DSPY_USAGE = (
    "OpenInference's DSPy LM.__call__ spans record no llm.token_count (DSPy keeps LiteLLM's "
    "usage in the LM's history, not in the call's output)"
)

SCENARIOS = (
    Scenario(
        "openinference-openai-agents-chat-run",
        "openai_agents_agent",
        ("openinference", "chat", "run"),
        framework="openai-agents",
        instrumentation=("openinference-instrumentation-openai-agents",),
        absent={"error_text": _REDACTED},
    ),
    Scenario(
        "openinference-openai-agents-chat-stream",
        "openai_agents_agent",
        ("openinference", "chat", "stream"),
        framework="openai-agents",
        instrumentation=("openinference-instrumentation-openai-agents",),
        absent={"error_text": _REDACTED, "tokens": _NO_STREAM_USAGE},
    ),
    *(
        Scenario(
            f"openinference-openai-agents-responses-{mode}",
            "openai_agents_agent",
            ("openinference", "responses", mode),
            framework="openai-agents",
            instrumentation=("openinference-instrumentation-openai-agents",),
            absent={"error_text": _REDACTED},
        )
        for mode in ("run", "stream")
    ),
    Scenario(
        "openinference-mcp-openai-agents-chat-run",
        "openai_agents_agent",
        ("openinference", "chat", "run", "mcp"),
        framework="openai-agents",
        instrumentation=(
            "openinference-instrumentation-openai-agents",
            "openinference-instrumentation-mcp",
        ),
        absent=_MCP_ERROR,
    ),
    *(
        Scenario(
            f"openllmetry-openai-agents-chat-{mode}",
            "openai_agents_agent",
            ("openllmetry", "chat", mode),
            framework="openai-agents",
            instrumentation=("opentelemetry-instrumentation-openai-agents",),
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
            framework="openai-agents",
            instrumentation=("opentelemetry-instrumentation-openai-agents",),
            absent={"error_text": _REDACTED},
        )
        for mode in ("run", "stream")
    ),
    *(
        Scenario(
            f"openinference-openai-{api}-{mode}",
            "openai_client_agent",
            ("openinference", api, mode),
            framework="openai",
            instrumentation=("openinference-instrumentation-openai",),
        )
        for api in ("chat", "responses")
        for mode in ("run", "stream")
    ),
    *(
        Scenario(
            f"genai-openai-v2-{content}-{mode}",
            "openai_client_agent",
            ("genai", "chat", mode),
            framework="openai",
            instrumentation=("opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai"),
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
            framework="langchain",
            instrumentation=(_LANGCHAIN[instrumentation],),
        )
        for instrumentation in ("openinference", "openllmetry")
        for mode in ("run", "stream")
    ),
    *(
        Scenario(
            f"openinference-smolagents-{mode}",
            "smolagents_agent",
            (mode,),
            framework="smolagents",
            instrumentation=("openinference-instrumentation-smolagents",),
        )
        for mode in ("run", "stream")
    ),
    *(
        Scenario(
            f"pydantic-ai-v{version}-{mode}",
            "pydantic_ai_agent",
            (str(version), mode),
            framework="pydantic-ai-slim",
        )
        for version in (2, 5, 6)
        for mode in ("run", "stream")
    ),
    *(
        Scenario(
            f"openinference-llama-index-react-{mode}",
            "llama_index_agent",
            (mode,),
            framework="llama-index-core",
            instrumentation=("openinference-instrumentation-llama-index",),
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
            framework="strands-agents",
            environment=_STRANDS_CONVENTIONS[conventions],
            venv=("strands-venv.sh", "OTEL_PROV_STRANDS_VENV"),
            absent={"provider": _STRANDS_PROVIDER},
        )
        for conventions in _STRANDS_CONVENTIONS
    ),
    *(
        Scenario(
            f"{instrumentation}-crewai",
            "crewai_agent",
            (instrumentation,),
            framework="crewai",
            instrumentation=_CREWAI[instrumentation],
            environment=_OFFLINE,
            venv=("crewai-venv.sh", "OTEL_PROV_CREWAI_VENV"),
            absent=_CREWAI_ABSENT[instrumentation],
        )
        for instrumentation in _CREWAI_ABSENT
    ),
    Scenario(
        "openinference-dspy-react",
        "dspy_agent",
        (),
        framework="dspy",
        instrumentation=("openinference-instrumentation-dspy",),
        environment=_OFFLINE,
        venv=_FRAMEWORKS,
        absent={"agent": _DSPY_NAME, "call_ids": _DSPY_IDS, "tokens": _DSPY_USAGE},
    ),
    Scenario(
        "openinference-haystack-agent",
        "haystack_agent",
        (),
        framework="haystack-ai",
        instrumentation=("openinference-instrumentation-haystack",),
        environment=_OFFLINE,
        venv=_FRAMEWORKS,
        absent={
            "agent": _HAYSTACK_NAME,
            **{
                name: _HAYSTACK_REPR
                for name in ("call_ids", "observation", "failed_call", "error_text", "failed_count")
            },
        },
    ),
    Scenario(
        "autogen-agentchat",
        "autogen_agent",
        ("alone",),
        framework="autogen-agentchat",
        environment=_OFFLINE,
        venv=_FRAMEWORKS,
        absent={
            **{
                name: _NO_MODEL_SPAN
                for name in ("question", "answer", "thoughts", "tokens", "model", "provider")
            },
            "steps": _LAST_TURN,
            "actions": _LAST_TURN,
            "arguments": _AUTOGEN_TOOL,
            "observation": _AUTOGEN_TOOL,
        },
    ),
    Scenario(
        "autogen-agentchat-openllmetry",
        "autogen_agent",
        ("openllmetry",),
        framework="autogen-agentchat",
        instrumentation=("opentelemetry-instrumentation-openai",),
        environment=_OFFLINE,
        venv=_FRAMEWORKS,
    ),
    Scenario(
        "agent-framework",
        "agent_framework_agent",
        (),
        framework="agent-framework-core",
        environment=_OFFLINE,
        venv=_FRAMEWORKS,
    ),
    Scenario(
        "semantic-kernel",
        "semantic_kernel_agent",
        (),
        framework="semantic-kernel",
        environment=_SK_SPANS,
        venv=("semantic-kernel-venv.sh", "OTEL_PROV_SEMANTIC_KERNEL_VENV"),
        absent={"question": _SK_LOGS, "thoughts": _SK_LOGS},
        unread={"why": _SK_WHY},
    ),
    Scenario(
        "openinference-agno",
        "agno_agent",
        (),
        framework="agno",
        instrumentation=("openinference-instrumentation-agno",),
        environment=_OFFLINE,
        venv=_FRAMEWORKS,
        absent={"answer": _AGNO_ANSWER},
    ),
    *(
        Scenario(
            f"openinference-litellm-{mode}",
            "litellm_agent",
            (mode,),
            framework="litellm",
            instrumentation=("openinference-instrumentation-litellm",),
            environment=_OFFLINE,
            venv=_FRAMEWORKS,
        )
        for mode in ("run", "stream")
    ),
    Scenario(
        "ag2",
        "ag2_agent",
        (),
        framework="ag2",
        environment=_OFFLINE,
        venv=_FRAMEWORKS,
    ),
    Scenario(
        "openinference-beeai",
        "beeai_agent",
        (),
        framework="beeai-framework",
        instrumentation=("openinference-instrumentation-beeai",),
        environment=_OFFLINE,
        venv=_FRAMEWORKS,
    ),
    *(
        Scenario(
            f"adk-{content}",
            "adk_agent",
            (),
            framework="google-adk",
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
    sent: tuple[tuple[str, str, bytes], ...] = ()
    """What the agent sent its receiver: (path, content type, body) of each request."""


def run_scenario(scenario: Scenario, directory: Path) -> Stores:
    """Run ``scenario``'s agent in ``directory``: its in-process and received stores."""
    stores = Stores(directory / "in-process", directory / "received")
    python = installed(*scenario.venv) if scenario.venv else Path(sys.executable)
    receivers = Receivers(directory)
    try:
        receiver = receivers.start("--store", str(stores.received), "--trace-idle", "0.5")
        with ScriptedOpenAI() as model, OtlpTee(receiver.http) as tee:
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
                    "OTEL_EXPORTER_OTLP_ENDPOINT": tee.url,
                    **scenario.environment,
                },
            )
        assert done.returncode == 0, done.stderr[-4000:]
        assert receiver.stop() == 0, receiver.log_text()[-4000:]
    finally:
        receivers.close()
    return dataclasses.replace(stores, sent=tuple(tee.kept))


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
        for reason in (
            *scenario.absent.values(),
            *scenario.lost.values(),
            *scenario.unread.values(),
        ):
            assert len(reason.split()) >= 5, (scenario.name, reason)
