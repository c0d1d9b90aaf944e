"""A local OpenAI-compatible server that plays the shared script (tests/self_traced/scenario.py).

Third-party instrumentations wrap the real ``openai`` client, so the agents of the
conformance suite talk HTTP to this server instead of a scripted model object: the
instrumentation sees real requests and real responses, streamed (server-sent events) or
not, through the Chat Completions API (``POST /v1/chat/completions``) and the Responses
API (``POST /v1/responses``).

Which turn to play is read from the request itself, as a stateless model would: the number
of tool calls the conversation already holds.  How to play it too: a Chat Completions
request that offers a ``final_answer`` tool (smolagents) gets the answer as a call to it,
and one whose system prompt asks for ``Action Input:`` lines (a ReAct agent) gets each
turn as ReAct text, its call written out rather than an API tool call, and one whose
system prompt lists output fields to fill in ``[[ ## name ## ]]`` sections (DSPy's chat
adapter) gets the turn as those fields: its thought, the tool it calls (``finish`` when it
calls none) and the call's arguments, or its reasoning and answer.  A tool the script
calls by a name the request offers only with a prefix (Semantic Kernel's
``Plugin-get_weather``) is called by the offered name.  The responses are
built by pure functions (``chat_completion``, ``chat_chunks``, ``response``,
``response_events``) so that a test can check them without a socket; ``ScriptedOpenAI`` is
the thin HTTP shell around them.

Usage: ``python -m tests.conformance.openai_server [PORT]`` prints its base URL and serves
until killed; in tests, ``with ScriptedOpenAI() as server: server.base_url``.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.self_traced.scenario import MODEL, TURNS, Call, Turn

CREATED = 1_764_547_200
"""A fixed creation time (2025-12-01), so that responses are the same on every run."""
INPUT_TOKENS = 40
"""Prompt tokens of the first request; each later turn reads 10 more."""
OUTPUT_TOKENS = 7


def usage_of(turn: int) -> tuple[int, int]:
    """Input and output tokens the server reports for turn ``turn`` (0-based)."""
    return INPUT_TOKENS + 10 * turn, OUTPUT_TOKENS + turn


def chat_turn(messages: Sequence[Mapping[str, Any]]) -> int:
    """The turn a Chat Completions request asks for: one per assistant message so far."""
    return sum(1 for message in messages if message.get("role") == "assistant")


def responses_turn(items: object, previous: object = None) -> int:
    """The turn a Responses request asks for: one per function call in its input, after
    the turn of the ``previous_response_id`` it continues (``resp_N``, as :func:`response`
    names turn N: a client that lets the server keep the conversation, as Microsoft Agent
    Framework's does, sends only the new items)."""
    after = 0
    if isinstance(previous, str) and previous.startswith("resp_"):
        number = previous.removeprefix("resp_")
        after = int(number) + 1 if number.isdigit() else 0
    if not isinstance(items, list):
        return after
    return after + sum(
        1 for item in items if isinstance(item, dict) and item.get("type") == "function_call"
    )


def _turn(index: int) -> Turn:
    return TURNS[min(index, len(TURNS) - 1)]


ANSWER_TOOL = "final_answer"
"""The tool an agent may offer the model to answer with (smolagents' agents answer so)."""


def answer_tool(tools: object) -> str | None:
    """``ANSWER_TOOL`` if a Chat Completions request offers it, else None: the model answers
    in text."""
    if not isinstance(tools, list):
        return None
    offered = {(tool.get("function") or {}).get("name") for tool in tools if isinstance(tool, dict)}
    return ANSWER_TOOL if ANSWER_TOOL in offered else None


def _calls(turn: Turn, answering: str | None, tools: object = None) -> tuple[Call, ...]:
    """The turn's tool calls; the answer too is one when the agent answers through a tool
    (its argument named as the tool's one parameter: ``answer``, or BeeAI's ``response``)."""
    if turn.calls or answering is None:
        return turn.calls
    return (Call(answering, {_answer_parameter(answering, tools): turn.thought}, "call_answer"),)


def _answer_parameter(answering: str, tools: object) -> str:
    for item in tools if isinstance(tools, list) else []:
        function = item.get("function") if isinstance(item, dict) else None
        if isinstance(function, dict) and function.get("name") == answering:
            properties = list((function.get("parameters") or {}).get("properties") or {})
            if len(properties) == 1:
                return str(properties[0])
    return "answer"


REACT_MARKER = "Action Input:"
"""What a ReAct agent's system prompt holds: the text format it parses the model's turns in."""


def is_react(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a Chat Completions request comes from a ReAct agent (a system message that
    asks for ``Action Input:`` lines): such an agent reads tool calls from the text."""
    return any(
        message.get("role") == "system" and REACT_MARKER in str(message.get("content"))
        for message in messages
    )


FIELDS_MARKER = "Your output fields are:"
"""What a system prompt asking for DSPy's ``[[ ## name ## ]]`` sections says before naming
the fields."""
_FIELD_NAME = re.compile(r"^\s*\d+\.\s*`(\w+)`", re.MULTILINE)
_OBSERVATION = re.compile(r"\[\[ ## observation_(\d+) ## \]\]")


def output_fields(messages: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The output fields a DSPy-style system prompt asks for, in order (none: another prompt)."""
    for message in messages:
        content = str(message.get("content"))
        if message.get("role") == "system" and FIELDS_MARKER in content:
            listed = content.split(FIELDS_MARKER, 1)[1].split("All interactions", 1)[0]
            return tuple(_FIELD_NAME.findall(listed))
    return ()


def fields_turn(messages: Sequence[Mapping[str, Any]]) -> int:
    """The turn a DSPy ReAct request asks for: one per observation its trajectory holds."""
    found = {
        int(index)
        for message in messages
        if message.get("role") == "user"
        for index in _OBSERVATION.findall(str(message.get("content")))
    }
    return len(found)


FINISH = "finish"
"""The tool a DSPy ReAct turn names when it calls none: the loop ends."""


def fields_text(index: int, names: Sequence[str]) -> str:
    """Turn ``index`` as DSPy's chat adapter parses it: each field in ``names`` as a
    ``[[ ## name ## ]]`` section (the thought, the tool called and its arguments; or the
    reasoning and the answer), then ``[[ ## completed ## ]]``."""
    turn = _turn(index)
    call = turn.calls[0] if turn.calls else None
    values = {
        "next_thought": turn.thought,
        "next_tool_name": call.tool if call else FINISH,
        "next_tool_args": call.arguments_json if call else "{}",
        "answer": TURNS[-1].thought,
    }
    sections = [f"[[ ## {name} ## ]]\n{values.get(name, turn.thought)}" for name in names]
    return "\n\n".join([*sections, "[[ ## completed ## ]]"])


def offered_name(tool: str, tools: object) -> str:
    """The name a request offers ``tool`` by: itself, else the one offered name that ends
    with ``-tool`` (a plugin's function in Semantic Kernel)."""
    offered = [
        name
        for item in (tools if isinstance(tools, list) else [])
        if isinstance(item, dict)
        and isinstance(name := (item.get("function") or {}).get("name"), str)
    ]
    if tool in offered:
        return tool
    prefixed = [name for name in offered if name.endswith(f"-{tool}")]
    return prefixed[0] if len(prefixed) == 1 else tool


def react_text(index: int) -> str:
    """Turn ``index`` as a ReAct model writes it: its thought, then either its call as
    ``Action:`` / ``Action Input:`` lines or, on the last turn, its ``Answer:``."""
    turn = _turn(index)
    lines = [f"Thought: {turn.thought}"]
    for call in turn.calls[:1]:  # ReAct takes one action per turn; the script has one
        lines += [f"Action: {call.tool}", f"{REACT_MARKER} {call.arguments_json}"]
    if not turn.calls:
        lines.append(f"Answer: {turn.thought}")
    return "\n".join(lines)


def chat_completion(
    index: int,
    *,
    answering: str | None = None,
    react: bool = False,
    fields: Sequence[str] = (),
    tools: object = None,
) -> dict[str, Any]:
    """The non-streamed Chat Completions answer for turn ``index``; ``answering``: the tool
    the last turn answers with (``answer_tool``), if any; ``react``: the turn in ReAct's
    text format (``react_text``), ``fields``: as DSPy's output fields (``fields_text``),
    either with no tool calls of the API's; ``tools``: what the request offers, which
    names the calls (``offered_name``)."""
    turn = _turn(index)
    calls = () if react or fields else _calls(turn, answering, tools)
    content = react_text(index) if react else fields_text(index, fields) if fields else turn.thought
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {
                "id": call.call_id,
                "type": "function",
                "function": {
                    "name": offered_name(call.tool, tools),
                    "arguments": call.arguments_json,
                },
            }
            for call in calls
        ]
    prompt, completion = usage_of(index)
    return {
        "id": f"chatcmpl-{index}",
        "object": "chat.completion",
        "created": CREATED,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def chat_chunks(index: int, *, include_usage: bool, **play: Any) -> Iterator[dict[str, Any]]:
    """The streamed Chat Completions answer for turn ``index``, chunk by chunk (``play``:
    how, as :func:`chat_completion` takes it)."""
    whole = chat_completion(index, **play)
    message = whole["choices"][0]["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {
            **{k: whole[k] for k in ("id", "created", "model")},
            "object": "chat.completion.chunk",
            "choices": [choice],
        }

    yield chunk({"role": "assistant", "content": ""})
    thought = message["content"]
    for start in range(0, len(thought), 8):  # a few deltas, as a real model streams
        yield chunk({"content": thought[start : start + 8]})
    for position, call in enumerate(message.get("tool_calls", ())):
        function = call["function"]
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": position,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": function["name"], "arguments": ""},
                    }
                ]
            }
        )
        yield chunk(
            {"tool_calls": [{"index": position, "function": {"arguments": function["arguments"]}}]}
        )
    yield chunk({}, whole["choices"][0]["finish_reason"])
    if include_usage:
        yield {
            **{k: whole[k] for k in ("id", "created", "model")},
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": whole["usage"],
        }


