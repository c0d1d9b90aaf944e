"""What the why-graph draws at first, decided on the server: steps, earlier turns and the
middle of long runs folded into one box each, labels in words, time running one way.

The graphs are written by hand in the shape of ``why --format json``: a conversation of
turns (each a session with its question, its steps, each step's thought and call and what
the call returned, and an answer resting on those), a run that failed before it answered,
and one with a decision in a step.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from otel_prov.view._why_folds import CHUNK, FOLD_AT, KEEP_TURNS
from otel_prov.view._why_graph import RELATIONS, plain_relation, why_drawing


def _node(ident: str, kind: str, label: str, **extra: Any) -> dict[str, Any]:
    return {"id": ident, "type": kind, "label": label, **extra}


def _edge(a: str, b: str, relation: str) -> dict[str, str]:
    return {"from": a, "to": b, "relation": relation}


def _turn(turn: int, steps: int, *, answered: bool = True) -> tuple[list, list]:  # type: ignore[type-arg]
    """The nodes and edges of one turn, ``s{turn}`` with its steps."""
    s = f"s{turn}"
    nodes = [
        _node(s, "AgentSession", f"invoke_agent bot {turn}"),
        _node(f"q{turn}", "Question", f"Question {turn}?"),
    ]
    edges = [_edge(s, f"q{turn}", "used")]
    for n in range(1, steps + 1):
        it, call, obs = f"{s}-it{n}", f"{s}-call{n}", f"{s}-obs{n}"
        nodes += [
            _node(it, "Iteration", f"iteration {n}", part_of=s, status="ok"),
            _node(f"{s}-th{n}", "Thought", f"thinking {turn}.{n}"),
            _node(call, "ToolCall", f"lookup [c{n}]", tool="lookup", part_of=it, status="ok"),
            _node(obs, "Observation", f"found {turn}.{n}"),
        ]
        edges += [
            _edge(f"{s}-th{n}", it, "wasGeneratedBy"),
            _edge(obs, call, "wasGeneratedBy"),
        ]
        if n > 1:
            edges += [
                _edge(it, f"{s}-it{n - 1}", "wasInformedBy"),
                _edge(it, f"{s}-obs{n - 1}", "used"),
            ]
        if not answered:
            edges.append(_edge(it, s, "partOf"))
    if answered:
        nodes.append(_node(f"a{turn}", "Answer", f"Answer {turn}."))
        edges.append(_edge(f"a{turn}", s, "wasGeneratedBy"))
        edges += [_edge(f"a{turn}", f"{s}-obs{n}", "wasDerivedFrom") for n in range(1, steps + 1)]
    return nodes, edges


def conversation(turns: int, steps: int = 3) -> dict[str, Any]:
    """``why`` of the newest turn of a conversation: the root (its answer) first."""
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, str]] = []
    for turn in range(1, turns + 1):
        more_nodes, more_edges = _turn(turn, steps)
        nodes += more_nodes
        edges += more_edges
        if turn > 1:
            edges.append(_edge(f"s{turn}", f"s{turn - 1}", "followsTurn"))
    root = f"a{turns}"
    return {
        "root": root,
        "nodes": [n for n in nodes if n["id"] == root] + [n for n in nodes if n["id"] != root],
        "edges": edges,
    }


def _drawn(graph: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(why_drawing(graph).as_json())
    return data


def _ids(drawing: dict[str, Any]) -> dict[str, str]:
    return {node["iri"]: node["id"] for node in drawing["nodes"] if node["iri"]}


def _first_drawn(drawing: dict[str, Any]) -> list[str]:
    """The nodes the page draws before any click (as ``static/app.js`` picks them): each
    node itself when every group around it is open, else the head of the outermost shut
    one, and a pinned node in shut steps itself."""
    groups = {group["id"]: group for group in drawing["groups"]}

    def around(group: str | None) -> list[dict[str, Any]]:
        out = []
        while group is not None:
            out.append(groups[group])
            group = groups[group]["parent"]
        return out

    drawn: list[str] = []
    for node in drawing["nodes"]:
        shut = [g for g in around(node["group"]) if not g["open"]]
        if not shut:
            shown = None if node.get("fold") else node["id"]
        elif (
            node["pinned"]
            and all(g["kind"] == "step" for g in shut)
            and shut[-1]["head"] != node["id"]
        ):
            shown = node["id"]
        else:
            shown = shut[-1]["head"]
        if shown is not None and shown not in drawn:
            drawn.append(shown)
    return drawn


def test_what_is_drawn_at_first_does_not_grow_with_the_earlier_turns() -> None:
    counts = {}
    for turns in (1, 2, 3, 4, 8, 14, 30):
        drawing = _drawn(conversation(turns))
        counts[turns] = len(_first_drawn(drawing))
        turn_groups = [g for g in drawing["groups"] if g["kind"] == "turn"]
        assert len(turn_groups) == (turns if turns > 1 else 0)
        if turn_groups:
            *earlier, this = turn_groups
            assert this["open"] and not any(g["open"] for g in earlier)
            assert this["label"] == f"Turn {turns} of {turns}: this run"
    # A turn alone: question, session, three steps, answer.  With earlier turns: one box
    # for each of the KEEP_TURNS before it, and one fold for the rest.
    assert counts[1] == 6 and counts[2] == 7 and counts[3] == 6 + KEEP_TURNS
    assert counts[4] == counts[8] == counts[14] == counts[30] == 6 + KEEP_TURNS + 1


def test_a_fold_of_earlier_turns_opens_the_newest_first_a_chunk_at_a_time() -> None:
    drawing = _drawn(conversation(30))
    groups = {g["id"]: g for g in drawing["groups"]}
    folds = [g for g in drawing["groups"] if g["kind"] == "fold"]
    heads = {node["id"]: node for node in drawing["nodes"]}
    outer = [g for g in folds if g["parent"] is None]
    assert len(outer) == 1 and heads[outer[0]["head"]]["role"] == "Turns 1–27"
    assert outer[0]["lines"] == ["27 earlier turns folded · click to open 10"]
    held = [g for g in drawing["groups"] if g["kind"] == "turn" and g["parent"] == outer[0]["id"]]
    assert [g["role"] for g in held] == [f"Turn {n} of 30" for n in range(18, 28)]
    inner = [g for g in folds if g["parent"] == outer[0]["id"]]
    assert len(inner) == 1 and heads[inner[0]["head"]]["role"] == "Turns 1–17"
    assert all(
        len([g for g in groups.values() if g["parent"] == f["id"]]) <= CHUNK + 1 for f in folds
    )


def test_a_long_run_shows_how_it_began_and_ended_and_folds_the_middle() -> None:
    graph = conversation(1, steps=50)
    drawing = _drawn(graph)
    ident = _ids(drawing)
    first = _first_drawn(drawing)
    steps = {g["head"]: g for g in drawing["groups"] if g["kind"] == "step"}
    shown = [steps[i]["role"] for i in first if i in steps]
    assert shown == [f"Step {n} of 50" for n in (1, 2, 3, 48, 49, 50)]
    folds = [node for node in drawing["nodes"] if node.get("fold")]
    assert [node["role"] for node in folds] == [
        "Steps 4–47", "Steps 14–47", "Steps 24–47", "Steps 34–47", "Steps 44–47",
    ]  # fmt: skip
    assert [i for i in first if i not in steps] == [
        ident["a1"], ident["s1"], ident["q1"], folds[0]["id"],
    ]  # fmt: skip
    # Not folded at FOLD_AT steps, folded past it.
    assert not any(n.get("fold") for n in _drawn(conversation(1, steps=FOLD_AT))["nodes"])
    assert any(n.get("fold") for n in _drawn(conversation(1, steps=FOLD_AT + 1))["nodes"])
    # A shut step says what it thought and what its call returned.
    (third,) = [g for g in steps.values() if g["role"] == "Step 3 of 50"]
    assert third["lines"] == ["thinking 1.3", "lookup → found 1.3"] and third["red"] == []


def test_the_answers_edges_to_earlier_steps_go_along_the_side() -> None:
    drawing = _drawn(conversation(2))
    ident = _ids(drawing)
    far = {(e["from"], e["to"]) for e in drawing["edges"] if e["far"]}
    # Each turn's answer: its session and the steps before its last are far.
    for turn in (1, 2):
        a = ident[f"a{turn}"]
        assert (a, ident[f"s{turn}"]) in far
        assert (a, ident[f"s{turn}-obs1"]) in far and (a, ident[f"s{turn}-obs2"]) in far
        assert (a, ident[f"s{turn}-obs3"]) not in far
    assert len(far) == 6
    # A turn follows the one before along the other side; everything else is laid out.
    side = [(e["from"], e["to"]) for e in drawing["edges"] if e["side"]]
    assert side == [(ident["s2"], ident["s1"])]
    # The earlier turn ends above where the newer one begins, its question.
    assert (ident["a1"], ident["q2"]) in {tuple(pair) for pair in drawing["order"]}


def test_a_run_that_failed_before_answering_hangs_its_steps_below_its_session() -> None:
    """Issue 45, point 9: the session (the root) sat beside its question, a looping edge
    between them, since the answer's rules (far edges, the last step above it) applied
    to a session."""
    nodes, edges = _turn(1, 3, answered=False)
    nodes[0] = {**nodes[0], "status": "error", "error": "RuntimeError: quota"}
    drawing = _drawn({"root": "s1", "nodes": nodes, "edges": edges})
    ident = _ids(drawing)
    assert not [e for e in drawing["edges"] if e["far"]]
    order = {tuple(pair) for pair in drawing["order"]}
    assert (ident["s1"], ident["s1-it1"]) in order
    assert not [pair for pair in order if pair[1] == ident["s1"]]
    # The steps after the first are part of the session their box is drawn under.
    implied = [(e["from"], e["to"]) for e in drawing["edges"] if e.get("implied")]
    assert implied == [(ident["s1-it2"], ident["s1"]), (ident["s1-it3"], ident["s1"])]
    (session,) = [n for n in drawing["nodes"] if n["iri"] == "s1"]
    assert session["failed"] and session["lines"][-1] == "FAILED RuntimeError: quota"


def test_decisions_and_the_answer_stay_drawn_in_a_shut_step() -> None:
    nodes, edges = _turn(1, 2)
    nodes.append(_node("d1", "Decision", "Refuse"))
    edges += [_edge("d1", "s1-it2", "wasGeneratedBy"), _edge("d1", "s1-obs1", "supportedBy")]
    drawing = _drawn({"root": "a1", "nodes": nodes, "edges": edges})
    ident = _ids(drawing)
    first = _first_drawn(drawing)
    assert ident["d1"] in first and ident["a1"] in first
    assert ident["s1-obs1"] not in first  # in step 1's box, shut
    (support,) = [e for e in drawing["edges"] if e["relation"] == "supportedBy"]
    assert support["label"] == "supported by" and support["evidence"] == "supports"


def test_turns_asked_alike_are_told_apart_when_folded() -> None:
    graph = conversation(3)
    for node in graph["nodes"]:
        if node["type"] == "Question":
            node["label"] = f"What is the weather in Paris now? (turn {node['id'][1:]})"
    turns = [g for g in _drawn(graph)["groups"] if g["kind"] == "turn"]
    shown = [" ".join(g["lines"]) for g in turns]
    assert len(set(shown)) == 3 and all(f"(turn {n})" in shown[n - 1] for n in (1, 2, 3))
    assert all(g["lines"][-1].startswith("→ Answer") for g in turns)


def test_relations_read_in_words_along_the_arrow() -> None:
    assert plain_relation("wasGeneratedBy", "Thought", "Iteration") == "produced by"
    assert plain_relation("wasDerivedFrom", "Answer", "Observation") == "answered from"
    assert plain_relation("wasDerivedFrom", "Observation", "Arguments") == "derived from"
    assert plain_relation("wasInformedBy", "Iteration", "Iteration") == "follows"
    assert plain_relation("wasInformedBy", "AgentSession", "ToolCall") == "started by"
    assert plain_relation("followsTurn", "AgentSession", "AgentSession") == "follows"
    assert plain_relation("contradictedBy") == "contradicted by"
    assert plain_relation("hadDelegate") == "had delegate"
    assert all(" " not in word or word == word.lower() for word in RELATIONS.values())


@given(st.from_regex(r"[a-z]{1,8}([A-Z][a-z0-9]{0,8}){0,4}", fullmatch=True))
def test_any_relation_reads_as_its_words(relation: str) -> None:
    words = plain_relation(relation)
    if relation not in RELATIONS:
        assert words == words.lower() and words.replace(" ", "") == relation.lower()
        # A word begins at each capital after a small letter or a digit (an acronym is one).
        assert len(words.split()) == len(re.findall(r"(?<=[a-z0-9])[A-Z]", relation)) + 1
