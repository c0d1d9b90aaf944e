"""Decisions asked and shown, from a real embedded store: the refund example as a user runs
it, reviewed with ``otel-prov review``; ``why``, ``summary``, ``diff``, ``verify`` and the
SPARQL recipes on it; and the docs' sample output, which must be what it prints."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from otel_prov.prov._iris import activity_iri
from otel_prov.read import open_store
from otel_prov.read._recipes import RECIPES
from tests.builders import TRACE, store_runs
from tests.cli import run_cli
from tests.refund_run import CONVERSATION, review_refund, run_refund_agent
from tests.test_decisions import D1, H1, _event, _evidence, _run

DOCS = Path(__file__).resolve().parents[1] / "docs" / "decisions.md"
REVISED = "Refund half: the parcel may have been stolen after delivery"


def _docs_block(marker: str) -> str:
    """The text block after ``<!-- marker -->`` in docs/decisions.md."""
    found = re.search(
        rf"<!-- {re.escape(marker)} -->\n```text\n(.*?)```", DOCS.read_text("utf-8"), re.S
    )
    assert found, marker
    return found.group(1)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The example's run, before the review (what it printed) and then reviewed."""
    where = tmp_path_factory.mktemp("refund")
    printed = run_refund_agent(where / "store", cwd=where)
    return where / "store", printed


@pytest.fixture(scope="module")
def reviewed(store: tuple[Path, str]) -> Path:
    path, _ = store
    before = _decision_triples(path)
    review_refund(path)
    assert _decision_triples(path) == before  # the original is never edited
    return path


def _decision_triples(path: Path) -> list[str]:
    answer = run_cli(
        "query",
        "SELECT ?p ?o WHERE { ?d a oprov:Decision ; oprov:reasoningId 'd1' ; "
        "prov:wasGeneratedBy ?s ; ?p ?o . ?s oprov:partOf ?run } ORDER BY ?p ?o",
        "--store", str(path), "--format", "csv",
    )  # fmt: skip
    assert answer.returncode == 0, answer.stderr
    return answer.stdout.splitlines()


def _why(path: Path, fmt: str = "json") -> Any:
    answer = run_cli("why", CONVERSATION, "--store", str(path), "--format", fmt)
    assert answer.returncode == 0, answer.stderr
    return json.loads(answer.stdout) if fmt == "json" else answer.stdout


def test_the_example_prints_what_the_docs_show(store: tuple[Path, str]) -> None:
    _, printed = store
    assert printed == _docs_block("output of examples/refund_agent.py")


def test_why_starts_with_the_decision_its_evidence_and_its_revision_as_the_docs_show(
    reviewed: Path,
) -> None:
    text = _why(reviewed, "text")
    shown = text.split("\n[1] ")[0].split("\n", 1)[1] + "\n"
    assert shown == _docs_block("why of examples/refund_agent.py, reviewed")


def test_why_json_has_the_evidence_with_weight_and_whether_it_was_considered(
    reviewed: Path,
) -> None:
    graph = _why(reviewed)
    nodes = {node["id"]: node for node in graph["nodes"]}
    (decision,) = [
        n for n in nodes.values() if n["type"] == "Decision" and n.get("confidence") == 0.7
    ]
    assert decision["reasoning_id"] == "d1"
    out = [e for e in graph["edges"] if e["from"] == decision["id"]]
    told = sorted(
        (e["relation"], nodes[e["to"]]["type"], e.get("weight"), e.get("considered")) for e in out
    )
    assert told == [
        ("adopts", "Hypothesis", None, True),
        ("contradictedBy", "Hypothesis", 0.3, True),
        ("contradictedBy", "Observation", 0.7, False),  # read after the decision
        ("supportedBy", "Document", 0.6, True),
        ("wasGeneratedBy", "Iteration", None, None),
    ]
    (revision,) = [
        e["from"]
        for e in graph["edges"]
        if e["relation"] == "wasRevisionOf" and e["to"] == decision["id"]
    ]
    assert nodes[revision]["label"] == REVISED
    (reviewer,) = [
        e["to"]
        for e in graph["edges"]
        if e["from"] == revision and e["relation"] == "wasAttributedTo"
    ]
    assert (nodes[reviewer]["type"], nodes[reviewer]["label"]) == ("Person", "Alice Martin")


