"""The shared script as a hand-written agent loop on the ``openai`` client.

``python -m tests.conformance.openai_client_agent STORE INSTRUMENTATION API MODE`` with
API ``chat`` or ``responses`` and MODE ``run`` or ``stream``.  The client's calls are
traced by the instrumentation's own OpenAI instrumentor; the agent and its tools by the
means that instrumentation gives a user who writes the loop:

- ``openinference``: ``openinference-instrumentation-openai`` and ``OITracer``'s
  ``agent`` and ``tool`` spans;
- ``genai``: the official ``opentelemetry-instrumentation-openai-v2`` and
  ``opentelemetry-util-genai``'s ``invoke_local_agent`` and ``tool`` invocations (content
  and the newest span shapes as the environment's GenAI variables say).

The process calls ``otel_prov.configure(store=STORE)`` and nothing else of ours.  A tool
that raises does so inside its span; the loop hands the model the error's text, as an
agent framework does, and the model carries on.  It prints the answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import otel_prov
from tests.self_traced import scenario

SCHEMAS = {
    "get_weather": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
    "get_forecast": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city", "days"],
    },
}
TOOLS = {tool.__name__: tool for tool in scenario.TOOLS}
SYSTEM = "Answer questions about the weather."


class Tracing:
    """How the instrumentation marks the agent's run and each tool call."""

    def __init__(self, name: str, provider: Any, *, client: bool = True) -> None:
        """``client``: instrument the ``openai`` client too (not when another library's
        instrumentor traces the model's calls, LiteLLM's, which calls that client)."""
        self.name = name
        if name == "openinference":
            from openinference.instrumentation import OITracer, TraceConfig
            from openinference.instrumentation.openai import OpenAIInstrumentor

            if client:
                OpenAIInstrumentor().instrument(tracer_provider=provider)
            self._tracer = OITracer(provider.get_tracer(__name__), config=TraceConfig())
        elif name == "genai":
            from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
            from opentelemetry.util.genai.handler import TelemetryHandler

            OpenAIInstrumentor().instrument(tracer_provider=provider)
            self._handler = TelemetryHandler(tracer_provider=provider)
        else:
            raise SystemExit(f"unknown instrumentation {name!r}")

    @contextlib.contextmanager
    def agent(self) -> Iterator[Callable[[str], None]]:
        """A span around the run; what it yields records the answer."""
        if self.name == "openinference":
            with self._tracer.start_as_current_span(
                scenario.AGENT, openinference_span_kind="agent"
            ) as span:
                span.set_input(scenario.QUESTION)
                span.set_attribute("agent.name", scenario.AGENT)
                yield span.set_output
            return
        from opentelemetry.util.genai.types import InputMessage, OutputMessage, Text

        with self._handler.invoke_local_agent(
            agent_name=scenario.AGENT, request_model=scenario.MODEL
        ) as invocation:
            invocation.provider = "openai"
            invocation.input_messages = [
                InputMessage(role="user", parts=[Text(content=scenario.QUESTION)])
            ]

            def answered(text: str) -> None:
                invocation.output_messages = [
                    OutputMessage(
                        role="assistant", parts=[Text(content=text)], finish_reason="stop"
                    )
                ]

            yield answered

    def tool(self, name: str, call_id: str, arguments: dict[str, Any]) -> str:
        """Run the tool in its span; its result, or the text of what it raised."""
        try:
            if self.name == "openinference":
                with self._tracer.start_as_current_span(
                    name, openinference_span_kind="tool"
                ) as span:
                    span.set_tool(name=name, parameters=SCHEMAS[name])
                    span.set_input(json.dumps(arguments))
                    result = TOOLS[name](**arguments)
                    span.set_output(result)
                    return result
            with self._handler.tool(name, tool_call_id=call_id, tool_type="function") as call:
                call.arguments = arguments
                result = TOOLS[name](**arguments)
                call.tool_result = result
                return result
        except scenario.ForecastUnavailableError as error:
            return f"Error: {error}"


def chat_loop(client: Any, tracing: Tracing, stream: bool) -> str:
    tools = [
        {"type": "function", "function": {"name": n, "parameters": s}} for n, s in SCHEMAS.items()
    ]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": scenario.QUESTION},
    ]
    while True:
        content, calls = _chat_turn(client, messages, tools, stream)
        messages.append({"role": "assistant", "content": content, "tool_calls": calls or None})
        if not calls:
            return content
        for call in calls:
            arguments = json.loads(call["function"]["arguments"])
            result = tracing.tool(call["function"]["name"], call["id"], arguments)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})


def _chat_turn(
    client: Any, messages: list[dict[str, Any]], tools: list[Any], stream: bool
) -> tuple[str, list[dict[str, Any]]]:
    if not stream:
        message = (
            client.chat.completions.create(model=scenario.MODEL, messages=messages, tools=tools)
            .choices[0]
            .message
        )
        calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in message.tool_calls or ()
        ]
        return message.content or "", calls
    content, calls = "", {}
    for chunk in client.chat.completions.create(
        model=scenario.MODEL,
        messages=messages,
        tools=tools,
        stream=True,
        stream_options={"include_usage": True},
    ):
        for choice in chunk.choices:
            content += choice.delta.content or ""
            for delta in choice.delta.tool_calls or ():
                call = calls.setdefault(
                    delta.index,
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                )
                call["id"] = delta.id or call["id"]
                if delta.function is not None:
                    call["function"]["name"] += delta.function.name or ""
                    call["function"]["arguments"] += delta.function.arguments or ""
    return content, [calls[i] for i in sorted(calls)]


def responses_loop(client: Any, tracing: Tracing, stream: bool) -> str:
    tools = [{"type": "function", "name": n, "parameters": s} for n, s in SCHEMAS.items()]
    items: list[Any] = [{"role": "user", "content": scenario.QUESTION}]
    while True:
        if stream:
            with client.responses.stream(
                model=scenario.MODEL, input=items, tools=tools, instructions=SYSTEM
            ) as events:
                for _ in events:
                    pass
                response = events.get_final_response()
        else:
            response = client.responses.create(
                model=scenario.MODEL, input=items, tools=tools, instructions=SYSTEM
            )
        calls = [item for item in response.output if item.type == "function_call"]
        items += [item.model_dump(exclude_none=True) for item in response.output]
        if not calls:
            return response.output_text
        for call in calls:
            result = tracing.tool(call.name, call.call_id, json.loads(call.arguments))
            items.append(
                {"type": "function_call_output", "call_id": call.call_id, "output": result}
            )


def main(argv: list[str]) -> int:
    from openai import OpenAI

    store, instrumentation, api, mode = argv
    handle = otel_prov.configure(store=store, service_name="conformance")
    tracing = Tracing(instrumentation, handle.tracer_provider)
    client = OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="not-a-key")
    loop = chat_loop if api == "chat" else responses_loop
    with tracing.agent() as answered:
        answer = loop(client, tracing, mode == "stream")
        answered(answer)
    handle.shutdown()
    print(answer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
