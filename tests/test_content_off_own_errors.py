"""Content capture off, our own spans: a failed call's error message keeps no argument
(issue 38 point 12).

With ``OTEL_PROV_CAPTURE_CONTENT=false`` our scopes never put their content on the span,
so the mapper, which withholds the content of other instrumentations' spans from their
error messages, had nothing to withhold: ``@tool_call`` raising
``ValueError("no weather for 'Atlantis home town'")`` stored that text in
``oprov:errorMessage``.  Each path (decorator, context manager, ``set_*`` inside, async,
generators, model call, session, iteration) runs here through the real processor into the
embedded store, and nothing in the store may hold the argument: not the call's
``oprov:errorMessage`` nor that of the iteration and session the exception ended next.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pyoxigraph
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_prov
from otel_prov.capture import _content
from otel_prov.prov._vocab import O
from otel_prov.prov._withheld import without_content

CITY = "Atlantis home town"
QUESTION = "Is it raining on Zanzibar island?"
THOUGHT = "Kilimanjaro summit forecast first"
MESSAGE = f"no weather for {CITY!r}"
WITHHELD = "no weather for '[withheld]'"


def _raise(city: str) -> None:
    raise ValueError(f"no weather for {city!r}")


def _decorator(provider: TracerProvider) -> None:
    @otel_prov.tool_call("get_weather", tracer_provider=provider)
    def get_weather(city: str) -> str:
        _raise(city)
        return "sunny"

    get_weather(CITY)


def _decorator_async(provider: TracerProvider) -> None:
    @otel_prov.tool_call("get_weather", tracer_provider=provider)
    async def get_weather(city: str) -> str:
        await asyncio.sleep(0)
        _raise(city)
        return "sunny"

    asyncio.run(get_weather(city=CITY))


def _generator(provider: TracerProvider) -> None:
    @otel_prov.tool_call("get_weather", tracer_provider=provider)
    def get_weather(city: str) -> Iterator[str]:
        yield "checking"
        _raise(city)

    list(get_weather(CITY))


def _async_generator(provider: TracerProvider) -> None:
    @otel_prov.tool_call("get_weather", tracer_provider=provider)
    async def get_weather(city: str) -> AsyncIterator[str]:
        yield "checking"
        _raise(city)

    async def consume() -> None:
        async for _ in get_weather(CITY):
            pass

    asyncio.run(consume())


def _context_manager(provider: TracerProvider) -> None:
    with otel_prov.tool_call("get_weather", arguments={"city": CITY}, tracer_provider=provider):
        _raise(CITY)


def _context_manager_set_arguments(provider: TracerProvider) -> None:
    with otel_prov.tool_call("get_weather", tracer_provider=provider):
        otel_prov.set_arguments({"city": CITY})
        _raise(CITY)


def _context_manager_async(provider: TracerProvider) -> None:
    async def call() -> None:
        scope = otel_prov.tool_call(
            "get_weather", arguments={"city": CITY}, tracer_provider=provider
        )
        async with scope:
            _raise(CITY)

    asyncio.run(call())


def _model_call(provider: TracerProvider) -> None:
    with otel_prov.model_call("gpt-test", provider="openai", tracer_provider=provider):
        otel_prov.set_question(CITY)  # what the model was asked, which its error repeats
        _raise(CITY)


def _raised_again(provider: TracerProvider) -> None:
    """The tool's error caught and raised again as another: its cause carries what the
    tool withheld."""
    try:
        _decorator(provider)
    except ValueError as exc:
        raise RuntimeError(f"the tool failed: {exc}") from exc


PATHS: dict[str, Callable[[TracerProvider], None]] = {
    "decorator": _decorator,
    "decorator async": _decorator_async,
    "generator": _generator,
    "async generator": _async_generator,
    "context manager": _context_manager,
    "context manager, set_arguments": _context_manager_set_arguments,
    "async with": _context_manager_async,
    "model call": _model_call,
    "raised again": _raised_again,
}


def _run(store: Path, body: Callable[[TracerProvider], None]) -> None:
    """A session with one iteration around ``body``, which raises out of both."""
    handle = otel_prov.configure(
        store=store, set_global=False, wal_dir=store.parent / "wal", capture_content=False
    )
    provider = handle.tracer_provider
    try:
        with (
            pytest.raises((ValueError, RuntimeError)),
            otel_prov.agent_session("weather", question=QUESTION, tracer_provider=provider),
            otel_prov.iteration(1, thought=THOUGHT, action="get_weather", tracer_provider=provider),
        ):
            body(provider)
    finally:
        handle.shutdown()


def _stored(store: Path) -> tuple[list[str], list[str]]:
    """Every error message stored, and every literal of the store."""
    db = pyoxigraph.Store.read_only(str(store))
    messages, literals = [], []
    for quad in db:
        if isinstance(quad.object, pyoxigraph.Literal):
            literals.append(quad.object.value)
            if quad.predicate.value == O.errorMessage[1:-1]:
                messages.append(quad.object.value)
    del db
    return messages, literals


@pytest.mark.parametrize("path", sorted(PATHS))
def test_an_error_message_in_the_store_keeps_no_argument(tmp_path: Path, path: str) -> None:
    store = tmp_path / "store"
    _run(store, PATHS[path])
    messages, literals = _stored(store)
    assert len(messages) >= 3, messages  # the call, the iteration, the session
    assert any("[withheld]" in message for message in messages), messages
    for secret in (CITY, "Atlantis", QUESTION, THOUGHT):
        leaked = [text for text in literals if secret in text]
        assert not leaked, (path, secret, leaked)


def test_the_span_itself_withholds_it_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """What every exporter of the span sees (Jaeger's, an OTLP Collector's): the status,
    the exception event's message and its stack trace."""
    _content.set_override(False)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with (
        pytest.raises(ValueError),
        otel_prov.tool_call("get_weather", arguments={"city": CITY}, tracer_provider=provider),
    ):
        _raise(CITY)
    (span,) = exporter.get_finished_spans()
    assert span.status.description == WITHHELD
    (event,) = span.events
    assert event.attributes is not None
    assert event.attributes["exception.message"] == WITHHELD
    stack = str(event.attributes["exception.stacktrace"])
    assert CITY not in stack and stack.endswith(f"ValueError: {WITHHELD}\n"), stack


