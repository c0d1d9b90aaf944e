"""The shared script as a LangChain ``create_agent`` agent on ``ChatOpenAI``, under a third-party
instrumentor.

``python -m tests.conformance.langchain_agent STORE INSTRUMENTATION MODE`` with
INSTRUMENTATION ``openinference`` (``openinference-instrumentation-langchain``) or
``openllmetry`` (``opentelemetry-instrumentation-langchain``) and MODE ``run``
(``agent.invoke``) or ``stream`` (``agent.stream``, the model streamed too).  The model is
``langchain_openai.ChatOpenAI`` on the scripted server at ``OPENAI_BASE_URL``.  A tool
that raises does so inside its tool run; a ``wrap_tool_call`` middleware, the LangChain 1
way, hands its text to the model as an error ``ToolMessage``, and the model carries on.
The process calls ``otel_prov.configure(store=STORE)`` and nothing else of ours.  It
prints the answer.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import otel_prov
from tests.self_traced import scenario


def instrument(name: str, provider: Any) -> None:
    if name == "openinference":
        from openinference.instrumentation.langchain import LangChainInstrumentor

        LangChainInstrumentor().instrument(tracer_provider=provider)
    elif name == "openllmetry":
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor

        LangchainInstrumentor().instrument(tracer_provider=provider)
    else:
        raise SystemExit(f"unknown instrumentation {name!r}")


def build(stream: bool) -> Any:
    from langchain.agents import create_agent
    from langchain.agents.middleware import wrap_tool_call
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    @wrap_tool_call
    def report_errors(request: Any, handler: Callable[[Any], Any]) -> Any:
        """The failed call's text goes back to the model, as the script's agents do."""
        try:
            return handler(request)
        except scenario.ForecastUnavailableError as error:
            return ToolMessage(
                content=f"Error: {error}", tool_call_id=request.tool_call["id"], status="error"
            )

    model = ChatOpenAI(
        model=scenario.MODEL,
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key="not-a-key",  # type: ignore[arg-type]
        streaming=stream,
        stream_usage=True,
    )
    return create_agent(
        model,
        [tool(function) for function in scenario.TOOLS],
        system_prompt="Answer questions about the weather.",
        middleware=[report_errors],
        name=scenario.AGENT,
    )


def run(agent: Any, mode: str) -> str:
    question = {"messages": [{"role": "user", "content": scenario.QUESTION}]}
    if mode == "stream":
        last: Any = None
        for update in agent.stream(question, stream_mode="values"):
            last = update
        return str(last["messages"][-1].content)
    return str(agent.invoke(question)["messages"][-1].content)


def main(argv: list[str]) -> int:
    store, instrumentation, mode = argv
    handle = otel_prov.configure(store=store, service_name="conformance")
    instrument(instrumentation, handle.tracer_provider)
    answer = run(build(mode == "stream"), mode)
    handle.shutdown()
    print(answer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
