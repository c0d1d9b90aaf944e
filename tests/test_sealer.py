"""Bundles across records and processes: a chain per writer, revisions for late spans."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import cast

import pyoxigraph
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import set_span_in_context

import otel_prov
from otel_prov.demo import run_demo_agent
from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.prov._bundle import canonical_text, content_hash, manifest
from otel_prov.prov._chain import Entry, chain_problems
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._numeric import NUMERIC_SUFFIXES, canonical_number
from otel_prov.prov._rdf import parse_literal
from otel_prov.prov._sealer import Sealer
from otel_prov.prov._vocab import O, P
from tests.builders import T0, make_span
from tests.cli import run_cli
from tests.waiting import until

PREFIXES = """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
"""


def _verify(store: Path) -> tuple[int, list[dict[str, object]]]:
    run = run_cli("verify", "--all", "--store", str(store), "--format", "json")
    return run.returncode, json.loads(run.stdout) if run.stdout else []


def _rows(store: Path, query: str) -> list[dict[str, str]]:
    db = pyoxigraph.Store.read_only(str(store))
    answer = cast(pyoxigraph.QuerySolutions, db.query(PREFIXES + query))
    names = [v.value for v in answer.variables]
    return [{n: t.value for n in names if (t := row[n]) is not None} for row in answer]


def test_each_process_starts_a_chain_of_its_own_and_reads_nothing_back(tmp_path: Path) -> None:
    store = tmp_path / "store"
    for conversation in ("first process", "second process"):
        handle = otel_prov.configure(store=store, set_global=False, wal_dir=tmp_path / "wal")
        run_demo_agent(tracer_provider=handle.tracer_provider, conversation_id=conversation)
        handle.shutdown()
    bundles = _rows(
        store,
        """SELECT ?conversation ?bundle ?chain ?sequence WHERE { GRAPH ?g {
          ?bundle oprov:bundleOf ?s ; oprov:chainId ?chain ; oprov:sequenceNumber ?sequence .
          ?s oprov:sessionId ?conversation .
        } }""",
    )
    by_conversation = {row["conversation"]: row for row in bundles}
    first, second = by_conversation["first process"], by_conversation["second process"]
    assert first["chain"] != second["chain"]
    assert first["sequence"] == second["sequence"] == "1"
    assert _verify(store)[0] == 0
    # Removing the first process's bundle shows: its run has none, and the checkpoint its
    # process stored at shutdown names an entry the chain no longer holds.
    db = pyoxigraph.Store(str(store))
    db.update(
        PREFIXES + f"DELETE WHERE {{ GRAPH ?g {{ <{first['bundle']}> ?p ?o }} }}",
    )
    del db
    code, checks = _verify(store)
    assert code == 1
    assert any("truncated" in str(check["problems"]) for check in checks)


def _tool_outliving_its_session(
    provider: TracerProvider, processor: otel_prov.ProvSpanProcessor
) -> None:
    """A session whose tool call ends once the session was exported without it."""
    tracer = provider.get_tracer("test")
    with otel_prov.agent_session("late", question="Q?", tracer_provider=provider) as session:
        tool = tracer.start_span(
            "execute_tool slow",
            context=set_span_in_context(session),
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "slow"},
        )
        otel_prov.set_answer("A", span=session)
    until(lambda: processor.statistics().records_exported == 1, "the session sealed")
    tool.set_attribute("otel_prov.observation", "late result")
    tool.end()


def test_spans_arriving_after_the_seal_revise_the_bundle(tmp_path: Path) -> None:
    store = tmp_path / "store"
    provider = TracerProvider()
    processor = otel_prov.ProvSpanProcessor(
        OxigraphStoreExporter(store), late_span_grace=0.05, schedule_delay=0.05
    )
    provider.add_span_processor(processor)
    _tool_outliving_its_session(provider, processor)
    provider.shutdown()
    bundles = _rows(
        store,
        """SELECT ?bundle ?revised WHERE { GRAPH ?g { ?bundle oprov:bundleOf ?s .
        OPTIONAL { ?bundle prov:wasRevisionOf ?revised } } } ORDER BY ?bundle""",
    )
    assert [row["bundle"].rsplit(":", 1)[1] for row in bundles] == ["bundle", "bundle-2"]
    assert bundles[1]["revised"] == bundles[0]["bundle"]
    code, checks = _verify(store)
    assert code == 0, checks
    # The revised seal still catches an edit of what came late.
    db = pyoxigraph.Store(str(store))
    db.update(
        PREFIXES
        + """DELETE { GRAPH ?g { ?o prov:value ?v } } INSERT { GRAPH ?g { ?o prov:value "x" } }
        WHERE { GRAPH ?g { ?o a oprov:Observation ; prov:value ?v } }"""
    )
    del db
    code, checks = _verify(store)
    assert code == 1 and ":observation" in str(checks[0]["problems"])


def test_a_session_exported_incomplete_then_ending_is_revised(tmp_path: Path) -> None:
    store = tmp_path / "store"
    provider = TracerProvider()
    processor = otel_prov.ProvSpanProcessor(
        OxigraphStoreExporter(store), session_timeout=0.2, schedule_delay=0.05
    )
    provider.add_span_processor(processor)
    with otel_prov.agent_session("slow", question="Q?", tracer_provider=provider) as session:
        # Past the timeout, at the worker's once-a-second check: exported as it stands.
        until(lambda: processor.statistics().records_exported == 1, "the session timed out")
        otel_prov.set_answer("done at last", span=session)
    provider.shutdown()
    statuses = _rows(
        store,
        "SELECT ?status WHERE { GRAPH ?g { ?s a oprov:AgentSession ; oprov:status ?status } }",
    )
    assert {row["status"] for row in statuses} >= {"incomplete", "ok"}
    code, checks = _verify(store)
    assert code == 0, checks
    # Listed once, with what happened in the end.
    listed = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    assert [(s["status"], s["failed_calls"]) for s in listed] == [("ok", 0)]
    (shown,) = json.loads(
        run_cli("show", listed[0]["id"], "--store", str(store), "--format", "json").stdout
    )
    assert shown["status"] == "ok" and shown["answer"] == "done at last"


def test_every_bundle_is_the_next_entry_of_the_writers_chain_revisions_too() -> None:
    """Agents, sessions and revisions alike: one chain, numbered, each entry linked to the
    hash of the one before (as ``_chain`` defines it), whatever the agent."""
    sealer = Sealer(chain="c1")
    records = [
        sealer.seal(map_spans([make_span(1, trace_id=trace, end_ms=trace * 1000, **attrs)]), 0)
        for trace, attrs in (
            (1, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}),
            (2, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "b"}),
            (3, {"gen_ai.operation.name": "invoke_agent"}),  # no agent: chained all the same
        )
    ]
    late = make_span(2, 1, trace_id=2, end_ms=5000)
    records.append(sealer.seal(map_spans([late]), T0 + 9 * 10**9))  # revises trace 2
    triples = [t for record in records for t in record.triples]
    by_bundle: dict[str, dict[str, str]] = {}
    for s, p, o in triples:
        by_bundle.setdefault(s, {})[p] = o
    entries = sorted(
        (
            Entry(
                chain=parse_literal(fields[O.chainId]),
                sequence=int(parse_literal(fields[O.sequenceNumber])),
                previous=parse_literal(fields.get(O.previousEntryHash, '""')),
                bundle=bundle[1:-1],
                of=fields[O.bundleOf][1:-1],
                content=parse_literal(fields[O.contentHash]),
                canonicalization=parse_literal(fields[O.canonicalization]),
                revises=fields.get(P.wasRevisionOf, "<>")[1:-1],
                time=parse_literal(fields.get(P.generatedAtTime, '""')),
            )
            for bundle, fields in by_bundle.items()
            if O.chainId in fields and O.bundleOf in fields
        ),
        key=lambda entry: entry.sequence,
    )
    assert [e.sequence for e in entries] == [1, 2, 3, 4]
    assert entries[3].revises == entries[1].bundle and entries[3].of == entries[1].of
    assert [e.previous for e in entries] == ["", *(e.hash for e in entries[:3])]
    assert (sealer.sequence, sealer.head) == (4, entries[3].hash)
    assert chain_problems("c1", entries, []) == ({}, [])
    checkpoint = sealer.checkpoint(T0)
    assert checkpoint is not None and (checkpoint.sequence, checkpoint.head) == (4, sealer.head)
    assert Sealer(chain="c2").checkpoint(T0) is None  # nothing sealed: nothing to state


_SUBJECTS = [
    "<urn:otel-prov:t:1>",
    "<urn:otel-prov:t:1:thought>",
    "<urn:otel-prov:t:10>",
    "_:b",
    "_:b1",
]
_OBJECTS = [
    '"a"',
    '"x\\"y"',
    '"01"^^<http://www.w3.org/2001/XMLSchema#integer>',
    '"2.50"^^<http://www.w3.org/2001/XMLSchema#decimal>',
    "<urn:o>",
]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(_SUBJECTS), st.sampled_from(["<p>", "<p2>"]), st.sampled_from(_OBJECTS)
        ),
        max_size=30,
    )
)
def test_the_canonical_text_is_every_line_sorted_and_the_manifest_hashes_each_subject(
    triples: list[tuple[str, str, str]],
) -> None:
    """Lines are grouped by subject as they are written (subjects that are prefixes of
    others included): the text is still all the lines sorted, each subject's manifest
    entry the hash of its own lines."""
    lines = sorted(
        {
            f"{s} {p} {canonical_number(o) if o.endswith(NUMERIC_SUFFIXES) else o} .\n"
            for s, p, o in triples
        }
    )
    assert canonical_text(triples) == "".join(lines)
    assert content_hash(triples) == "sha256:" + hashlib.sha256("".join(lines).encode()).hexdigest()
    expected = {
        (s[1:-1] if s.startswith("<") else s).removeprefix("urn:otel-prov:t:"): hashlib.sha256(
            "".join(line for line in lines if line.startswith(s + " ")).encode()
        ).hexdigest()[:16]
        for s in {s for s, _, _ in triples}
    }
    assert manifest(triples, "<urn:otel-prov:t:1>") == dict(sorted(expected.items()))


def test_a_blank_node_is_named_whole_in_the_manifest() -> None:
    """The mapper writes no blank node, but one added to a stored run is named in what
    verify reports from the manifest: whole, not cut like the brackets of an IRI."""
    triples = [
        ("<urn:otel-prov:t:1>", "<p>", '"a"'),
        ("_:forged", "<urn:otel-prov:partOf>", "<urn:otel-prov:t:1>"),
    ]
    assert set(manifest(triples, "<urn:otel-prov:t:1>")) == {"1", "_:forged"}


def test_a_run_sealed_whole_is_not_remembered_for_revisions() -> None:
    """No span of its trace open when sealed: nothing can come late, so nothing is kept."""
    sealer = Sealer(chain="c")
    session = make_span(1, trace_id=7, gen_ai__operation__name="invoke_agent")
    sealer.seal(map_spans([session]), 0, whole=True)
    late = sealer.seal(map_spans([make_span(2, 1, trace_id=7, end_ms=5000)]), T0)
    assert not any(p == P.wasRevisionOf for _, p, _ in late.triples)
    assert sealer.sequence == 1