def test_summary_tells_the_decision_for_against_not_considered_and_the_revision(
    reviewed: Path,
) -> None:
    answer = run_cli("summary", CONVERSATION, "--store", str(reviewed), "--format", "json")
    assert answer.returncode == 0, answer.stderr
    sentences = json.loads(answer.stdout)["sentences"]
    (decided,) = [s for s in sentences if s["text"].startswith("Decided")]
    assert "; for: " in decided["text"] and "; against: " in decided["text"]
    assert "; not considered: what get_messages [call_messages] returned" in decided["text"]
    assert len(decided["refs"]) == 5  # the decision and the four things its evidence rests on
    (revised,) = [s for s in sentences if " was revised by " in s["text"]]
    assert revised["text"] == f"Decision d1 was revised by Alice Martin: “{REVISED}”."


def test_verify_checks_the_run_and_the_review_and_a_review_of_nothing_is_refused(
    reviewed: Path,
) -> None:
    checked = run_cli("verify", "--all", "--store", str(reviewed))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    missing = run_cli(
        "review",
        CONVERSATION,
        "--node",
        "d7",
        "--by",
        "bob",
        "--text",
        "x",
        "--store",
        str(reviewed),
    )
    assert missing.returncode == 1
    assert missing.stderr.strip().endswith("has no goal, hypothesis or decision 'd7'")
    wrong = run_cli(
        "review", CONVERSATION, "--node", "d1", "--by", "bob", "--text", "x", "--confidence", "2",
        "--store", str(reviewed),
    )  # fmt: skip
    assert wrong.returncode == 2 and "from 0 to 1" in wrong.stderr


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Decisions taken against", {"considered": {"true", "false"}}),
        ("Hypotheses never tested", {"id": {"h3"}}),
        (
            "Decisions a reviewer later revised",
            {"reviewer": {"Alice Martin"}, "revised": {REVISED}},
        ),
    ],
)
def test_each_decision_recipe_answers_on_the_example(
    reviewed: Path, title: str, expected: dict[str, set[str]]
) -> None:
    (recipe,) = [r for r in RECIPES if r.title.startswith(title)]
    answer = run_cli("query", recipe.sparql, "--store", str(reviewed), "--format", "json")
    assert answer.returncode == 0, answer.stderr
    rows = json.loads(answer.stdout)
    assert rows, title
    for column, values in expected.items():
        assert {str(row[column]).lower() for row in rows} == {v.lower() for v in values}, rows


def test_diff_says_where_two_runs_hypotheses_and_decisions_part(tmp_path: Path) -> None:
    refund = _event(
        "otel_prov.decision", 6, otel_prov__reasoning__id="d1", otel_prov__reasoning__text="refund"
    )
    surer = _event(
        "otel_prov.hypothesis", 1.5, otel_prov__reasoning__id="h1",
        otel_prov__reasoning__text="lost in transit", otel_prov__reasoning__confidence=0.9,
    )  # fmt: skip
    evidence = _evidence(
        7, otel_prov__evidence__supports="d1", otel_prov__evidence__tool_call__id="call_1"
    )
    first = _run(D1, evidence, step_1=(H1,))
    second = [
        dataclasses.replace(span, trace_id=2) for span in _run(refund, evidence, step_1=(surer,))
    ]
    store = store_runs(tmp_path / "store", first, second)
    reader = open_store(store)
    a, b = activity_iri(TRACE, 1)[1:-1], activity_iri(2, 1)[1:-1]
    diff = reader.diff(a, b)
    parted = [(d.iteration, d.field, d.a, d.b) for d in diff.reasoning_changed]
    assert parted == [
        (
            1,
            "hypothesis",
            "h1: lost in transit (confidence 0.4)",
            "h1: lost in transit (confidence 0.9)",
        ),
        (2, "decision", "d1: refuse (confidence 0.8; adopts h1)", "d1: refund"),
    ]
    assert diff.first_divergence is not None and diff.first_divergence.field == "hypothesis"
    assert not diff.same
    shown = run_cli("diff", a, b, "--store", str(store)).stdout
    assert "first divergence: iteration 1 hypothesis" in shown
    assert "iteration 2 decision" in shown
    same = reader.diff(a, a)
    assert same.same and same.reasoning_changed == ()