def test_with_content_on_the_message_is_kept_whole() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with (
        pytest.raises(ValueError),
        otel_prov.tool_call("get_weather", arguments={"city": CITY}, tracer_provider=provider),
    ):
        _raise(CITY)
    (span,) = exporter.get_finished_spans()
    assert span.status.description == MESSAGE


def test_a_generator_tool_call_lasts_as_long_as_its_iteration_and_is_current_only_inside() -> None:
    """The decorator on a generator: one span for the whole iteration, the current span
    while the generator runs, not while its consumer does; values sent and closing
    early reach the generator."""
    from opentelemetry import trace

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    seen: list[str] = []

    @otel_prov.tool_call("echo", tracer_provider=provider)
    def echo(first: str) -> Iterator[str]:
        seen.append(trace.get_current_span().get_span_context().span_id.to_bytes(8).hex())
        received = yield first
        while received is not None:
            received = yield received.upper()

    stream = echo("a")
    assert next(stream) == "a"
    assert not trace.get_current_span().get_span_context().is_valid  # the consumer's
    assert stream.send("b") == "B"
    stream.close()
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool echo"
    assert seen == [span.context.span_id.to_bytes(8).hex()]


_WORD = st.text(
    alphabet=st.characters(categories=("L", "N"), include_characters=" -_."),
    min_size=4,
    max_size=40,
).filter(lambda text: text.strip() == text and len(text) >= 4)


@settings(max_examples=200, deadline=None)
@given(city=_WORD, before=st.text(max_size=20), after=st.text(max_size=20))
def test_any_argument_text_in_a_message_is_withheld(city: str, before: str, after: str) -> None:
    """The one function every path shares: an argument (as its JSON leaf) appearing in a
    message, anywhere and in any script, does not survive it."""
    message = f"{before}{city}{after}"
    out = without_content(message, ['{"city": ' + _json(city) + "}"])
    assert city not in out.replace("[withheld]", "\x00")
    assert "[withheld]" in out


def _json(text: str) -> str:
    import json

    return json.dumps(text)
