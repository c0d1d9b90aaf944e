"""``why``: the derivation graph behind an answer, read from a real embedded store."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import otel_prov
from otel_prov.cli._exit import ExitCode
from otel_prov.demo import run_demo_agent
from otel_prov.read import WhyGraph, open_store
from otel_prov.setup._configure import configure
from tests.cli import run_cli
from tests.retrieval_agent import HOURS, PRICES, rag_agent
from tests.test_show_nested import handoff_run
from tests.test_why_render import dot_parses, mermaid_lines_ok
from tests.why_runs import raises_after_steps


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("why") / "store"
    handle = configure(store=path, set_global=False, otlp=False, service_name="why-demo")
    run_demo_agent(tracer_provider=handle.tracer_provider)
    handle.shutdown()
    yield path


def _behind(graph: WhyGraph, ident: str, relations: tuple[str, ...]) -> set[str]:
    """Nodes reachable from ``ident`` along ``relations``."""
    seen, todo = set(), [ident]
    while todo:
        node = todo.pop()
        for edge in graph.outgoing(node):
            if edge.relation in relations and edge.target not in seen:
                seen.add(edge.target)
                todo.append(edge.target)
    return seen


def test_the_demo_answer_rests_on_the_second_weather_call_and_the_calculator(
    demo_store: Path,
) -> None:
    graph = open_store(demo_store).why("demo-conversation")
    root = graph.node(graph.root)
    assert root.type == "Answer"
    assert "64.4 °F" in root.label
    support = _behind(graph, graph.root, ("wasDerivedFrom", "wasGeneratedBy", "used"))
    calls = {
        graph.node(node).call_id: graph.node(node)
        for node in support
        if graph.node(node).type == "ToolCall"
    }
    assert sorted(calls) == ["call_2", "call_3"]
    assert {call.tool for call in calls.values()} == {"get_weather", "calculator"}
    assert all(call.status == "ok" and call.supports_answer for call in calls.values())
    observations = {
        graph.node(edge.target).label
        for edge in graph.outgoing(graph.root)
        if edge.relation == "wasDerivedFrom" and graph.node(edge.target).type == "Observation"
    }
    assert observations == {"Paris: 18 °C, light rain", "64.4"}


def test_the_timed_out_call_is_shown_failed_and_not_supporting(demo_store: Path) -> None:
    graph = open_store(demo_store).why("demo-conversation")
    (failed,) = [node for node in graph.nodes if node.status == "error" and node.type == "ToolCall"]
    assert failed.call_id == "call_1" and failed.tool == "get_weather"
    assert failed.error is not None and failed.error.startswith("TimeoutError: weather service")
    assert not failed.supports_answer
    assert failed.as_json()["supports_answer"] is False
    step = {edge.relation: graph.node(edge.target) for edge in graph.outgoing(failed.id)}
    assert step["partOf"].type == "Iteration" and step["partOf"].number == 1
    assert step["used"].type == "Arguments"
    assert all(node.supports_answer for node in graph.nodes if node.id != failed.id)


def test_json_is_the_contract_shape_and_every_edge_end_is_a_node(demo_store: Path) -> None:
    data = open_store(demo_store).why("demo-conversation").as_json()
    assert set(data) == {"root", "nodes", "edges"}
    ids = [node["id"] for node in data["nodes"]]
    assert len(ids) == len(set(ids)) and data["root"] == ids[0]
    for node in data["nodes"]:
        assert {"id", "type", "label"} <= set(node)
        assert set(node) <= {
            "id",
            "type",
            "label",
            "call_id",
            "tool",
            "status",
            "error",
            "part_of",
            "supports_answer",
        }
    for edge in data["edges"]:
        assert set(edge) == {"from", "to", "relation"}
        assert edge["from"] in ids and edge["to"] in ids
    types = {node["type"] for node in data["nodes"]}
    assert {"Question", "Thought", "Arguments", "Observation", "ToolCall", "Iteration"} <= types


def test_a_node_iri_gives_what_is_behind_that_node_only(demo_store: Path) -> None:
    reader = open_store(demo_store)
    whole = reader.why("demo-conversation")
    (calc,) = [n for n in whole.nodes if n.type == "Observation" and n.label == "64.4"]
    graph = reader.why(calc.id)
    assert graph.root == calc.id
    labels = {node.label for node in graph.nodes}
    assert "Paris: 18 °C, light rain" in labels  # the step that called the calculator used it
    assert not any(node.type == "Answer" for node in graph.nodes)
    assert len(graph.nodes) < len(whole.nodes)


def test_the_trace_id_and_the_session_iri_name_the_same_graph(demo_store: Path) -> None:
    reader = open_store(demo_store)
    by_conversation = reader.why("demo-conversation")
    session = next(n for n in by_conversation.nodes if n.type == "AgentSession")
    trace = session.id.split(":")[2]
    assert reader.why(trace) == by_conversation
    assert reader.why(session.id) == by_conversation


@pytest.mark.parametrize("ident", ["no-such-session", "urn:otel-prov:nothing:here", "a b <c>"])
def test_an_unknown_id_raises_lookup_error(demo_store: Path, ident: str) -> None:
    with pytest.raises(LookupError, match="no session, activity or entity"):
        open_store(demo_store).why(ident)


def test_the_command_writes_each_format_and_json_is_the_reader_s(demo_store: Path) -> None:
    as_json = run_cli("why", "demo-conversation", "--store", str(demo_store), "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout) == open_store(demo_store).why("demo-conversation").as_json()
    text = run_cli("why", "demo-conversation", "--store", str(demo_store))
    assert text.returncode == 0
    assert "get_weather [call_1]  FAILED TimeoutError" not in text.stdout  # the status is apart
    assert "FAILED TimeoutError: weather service" in text.stdout
    assert "(does not support the answer)" in text.stdout
    mermaid = run_cli("why", "demo-conversation", "--store", str(demo_store), "--format", "mermaid")
    assert mermaid.stdout.startswith("flowchart TD\n") and "class " in mermaid.stdout
    dot = run_cli("why", "demo-conversation", "--store", str(demo_store), "--format", "dot")
    assert dot.stdout.startswith("digraph why {") and dot.stdout.rstrip().endswith("}")


def test_the_command_exits_1_with_one_line_for_an_unknown_id(demo_store: Path) -> None:
    done = run_cli("why", "no-such-session", "--store", str(demo_store))
    assert done.returncode == ExitCode.NOTHING_FOUND
    assert done.stdout == ""
    assert done.stderr == "otel-prov: no session, activity or entity 'no-such-session'\n"


def test_retrieved_chunks_and_their_sources_are_behind_the_answer(tmp_path: Path) -> None:
    handle = configure(store=tmp_path / "s", set_global=False, otlp=False, service_name="rag")
    rag_agent(handle.tracer_provider)
    handle.shutdown()
    reader = open_store(tmp_path / "s")
    (run,) = reader.sessions().sessions
    graph = reader.why(run.id)
    support = _behind(graph, graph.root, ("wasDerivedFrom", "wasGeneratedBy", "used"))
    chunks = {graph.node(n).label: n for n in support if graph.node(n).type == "Document"}
    assert set(chunks) == {HOURS, PRICES, "x"}
    sources = {
        graph.node(edge.target).label
        for chunk in chunks.values()
        for edge in graph.outgoing(chunk)
        if edge.relation == "hadPrimarySource"
    }
    assert "https://www.louvre.fr/en/visit/hours" in sources and len(sources) == 3
    (retrieval,) = [n for n in graph.nodes if n.type == "Retrieval"]
    assert {graph.node(e.target).type for e in graph.outgoing(retrieval.id)} == {"Query"}


def test_a_handoff_run_rests_on_the_specialist_s_answer(tmp_path: Path) -> None:
    handle = configure(store=tmp_path / "s", set_global=False, otlp=False, service_name="h")
    handoff_run(handle.tracer_provider)
    handle.shutdown()
    reader = open_store(tmp_path / "s")
    graph = reader.why("delegated")
    root = graph.node(graph.root)
    assert root.type == "Answer"
    assert root.label == reader.session(reader.find("delegated")[0]).answer
    calls = {node.call_id for node in graph.nodes if node.type == "ToolCall"}
    assert {"call_b", "call_o"} <= calls  # the handoff and the specialist's lookup
    told = reader.summary("delegated")
    listed = {node.id for node in graph.nodes}
    assert all(set(sentence.refs) <= listed for sentence in told.sentences)


@pytest.mark.filterwarnings("ignore::DeprecationWarning:pydot")
def test_hostile_strings_in_every_field_give_valid_diagrams(tmp_path: Path) -> None:
    """Question, thought, action, arguments, tool name, call id, observation, error and
    answer all hostile, through a real store and back."""
    hostile = '"]; n9["x"] --> n0 \\N\n#quot; <b>&amp;</b> `|{}` \u2028 \x1b[2J 🙂'
    handle = configure(store=tmp_path / "s", set_global=False, otlp=False, service_name="x")
    tp = handle.tracer_provider
    with otel_prov.agent_session(
        "hostile", question=hostile, conversation_id="hostile", tracer_provider=tp
    ) as session:
        with (
            otel_prov.iteration(
                1,
                thought=hostile,
                action=hostile,
                arguments=json.dumps({"q": hostile}),
                tracer_provider=tp,
            ),
            contextlib.suppress(ValueError),
            otel_prov.tool_call(
                hostile, arguments={"q": hostile}, call_id=hostile, tracer_provider=tp
            ),
        ):
            raise ValueError(hostile)
        with (
            otel_prov.iteration(2, thought=hostile, action=hostile, tracer_provider=tp),
            otel_prov.tool_call(
                hostile, arguments={"q": hostile}, call_id="c2", tracer_provider=tp
            ),
        ):
            otel_prov.set_observation(hostile)
        otel_prov.set_answer(hostile, span=session)
    handle.shutdown()
    graph = open_store(tmp_path / "s").why("hostile")
    assert any(node.label == hostile for node in graph.nodes)
    assert any(node.call_id == hostile and not node.supports_answer for node in graph.nodes)
    for fmt, check in (("mermaid", mermaid_lines_ok), ("dot", dot_parses)):
        done = run_cli("why", "hostile", "--store", str(tmp_path / "s"), "--format", fmt)
        assert done.returncode == 0, done.stderr
        check(done.stdout, len(graph.nodes), len(graph.edges))
    text = run_cli("why", "hostile", "--store", str(tmp_path / "s")).stdout
    assert "\x1b" not in text and "\u2028" not in text


def test_a_run_that_failed_before_answering_shows_the_calls_of_its_last_step(
    tmp_path: Path,
) -> None:
    """No later step used what the last step's call returned (there is none), so no
    derivation reaches that call: the why of a run without an answer (it failed, or it
    still runs) starts from its steps' calls as well as from its steps."""
    path = tmp_path / "store"
    handle = configure(store=path, set_global=False, otlp=False, service_name="why-failed")
    raises_after_steps(handle.tracer_provider)
    handle.shutdown()
    graph = open_store(path).why("quota")
    assert graph.node(graph.root).type == "AgentSession"
    assert graph.node(graph.root).status == "error"
    calls = [node for node in graph.nodes if node.type == "ToolCall"]
    observations = sorted(node.label for node in graph.nodes if node.type == "Observation")
    assert len(calls) == 2 and observations == ["found 1", "found 2"]
    steps = {node.id: node.number for node in graph.nodes if node.type == "Iteration"}
    assert sorted(steps[call.part_of or ""] for call in calls) == [1, 2]
