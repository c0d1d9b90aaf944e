"""``show`` says why: a run that carried on past a failed call, one that raised, parallel
calls in one step, and an id that several runs share, read back by the CLI as users run it.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

import otel_prov
from tests.cli import run_cli, show, shown_view


def recovered_run(p: TracerProvider) -> None:
    """A tool call fails; the agent tries another and answers."""
    with otel_prov.agent_session(
        "ops", question="Is host a up?", conversation_id="recovered", tracer_provider=p
    ) as session:
        with (
            otel_prov.iteration(1, thought="Ping it.", action="ping", tracer_provider=p),
            contextlib.suppress(TimeoutError),
            otel_prov.tool_call("ping", arguments={"host": "a"}, tracer_provider=p),
        ):
            raise TimeoutError("host a did not answer")
        with (
            otel_prov.iteration(2, thought="Ask the monitor.", action="status", tracer_provider=p),
            otel_prov.tool_call("status", arguments={"host": "a"}, tracer_provider=p),
        ):
            otel_prov.set_observation("a: up")
        otel_prov.set_answer("Host a is up.", span=session)


def crashed_run(p: TracerProvider) -> None:
    """A tool call fails, and then the agent itself raises."""
    with (
        pytest.raises(RuntimeError),
        otel_prov.agent_session(
            "ops", question="Restart host b?", conversation_id="crashed", tracer_provider=p
        ),
    ):
        with (
            otel_prov.iteration(1, thought="Restart it.", action="restart", tracer_provider=p),
            contextlib.suppress(TimeoutError),
            otel_prov.tool_call("restart", arguments={"host": "b"}, tracer_provider=p),
        ):
            raise TimeoutError("host b did not answer")
        raise RuntimeError("gave up on host b")


def parallel_run(p: TracerProvider) -> None:
    """One step calls two tools at once, each with its own arguments."""
    with otel_prov.agent_session(
        "ops", question="Weather and time?", conversation_id="parallel", tracer_provider=p
    ) as session:
        with otel_prov.iteration(
            1, thought="Both at once.", action="get_weather,get_time", tracer_provider=p
        ):
            for tool, arguments in (
                ("get_weather", '{"city": "Oslo"}'),
                ("get_time", '{"tz": "CET"}'),
            ):
                with otel_prov.tool_call(tool, arguments=arguments, tracer_provider=p):
                    otel_prov.set_observation(f"{tool} done")
        otel_prov.set_answer("Cold, and noon.", span=session)


def twice_run(p: TracerProvider) -> None:
    """Two runs of one conversation: its id matches both."""
    for question in ("First?", "Second?"):
        with otel_prov.agent_session(
            "ops", question=question, conversation_id="twice", tracer_provider=p
        ) as session:
            otel_prov.set_answer("yes", span=session)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("outcome") / "store"
    handle = otel_prov.configure(store=path, set_global=False, otlp=False)
    for run in (recovered_run, crashed_run, parallel_run, twice_run):
        run(handle.tracer_provider)
        handle.force_flush()
    handle.shutdown()
    return path


def _head(text: str) -> list[str]:
    """The session's own fields, up to its first iteration."""
    return text.split("\nIteration")[0].splitlines()[1:]


def test_a_run_that_carried_on_past_a_failed_call_is_ok_with_a_failed_call(store: Path) -> None:
    view = shown_view(store, "recovered")
    assert (view["status"], view["failed_calls"], view["error_type"]) == ("ok", 1, None)
    head = _head(show(store, "recovered"))
    assert "  status       ok" in head and "  failed calls 1" in head
    assert not any(line.startswith("  error ") for line in head)


def test_a_run_that_raised_says_why_in_text_and_json(store: Path) -> None:
    view = shown_view(store, "crashed")
    assert (view["status"], view["failed_calls"]) == ("error", 1)
    assert (view["error_type"], view["error_message"]) == ("RuntimeError", "gave up on host b")
    head = _head(show(store, "crashed"))
    assert head[1:4] == [
        "  status       error",
        "  error        RuntimeError: gave up on host b",
        "  failed calls 1",
    ]
    assert "RuntimeError: gave up on host b" in show(store, "crashed", "html")


def test_the_sessions_table_keeps_status_and_failed_calls_apart(store: Path) -> None:
    table = run_cli("sessions", "--store", str(store)).stdout.splitlines()
    header = table[0].split()
    assert header[7:9] == ["FAILED", "STATUS"]
    rows = {
        line.split()[4]: line.split() for line in table[1:] if "Restart" in line or "up?" in line
    }
    assert [rows[word][-3:-1] for word in ("Restart", "Is")] == [["1", "error"], ["1", "ok"]]


def test_parallel_calls_show_each_their_arguments(store: Path) -> None:
    text = show(store, "parallel")
    assert re.search(
        r"tool call    get_weather ok\n\s+arguments    \{\"city\": \"Oslo\"\}\n"
        r"\s+observation  get_weather done\n"
        r"\s+tool call    get_time ok\n\s+arguments    \{\"tz\": \"CET\"\}\n",
        text,
    ), text


def test_one_call_shows_its_arguments_once(store: Path) -> None:
    text = show(store, "recovered")
    assert text.count('{"host": "a"}') == 2  # on each step's action line, not again
    assert 'action       ping {"host": "a"}' in text


def test_several_matches_are_named_and_drawn_one_diagram_each(store: Path) -> None:
    shown = run_cli("show", "twice", "--store", str(store))
    assert shown.returncode == 0
    assert shown.stderr == "otel-prov: 2 sessions match 'twice'; showing each, oldest first\n"
    assert shown.stdout.count("Session urn:otel-prov:") == 2
    mermaid = show(store, "twice", "mermaid")
    blocks = re.findall(r"^```mermaid\n(.*?)^```$", mermaid, re.S | re.M)
    assert len(blocks) == 2
    for block, question in zip(blocks, ("First?", "Second?"), strict=True):
        assert block.startswith("flowchart TD\n") and block.count("flowchart") == 1
        assert f'Q["Question: {question}"]' in block
    headings = re.findall(r"^## Session (urn:otel-prov:\S+)$", mermaid, re.M)
    assert [view["id"] for view in json.loads(show(store, "twice", "json"))] == headings
    one = run_cli("show", "recovered", "--store", str(store), "--format", "mermaid")
    assert one.stdout.startswith("flowchart TD\n") and one.stderr == ""
