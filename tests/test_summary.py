"""``summary``: a run in plain language, golden-tested on a known session.

The known session (``tests/session_tree.py``) has fixed ids and times, so its summary is
fixed too: ``tests/golden/known_session_summary.txt``.  Set ``OTEL_PROV_UPDATE_GOLDEN=1``
to rewrite the golden file after an intended change, and read the diff.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import otel_prov
from otel_prov.demo import run_demo_agent
from otel_prov.read import (
    IterationView,
    ModelCallView,
    SessionView,
    Usage,
    WhyGraph,
    WhyNode,
    open_store,
)
from otel_prov.read._summary import summarize
from otel_prov.setup._configure import configure
from tests.builders import store_runs
from tests.cli import run_cli
from tests.session_tree import known_session

GOLDEN = Path(__file__).parent / "golden" / "known_session_summary.txt"


@pytest.fixture(scope="module")
def known_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield store_runs(tmp_path_factory.mktemp("summary") / "store", known_session())


def test_the_known_session_reads_as_its_golden_summary(known_store: Path) -> None:
    told = open_store(known_store).summary("conv-1").text()
    if os.environ.get("OTEL_PROV_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(told, encoding="utf-8")
    assert told == GOLDEN.read_text(encoding="utf-8")


def test_the_summary_is_the_same_every_time(known_store: Path) -> None:
    reader = open_store(known_store)
    assert reader.summary("conv-1") == reader.summary("conv-1")


def test_every_sentence_refers_to_nodes_why_lists(known_store: Path) -> None:
    reader = open_store(known_store)
    told = reader.summary("conv-1")
    listed = {node.id for node in reader.why("conv-1").nodes}
    assert told.sentences
    for sentence in told.sentences:
        assert sentence.refs, sentence.text
        assert set(sentence.refs) <= listed, sentence.text


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("summary-demo") / "store"
    handle = configure(store=path, set_global=False, otlp=False, service_name="summary")
    run_demo_agent(tracer_provider=handle.tracer_provider)
    handle.shutdown()
    yield path


def test_the_demo_summary_names_the_failure_and_what_the_answer_rests_on(
    demo_store: Path,
) -> None:
    done = run_cli("summary", "demo-conversation", "--store", str(demo_store))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "weather-assistant was asked “What is the temperature in Paris right now, in Fahrenheit?”."
    )
    assert "get_weather [call_1]" in lines[1] and "which failed (TimeoutError" in lines[1]
    assert "does not support the answer" in lines[1]
    assert "The answer rests on get_weather [call_2] and calculator [call_3]." in lines
    assert "4 model calls used 717 input and 111 output tokens" in lines[-1]
    store = str(demo_store)
    as_json = run_cli("summary", "demo-conversation", "--store", store, "--format", "json")
    data = json.loads(as_json.stdout)
    assert [s["text"] for s in data["sentences"]] == lines
    missing = run_cli("summary", "nope", "--store", str(demo_store))
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.count("\n") == 1


def _view(
    ident: str, *, tokens: tuple[int, int], subs: tuple[SessionView, ...] = ()
) -> SessionView:
    model = ModelCallView(f"{ident}-llm", "m", tokens[0], tokens[1], "ok")
    step = IterationView(f"{ident}-1", 1, None, None, None, None, "ok", model_calls=(model,))
    return SessionView(
        ident, "0" * 32, "0" * 16, "agent", None, "ok", "2025-11-30T09:00:00Z",
        "2025-11-30T09:00:01Z", "q", "a", iterations=(step,), sub_sessions=subs,
    )  # fmt: skip


def test_tokens_count_the_whole_run_as_the_cost_does() -> None:
    """Cost and the listing count sub-agent sessions; the token sentence did not."""
    inner = _view("urn:x:inner", tokens=(100, 20))
    outer = _view("urn:x:outer", tokens=(10, 3), subs=(inner,))
    outer = dataclasses.replace(outer, usage=Usage({"input": 110, "output": 23}))
    graph = WhyGraph("urn:x:outer", (WhyNode("urn:x:outer", "AgentSession", "agent"),), ())
    last = summarize(outer, graph).sentences[-1].text
    assert "its 2 model calls (sub-agent sessions included) used 110 input and 23 output" in last


def test_a_run_whose_model_reported_no_usage_says_so_instead_of_zero_tokens(
    tmp_path: Path,
) -> None:
    """No ``gen_ai.usage.*`` on its model calls is not 0 tokens used."""
    store = tmp_path / "store"
    handle = configure(store=store, set_global=False, otlp=False)
    provider = handle.tracer_provider
    with (
        otel_prov.agent_session("quiet", conversation_id="no-usage", tracer_provider=provider),
        otel_prov.iteration(1, tracer_provider=provider),
        otel_prov.model_call("m", tracer_provider=provider),
    ):
        pass
    handle.shutdown()
    done = run_cli("summary", "no-usage", "--store", str(store))
    assert done.returncode == 0, done.stderr
    last = done.stdout.splitlines()[-1]
    assert "0 input" not in last and "0 output" not in last
    assert "its 1 model call reported no token usage" in last, last
    only_input = dataclasses.replace(_view("urn:x:one", tokens=(5, 0)), usage=Usage({"input": 5}))
    graph = WhyGraph("urn:x:one", (WhyNode("urn:x:one", "AgentSession", "agent"),), ())
    told = summarize(only_input, graph).sentences[-1].text
    assert "used 5 input tokens (no output tokens reported)" in told, told
