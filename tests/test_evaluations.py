"""Evaluations: GenAI ``gen_ai.evaluation.result`` events and ``record_evaluation`` sealed
with the run; ``otel-prov annotate`` sealed on its own, chained per evaluator, verified
beside the run whose seal it leaves alone."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph
import rdflib
from hypothesis import given, settings
from hypothesis import strategies as st

import otel_prov
from otel_prov import semconv as sc
from otel_prov.prov._bundle import session_content
from otel_prov.prov._iris import activity_iri, entity_iri
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._span_record import SpanEvent
from otel_prov.prov._vocab import O, P
from otel_prov.read import open_store
from otel_prov.setup._configure import configure
from tests.builders import T0, TRACE, make_span
from tests.cli import run_cli

SESSION = activity_iri(TRACE, 1)


def _event(**attributes: object) -> SpanEvent:
    return SpanEvent(
        sc.GEN_AI_EVALUATION_RESULT,
        T0 + 5_000_000,
        {key.replace("__", "."): value for key, value in attributes.items()},
    )


def _run(*events: SpanEvent, on_model: tuple[SpanEvent, ...] = ()) -> list[object]:
    session = make_span(
        1,
        name="invoke_agent a",
        end_ms=10,
        events=events,
        gen_ai__operation__name="invoke_agent",
        gen_ai__agent__name="a",
        otel_prov__answer="42",
    )
    model = make_span(
        2,
        1,
        name="chat m",
        end_ms=3,
        events=on_model,
        gen_ai__operation__name="chat",
        gen_ai__response__id="resp-1",
        gen_ai__output__messages='[{"role": "assistant", "parts": [{"type": "text", '
        '"content": "thinking"}]}]',
    )
    return [session, model]


def test_an_evaluation_event_judges_the_span_it_is_on_and_is_sealed_with_the_run() -> None:
    spans = _run(
        _event(
            gen_ai__evaluation__name="relevance",
            gen_ai__evaluation__score__value=0.5,
            gen_ai__evaluation__score__label="relevant",
            gen_ai__evaluation__explanation="on topic",
            otel_prov__evaluation__evaluator="judge",
        )
    )
    record = map_spans(spans)  # type: ignore[arg-type]
    evaluation = entity_iri(SESSION, "evaluation-1")
    about = {(p, o) for s, p, o in record.triples if s == evaluation}
    assert (O.evaluates, SESSION) in about
    assert (P.wasDerivedFrom, entity_iri(SESSION, "answer")) in about
    assert (O.evaluationName, '"relevance"') in about
    assert (O.score, f'"0.5"^^<{rdflib.XSD}double>') in about
    assert (P.wasAttributedTo, "<urn:otel-prov:evaluator:judge>") in about
    assert not any(p == P.wasGeneratedBy for p, _ in about)
    assert evaluation in {s for s, _, _ in session_content(record.triples, SESSION)}
    assert record.triples == map_spans(reversed(spans)).triples  # type: ignore[arg-type]


def test_an_evaluation_naming_a_response_id_judges_that_model_call() -> None:
    record = map_spans(
        _run(_event(gen_ai__evaluation__name="faithful", gen_ai__response__id="resp-1"))  # type: ignore[arg-type]
    )
    model = activity_iri(TRACE, 2)
    evaluation = entity_iri(SESSION, "evaluation-1")
    assert (evaluation, O.evaluates, model) in record.triples
    # The model call opened an inferred step: its text is the step's thought.
    assert (evaluation, P.wasDerivedFrom, entity_iri(entity_iri(model, "step"), "thought")) in (
        record.triples
    )


def test_an_evaluation_without_a_name_or_with_a_bad_score_is_reported() -> None:
    record = map_spans(
        _run(  # type: ignore[arg-type]
            _event(gen_ai__evaluation__score__value=1.0),
            _event(gen_ai__evaluation__name="x", gen_ai__evaluation__score__value="high"),
        )
    )
    assert any("evaluation event 1 has no gen_ai.evaluation.name" in p for p in record.problems)
    assert any("evaluation 'x': score 'high' is not a number" in p for p in record.problems)
    second = entity_iri(SESSION, "evaluation-2")
    assert (second, O.evaluationName, '"x"') in record.triples
    assert not any(s == second and p == O.score for s, p, _ in record.triples)


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


@settings(max_examples=50, deadline=None)
@given(name=_TEXT, label=_TEXT, explanation=_TEXT, evaluator=_TEXT, score=st.floats(-1e9, 1e9))
def test_any_evaluation_text_and_score_come_back_exactly(
    name: str, label: str, explanation: str, evaluator: str, score: float
) -> None:
    record = map_spans(
        _run(  # type: ignore[arg-type]
            _event(
                gen_ai__evaluation__name=name,
                gen_ai__evaluation__score__value=score,
                gen_ai__evaluation__score__label=label,
                gen_ai__evaluation__explanation=explanation,
                otel_prov__evaluation__evaluator=evaluator,
            )
        )
    )
    graph = rdflib.Graph().parse(
        data="".join(f"{s} {p} {o} .\n" for s, p, o in record.triples), format="nt"
    )
    oprov = rdflib.Namespace("https://w3id.org/otel-prov/ns#")
    (evaluation,) = graph.subjects(oprov.evaluationName, None)
    assert str(graph.value(evaluation, oprov.evaluationName)) == name
    assert str(graph.value(evaluation, oprov.scoreLabel)) == label
    assert str(graph.value(evaluation, oprov.explanation)) == explanation
    assert graph.value(evaluation, oprov.score).toPython() == score  # type: ignore[union-attr]
    by = graph.value(evaluation, rdflib.URIRef("http://www.w3.org/ns/prov#wasAttributedTo"))
    assert str(graph.value(by, rdflib.RDFS.label)) == evaluator


def _stored_run(tmp_path: Path) -> tuple[Path, str]:
    store = tmp_path / "store"
    handle = configure(store=store, set_global=False, otlp=False)
    provider = handle.tracer_provider
    with otel_prov.agent_session("a", question="6 x 7?", tracer_provider=provider) as session:
        with otel_prov.tool_call("multiply", tracer_provider=provider) as call:
            otel_prov.set_observation("42", span=call)
            otel_prov.record_evaluation("tool-ok", label="pass", evaluator="checker")
        otel_prov.set_answer("42", span=session)
        otel_prov.record_evaluation("correctness", score=1.0, explanation="6 x 7 = 42")
    handle.shutdown()
    (run,) = open_store(store).sessions().sessions
    return store, run.id


def test_annotations_are_sealed_apart_chained_and_verified_beside_the_run(
    tmp_path: Path,
) -> None:
    store, run = _stored_run(tmp_path)
    first = run_cli(
        "annotate",
        run,
        "--store",
        str(store),
        "--name",
        "helpful",
        "--score",
        "4",
        "--label",
        "good",
        "--explanation",
        "short and right",
        "--format",
        "json",
    )
    assert first.returncode == 0, first.stderr
    second = run_cli("annotate", run, "--store", str(store), "--name", "tone", "--label", "ok")
    assert second.returncode == 0, second.stderr

    checks = json.loads(run_cli("verify", run, "--store", str(store), "--format", "json").stdout)
    assert [c["ok"] for c in checks] == [True, True, True]
    annotation = json.loads(first.stdout)["annotation"]
    sealed = [c["session"] for c in checks]
    assert sealed[0] == run and annotation in sealed

    (row,) = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    named = {e["name"]: e for e in row["evaluations"]}
    assert set(named) == {"tool-ok", "correctness", "helpful", "tone"}
    assert named["helpful"]["score"] == 4 and named["helpful"]["annotation"] == annotation
    assert named["correctness"]["annotation"] is None  # made in the run, sealed with it
    assert named["tool-ok"]["evaluator"] == "checker"
    shown = run_cli("show", run, "--store", str(store)).stdout
    assert "helpful: 4 good (by otel-prov annotate, added after the run)" in shown
    assert "correctness: 1 (by correctness)" in shown

    # Each annotate is a writer: its bundle is entry 1 of a chain of its own.
    chained = pyoxigraph.Store.read_only(str(store)).query(
        "SELECT ?n WHERE { GRAPH ?g { ?b <https://w3id.org/otel-prov/ns#sequenceNumber> ?n ; "
        f"<https://w3id.org/otel-prov/ns#bundleOf> ?a . FILTER(?a != <{run}>) }} }}"
    )
    assert [str(r["n"].value) for r in chained] == ["1", "1"]


def test_an_altered_annotation_fails_verify_and_the_run_still_passes(tmp_path: Path) -> None:
    store, run = _stored_run(tmp_path)
    done = run_cli(
        "annotate", run, "--store", str(store), "--name", "n", "--score", "1", "--format", "json"
    )
    annotation = json.loads(done.stdout)["annotation"]
    writer = pyoxigraph.Store(str(store))
    writer.update(
        "DELETE { GRAPH ?g { ?e <https://w3id.org/otel-prov/ns#score> ?s } } "
        "INSERT { GRAPH ?g { ?e <https://w3id.org/otel-prov/ns#score> 5.0 } } "
        f"WHERE {{ GRAPH ?g {{ ?e <https://w3id.org/otel-prov/ns#score> ?s ; "
        f"<http://www.w3.org/ns/prov#wasGeneratedBy> <{annotation}> }} }}"
    )
    del writer
    result = run_cli("verify", "--store", str(store), "--format", "json")
    assert result.returncode == 1
    verdicts = {c["session"]: c for c in json.loads(result.stdout)}
    assert verdicts[run]["ok"]
    assert not verdicts[annotation]["ok"]
    assert "changed: annotation-" in verdicts[annotation]["problems"][0]


def test_annotate_says_what_is_wrong(tmp_path: Path) -> None:
    store, run = _stored_run(tmp_path)
    missing = run_cli("annotate", "nope", "--store", str(store), "--name", "n")
    assert missing.returncode == 1 and "no session with id" in missing.stderr
    bad = run_cli("annotate", run, "--store", str(store), "--name", "n", "--score", "nan")
    assert bad.returncode == 2 and "expected a number, not 'nan'" in bad.stderr
