"""The shared script as a Google ADK ``LlmAgent`` on the scripted server, traced by ADK itself.

``python -m tests.conformance.adk_agent STORE`` in the side venv of ``scripts/adk-venv.sh``
(ADK pins an older OpenTelemetry than the project's).  ADK has no OpenAI model of its own
without LiteLLM, so the agent's model is a ``BaseLlm`` that asks the scripted server at
``OPENAI_BASE_URL`` over HTTP (Chat Completions, the conversation ADK gives it each turn),
and answers with what the server said, its usage included.  ADK writes its GenAI spans to
the global ``TracerProvider``, the one ``otel_prov.configure(store=STORE)`` sets, with
content only under the GenAI opt-ins (``OTEL_SEMCONV_STABILITY_OPT_IN`` and
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``).  A tool that raises would end an ADK
run; the agent's ``on_tool_error_callback`` hands the error to the model as the tool's
result instead, as the other frameworks of the suite do, and the model carries on.  It
prints the answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.request
from collections.abc import AsyncGenerator
from typing import Any

import otel_prov
from tests.self_traced import scenario


def chat_messages(contents: list[Any]) -> list[dict[str, Any]]:
    """ADK's conversation (``types.Content`` of roles ``user`` and ``model``) as Chat
    Completions messages: text, the calls the model asked for, the tools' responses."""
    found: list[dict[str, Any]] = []
    for content in contents:
        parts = content.parts or []
        text = "".join(part.text for part in parts if part.text)
        calls = [
            {
                "id": part.function_call.id,
                "type": "function",
                "function": {
                    "name": part.function_call.name,
                    "arguments": json.dumps(part.function_call.args or {}),
                },
            }
            for part in parts
            if part.function_call
        ]
        responses = [part.function_response for part in parts if part.function_response]
        if content.role == "model":
            found.append({"role": "assistant", "content": text or None, "tool_calls": calls})
        elif responses:
            found += [
                {"role": "tool", "tool_call_id": r.id, "content": json.dumps(r.response)}
                for r in responses
            ]
        else:
            found.append({"role": "user", "content": text})
    return found


def main(argv: list[str]) -> int:
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    class ScriptedServerModel(BaseLlm):
        """The scripted server as an ADK model: one Chat Completions request per turn."""

        model: str = scenario.MODEL

        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            body = {"model": self.model, "messages": chat_messages(llm_request.contents)}
            request = urllib.request.Request(
                os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions",
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=30) as response:
                completion = json.load(response)
            message = completion["choices"][0]["message"]
            parts = [types.Part(text=message["content"])] if message.get("content") else []
            parts += [
                types.Part(
                    function_call=types.FunctionCall(
                        id=call["id"],
                        name=call["function"]["name"],
                        args=json.loads(call["function"]["arguments"]),
                    )
                )
                for call in message.get("tool_calls") or []
            ]
            usage = completion["usage"]
            yield LlmResponse(
                content=types.Content(role="model", parts=parts),
                usage_metadata=types.GenerateContentResponseUsageMetadata(
                    prompt_token_count=usage["prompt_tokens"],
                    candidates_token_count=usage["completion_tokens"],
                    total_token_count=usage["total_tokens"],
                ),
            )

    def handed_to_the_model(tool: Any, args: Any, tool_context: Any, error: Exception) -> dict:
        return {"error": str(error)}

    (store,) = argv
    handle = otel_prov.configure(store=store, service_name="conformance")
    agent = LlmAgent(
        name=scenario.AGENT,
        model=ScriptedServerModel(),
        instruction="Answer questions about the weather.",
        tools=list(scenario.TOOLS),
        on_tool_error_callback=handed_to_the_model,
    )

    async def run() -> str:
        runner = InMemoryRunner(agent=agent, app_name="weather-app")
        session = await runner.session_service.create_session(
            app_name="weather-app", user_id="user"
        )
        question = types.Content(role="user", parts=[types.Part(text=scenario.QUESTION)])
        answer = ""
        async for event in runner.run_async(
            user_id="user", session_id=session.id, new_message=question
        ):
            if event.is_final_response() and event.content and event.content.parts:
                answer = "".join(part.text or "" for part in event.content.parts)
        return answer

    answer = asyncio.run(run())
    handle.shutdown()
    print(answer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