def response(index: int) -> dict[str, Any]:
    """The non-streamed Responses API answer for turn ``index``."""
    turn = _turn(index)
    output: list[dict[str, Any]] = [
        {
            "id": f"msg_{index}",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": turn.thought, "annotations": []}],
        }
    ]
    for call in turn.calls:
        output.append(
            {
                "id": f"fc_{call.call_id}",
                "type": "function_call",
                "call_id": call.call_id,
                "name": call.tool,
                "arguments": call.arguments_json,
                "status": "completed",
            }
        )
    prompt, completion = usage_of(index)
    return {
        "id": f"resp_{index}",
        "object": "response",
        "created_at": CREATED,
        "status": "completed",
        "model": MODEL,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        },
    }


def response_events(index: int) -> Iterator[dict[str, Any]]:
    """The streamed Responses API answer for turn ``index``, event by event."""
    whole = response(index)
    started = {**whole, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": started},
        {"type": "response.in_progress", "response": started},
    ]
    for position, item in enumerate(whole["output"]):
        opened = {**item, "status": "in_progress"}
        if item["type"] == "message":
            opened["content"] = []
            text = item["content"][0]["text"]
            part = {"type": "output_text", "text": "", "annotations": []}
            where = {"item_id": item["id"], "output_index": position, "content_index": 0}
            events += [
                {"type": "response.output_item.added", "output_index": position, "item": opened},
                {"type": "response.content_part.added", **where, "part": part},
                {"type": "response.output_text.delta", **where, "delta": text, "logprobs": []},
                {"type": "response.output_text.done", **where, "text": text, "logprobs": []},
                {"type": "response.content_part.done", **where, "part": item["content"][0]},
            ]
        else:
            opened["arguments"] = ""
            where = {"item_id": item["id"], "output_index": position}
            events += [
                {"type": "response.output_item.added", "output_index": position, "item": opened},
                {
                    "type": "response.function_call_arguments.delta",
                    **where,
                    "delta": item["arguments"],
                },
                {
                    "type": "response.function_call_arguments.done",
                    **where,
                    "arguments": item["arguments"],
                    "name": item["name"],
                },
            ]
        events.append({"type": "response.output_item.done", "output_index": position, "item": item})
    events.append({"type": "response.completed", "response": whole})
    for number, event in enumerate(events):
        yield {**event, "sequence_number": number}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass  # the tests read what the instrumentation recorded, not this log

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(
                {
                    "object": "list",
                    "data": [
                        {"id": MODEL, "object": "model", "created": CREATED, "owned_by": "tests"}
                    ],
                }
            )
        else:
            self._json({"error": {"message": f"no {self.path}"}}, status=404)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._json({"error": {"message": "the body is not JSON"}}, status=400)
            return
        stream = bool(body.get("stream"))
        if self.path.endswith("/chat/completions"):
            messages = body.get("messages") or []
            fields = output_fields(messages)
            index = fields_turn(messages) if fields else chat_turn(messages)
            play = {
                "answering": answer_tool(body.get("tools")),
                "react": is_react(messages),
                "fields": fields,
                "tools": body.get("tools"),
            }
            if stream:
                include = bool((body.get("stream_options") or {}).get("include_usage"))
                self._events(chat_chunks(index, include_usage=include, **play), named=False)
            else:
                self._json(chat_completion(index, **play))
        elif self.path.endswith("/responses"):
            index = responses_turn(body.get("input"), body.get("previous_response_id"))
            if stream:
                self._events(response_events(index), named=True)
            else:
                self._json(response(index))
        else:
            self._json({"error": {"message": f"no {self.path}"}}, status=404)

    def _json(self, payload: object, status: int = 200) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _events(self, events: Iterator[dict[str, Any]], *, named: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in events:
            head = f"event: {event['type']}\n" if named else ""
            self.wfile.write(f"{head}data: {json.dumps(event)}\n\n".encode())
        if not named:
            self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


class ScriptedOpenAI:
    """The server on 127.0.0.1 (a free port unless given), in a daemon thread."""

    def __init__(self, port: int = 0) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as ``base_url`` (``OPENAI_BASE_URL``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def main(argv: Sequence[str]) -> int:
    server = ScriptedOpenAI(int(argv[0]) if argv else 0)
    with server:
        print(server.base_url, flush=True)
        threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
