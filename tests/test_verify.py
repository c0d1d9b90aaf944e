"""Tamper evidence: bundles, hashes, chains, and `otel-prov verify` catching edits."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyoxigraph
import pytest
from opentelemetry import context, trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NonRecordingSpan, SpanContext

import otel_prov
from otel_prov import map_spans
from otel_prov.demo import run_demo_agent
from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.prov._bundle import bundle_iri, bundle_triples, content_hash, session_content
from otel_prov.prov._rdf import to_nquads
from otel_prov.prov._span_record import record_from_span
from otel_prov.prov._vocab import O, P
from otel_prov.read import open_store
from otel_prov.read._reader import session_construct_query
from tests.builders import store_runs
from tests.cli import run_cli
from tests.session_tree import known_session


def test_bundle_hash_is_the_hash_of_the_session_content() -> None:
    record = map_spans(known_session())
    (digest,) = [
        o for s, p, o in record.triples if p == O.contentHash and s == bundle_iri(record.root)
    ]
    content = session_content(record.triples, record.root)
    assert digest == f'"{content_hash(content)}"'
    subjects = {s for s, _, _ in content}
    assert record.root in subjects and not any("bundle" in s or "agent:" in s for s in subjects)
    # The HTTP span around the session is not part of it.
    assert not any(s.endswith(":0000000000000010>") for s in subjects)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """Three sessions of one agent, in one process (so their bundles form a chain)."""
    path = tmp_path / "store"
    handle = otel_prov.configure(store=path, set_global=False)
    for index in range(3):
        run_demo_agent(tracer_provider=handle.tracer_provider, conversation_id=f"c{index}")
        handle.force_flush()
    handle.shutdown()
    return path


def _update(path: Path, sparql: str) -> None:
    store = pyoxigraph.Store(str(path))
    store.update(
        "PREFIX prov: <http://www.w3.org/ns/prov#> "
        "PREFIX oprov: <https://w3id.org/otel-prov/ns#> "
        "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> "
        "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> " + sparql
    )
    del store


def test_untouched_sessions_verify(store: Path) -> None:
    result = run_cli("verify", "--store", str(store))
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines()[-1] == "3 verified, 0 failed"


def test_an_edited_literal_is_caught_and_named(store: Path) -> None:
    _update(
        store,
        """
        DELETE { GRAPH ?g { ?o prov:value ?v } } INSERT { GRAPH ?g { ?o prov:value "sunny" } }
        WHERE { GRAPH ?g {
          ?o a oprov:Observation ; prov:value ?v . FILTER(CONTAINS(?v, "rain")) } }""",
    )
    result = run_cli("verify", "--store", str(store), "--format", "json")
    assert result.returncode == 1
    checks = json.loads(result.stdout)
    failed = [c for c in checks if not c["ok"]]
    assert len(failed) == 3 and sum(c["ok"] for c in checks) == 0
    problem = failed[0]["problems"][0]
    assert problem.startswith("content changed since export (changed: ")
    assert ":observation" in problem


def test_a_deleted_tool_call_and_a_forged_one_are_caught(store: Path) -> None:
    sessions = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    target = sessions[0]["id"]
    _update(
        store,
        f"""
        DELETE {{ GRAPH ?g {{ ?c ?p ?o }} }} WHERE {{ GRAPH ?g {{
          ?c a oprov:ToolCall ; oprov:status "error" ; oprov:partOf+ <{target}> ; ?p ?o }} }}""",
    )
    result = run_cli("verify", sessions[0]["trace_id"], "--store", str(store))
    assert result.returncode == 1 and "missing: " in result.stdout
    other = sessions[1]["id"]
    _update(
        store,
        f"""INSERT DATA {{ GRAPH <urn:otel-prov:graph> {{
        <urn:forged> a oprov:ToolCall , prov:Activity ; oprov:partOf <{other}> ;
          oprov:status "ok" ; prov:startedAtTime "2026-01-01T00:00:00Z" }} }}""",
    )
    result = run_cli("verify", sessions[1]["trace_id"], "--store", str(store))
    assert result.returncode == 1 and "added: urn:forged" in result.stdout
    everything = run_cli("verify", "--all", "--store", str(store))  # the one-read path
    assert everything.returncode == 1 and "added: urn:forged" in everything.stdout


def test_checking_every_run_at_once_finds_what_checking_each_finds(store: Path) -> None:
    """``verify()`` reads the whole graph once; ``verify(id)`` queries each run's triples."""
    reader = open_store(store)
    (first, start), (second, _), (third, _) = ((r.id, r.start) for r in reader.sessions().sessions)
    moment = datetime.fromisoformat(start.replace("Z", "+00:00"))
    elsewhere = moment.astimezone(timezone(timedelta(hours=1))).isoformat()  # the same instant
    _update(
        store,
        f"""
        DELETE DATA {{ GRAPH <urn:otel-prov:graph> {{
          <{first}> prov:startedAtTime "{start}"^^xsd:dateTime }} }};
        INSERT DATA {{ GRAPH <urn:otel-prov:graph> {{
          <{first}> prov:startedAtTime "{elsewhere}"^^xsd:dateTime .
          <{second}> oprov:errorMessage "tab\\t quote\\" \\u0001 end" ;
                     prov:endedAtTime "2000-01-01T00:00:00.500Z"^^xsd:dateTime }} }};
        DELETE WHERE {{ GRAPH ?g {{ ?e prov:wasGeneratedBy <{third}> ; a oprov:Answer ; ?p ?o }} }}
        """,
    )
    reader = open_store(store)
    at_once = {check.session: check for check in reader.verify()}
    one_by_one = {run: check for run in at_once for check in reader.verify(run)}
    assert at_once == one_by_one
    assert [at_once[run].ok for run in (first, second, third)] == [True, False, False]


def test_a_removed_session_breaks_the_chain(store: Path) -> None:
    sessions = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    oldest = sessions[-1]["id"]  # newest first
    _update(
        store,
        f"""DELETE {{ GRAPH ?g {{ ?b ?p ?o }} }} WHERE {{ GRAPH ?g {{
        ?b oprov:bundleOf <{oldest}> ; ?p ?o }} }}""",
    )
    result = run_cli("verify", "--all", "--store", str(store))
    assert result.returncode == 1
    assert "no bundle" in result.stdout and "sequence 1 missing" in result.stdout


def test_tool_use_verified_gate_names_both_readings(tmp_path: Path) -> None:
    path = tmp_path / "store"
    handle = otel_prov.configure(store=path, set_global=False)
    provider = handle.tracer_provider
    with otel_prov.agent_session(
        "lookup-agent", question="Q?", tools=("search", "fetch"), tracer_provider=provider
    ) as session:
        try:
            with otel_prov.tool_call("search", arguments="{}", tracer_provider=provider):
                raise ConnectionError("index offline")
        except ConnectionError:
            pass  # the agent swallows the failure and answers anyway
        otel_prov.set_answer("made up", span=session)
    with otel_prov.agent_session(
        "hands-off", question="Q?", tools=("search",), tracer_provider=provider
    ) as session:
        with otel_prov.tool_call("transfer_to_expert", arguments="{}", tracer_provider=provider):
            pass  # succeeded, but it is not a declared tool: the gate still fails
        otel_prov.set_answer("the expert knows", span=session)
    with otel_prov.agent_session("chatty", question="hi", tracer_provider=provider) as session:
        otel_prov.set_answer("hello", span=session)  # no tools declared: the gate stays out
    handle.shutdown()
    result = run_cli("verify", "--all", "--store", str(path), "--format", "json")
    assert result.returncode == 1
    checks = {c["session"]: c for c in json.loads(result.stdout)}
    gated = [c for c in checks.values() if c["gates"]["tool_use_verified"] is False]
    assert len(gated) == 2 and len(checks) == 3
    problems = sorted(problem for c in gated for problem in c["problems"])
    assert "declared fetch, search and made 1 call(s) of them, none succeeded" in problems[0]
    assert "declared search and made no call of them" in problems[1]
    assert all("data was not fetched" in p and "declaration is stale" in p for p in problems)
    (other,) = [c for c in checks.values() if c not in gated]
    assert other["ok"] and other["gates"]["tool_use_verified"] is None


def test_demo_sessions_pass_the_tool_use_gate(store: Path) -> None:
    checks = json.loads(
        run_cli("verify", "--all", "--store", str(store), "--format", "json").stdout
    )
    assert [c["gates"]["tool_use_verified"] for c in checks] == [True, True, True]


def test_a_sub_session_and_its_qualified_start_are_sealed(tmp_path: Path) -> None:
    path = tmp_path / "store"
    handle = otel_prov.configure(store=path, set_global=False)
    provider = handle.tracer_provider
    with (
        otel_prov.agent_session("lead", question="Q?", tracer_provider=provider),
        otel_prov.tool_call("delegate", arguments="{}", tracer_provider=provider),
        otel_prov.agent_session("helper", question="sub-task", tracer_provider=provider) as sub,
    ):
        otel_prov.set_answer("sub-answer", span=sub)
    handle.shutdown()
    assert run_cli("verify", "--all", "--store", str(path)).returncode == 0
    _update(
        path,
        """DELETE { GRAPH ?g { ?start prov:hadActivity ?a } }
        INSERT { GRAPH ?g { ?start prov:hadActivity <urn:someone-else> } }
        WHERE { GRAPH ?g { ?start a prov:Start ; prov:hadActivity ?a } }""",
    )
    result = run_cli("verify", "--all", "--store", str(path))
    assert result.returncode == 1 and ":start" in result.stdout


def _forge_a_revision(path: Path) -> tuple[str, str]:
    """Edit one observation of the newest run, then add ``bundle-2 prov:wasRevisionOf
    bundle`` over the edited content, made with the project's own functions: what someone
    who can write to the store and has read the code would do.  Returns the run's IRI and
    the edited entity's manifest key."""
    store = pyoxigraph.Store(str(path))
    graph = pyoxigraph.NamedNode("urn:otel-prov:graph")
    run = next(
        q.subject
        for q in store.quads_for_pattern(None, pyoxigraph.NamedNode(O.runStartedAt[1:-1]), None)
    )
    observation = next(
        q
        for q in store.quads_for_pattern(None, pyoxigraph.NamedNode(P.value[1:-1]), None)
        if "rain" in q.object.value and q.subject.value.startswith(run.value.rsplit(":", 1)[0])
    )
    store.remove(observation)
    store.add(
        pyoxigraph.Quad(
            observation.subject, observation.predicate, pyoxigraph.Literal("sunny"), graph
        )
    )
    session = f"<{run.value}>"
    everything = [
        (str(q.subject), str(q.predicate), str(q.object))
        for q in store.quads_for_pattern(None, None, None, graph)
    ]
    first = bundle_iri(session)
    content = [t for t in session_content(everything, session) if t[0] != first]
    revision = session[:-1] + ":bundle-2>"
    forged = [
        (revision if s == first else s, p, o)
        for s, p, o in bundle_triples(session, 1_800_000_000_000_000_000, content)
    ] + [(revision, P.wasRevisionOf, first)]
    store.load(to_nquads(forged, "<urn:otel-prov:graph>").encode(), pyoxigraph.RdfFormat.N_QUADS)
    store.flush()
    del store
    return run.value, observation.subject.value.split(":", 3)[3]


def test_a_forged_revision_over_edited_content_is_caught(store: Path) -> None:
    run, edited = _forge_a_revision(store)
    result = run_cli("verify", "--store", str(store), "--format", "json")
    assert result.returncode == 1, result.stdout
    (check,) = [c for c in json.loads(result.stdout) if c["session"] == run]
    problems = check["problems"]
    assert any("written once" in p and f"({edited})" in p for p in problems), problems
    assert any("in no writer's chain" in w for w in check["warnings"]), check
    assert check["revised"] == [f"changed: {edited}"]


def test_a_forged_agent_label_is_caught(store: Path) -> None:
    """The agent's name ``sessions`` and ``show`` print is sealed with each session."""
    shown = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    assert {row["agent"] for row in shown} == {"weather-assistant"}
    # The shared agent description is no session's content: renaming it changes no listing.
    _update(
        store,
        """DELETE { GRAPH ?g { ?a rdfs:label ?l } } INSERT { GRAPH ?g { ?a rdfs:label "evil" } }
        WHERE { GRAPH ?g { ?a a oprov:AIAgent ; rdfs:label ?l } }""",
    )
    shown = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    assert {row["agent"] for row in shown} == {"weather-assistant"}
    assert run_cli("verify", "--all", "--store", str(store)).returncode == 0
    target = shown[0]
    _update(
        store,
        f"""DELETE {{ GRAPH ?g {{ <{target["id"]}> oprov:agentLabel ?l }} }}
        INSERT {{ GRAPH ?g {{ <{target["id"]}> oprov:agentLabel "evil" }} }}
        WHERE {{ GRAPH ?g {{ <{target["id"]}> oprov:agentLabel ?l }} }}""",
    )
    shown = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    assert shown[0]["agent"] == "evil"
    result = run_cli("verify", "--all", "--store", str(store), "--format", "json")
    assert result.returncode == 1
    (failed,) = [c for c in json.loads(result.stdout) if not c["ok"]]
    assert failed["session"] == target["id"]
    assert any("content changed since export" in p for p in failed["problems"])


def test_a_label_sealed_by_an_older_otel_prov_is_reported_not_covered(tmp_path: Path) -> None:
    """Sessions sealed before ``oprov:agentLabel`` show the shared agent's label."""
    record = map_spans(known_session())
    bundle = bundle_iri(record.root)
    older = [t for t in record.triples if t[1] != O.agentLabel and t[0] != bundle]
    older += bundle_triples(record.root, 0, session_content(older, record.root))
    exporter = OxigraphStoreExporter(tmp_path / "store")
    assert exporter.export([dataclasses.replace(record, triples=tuple(older))])
    exporter.shutdown()
    reader = open_store(tmp_path / "store")
    assert reader.sessions().sessions[0].agent is not None
    (check,) = reader.verify()
    (problem,) = check.problems
    assert problem.startswith(f"the agent label shown for {record.root[1:-1]} is not sealed")


def test_a_tool_call_its_server_recorded_leaves_the_callers_seal_intact(tmp_path: Path) -> None:
    """An MCP server stores its own tool call, ``oprov:partOf`` the client's (its parent is
    remote).  The client's bundle never held it, so verify, reading the store, leaves the
    server's part out of the client's run, on both of its paths (all runs, one run)."""
    client, server = InMemorySpanExporter(), InMemorySpanExporter()
    providers = []
    for exporter, service in ((client, "agent"), (server, "tools")):
        provider = TracerProvider(resource=Resource.create({"service.name": service}))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        providers.append(provider)
    with (
        otel_prov.agent_session("a", question="Q?", tracer_provider=providers[0]) as session,
        otel_prov.tool_call("lookup", arguments="{}", tracer_provider=providers[0]) as call,
    ):
        caller = call.get_span_context()
        remote = SpanContext(caller.trace_id, caller.span_id, True, caller.trace_flags)
        token = context.attach(trace.set_span_in_context(NonRecordingSpan(remote)))
        try:
            with otel_prov.tool_call("lookup", arguments="{}", tracer_provider=providers[1]):
                otel_prov.set_observation("found")
        finally:
            context.detach(token)
        otel_prov.set_observation("found")
    path = tmp_path / "store"
    exporter = OxigraphStoreExporter(path)
    exporter.export(
        [
            map_spans(record_from_span(s) for s in spans.get_finished_spans())
            for spans in (client, server)
        ]
    )
    exporter.shutdown()
    parts = pyoxigraph.Store.read_only(str(path)).query(
        "PREFIX oprov: <https://w3id.org/otel-prov/ns#> SELECT ?s WHERE { GRAPH ?g {"
        f" ?s oprov:partOf <urn:otel-prov:{caller.trace_id:032x}:{caller.span_id:016x}> }} }}"
    )
    assert isinstance(parts, pyoxigraph.QuerySolutions) and len(list(parts)) == 1
    trace_id = f"{session.get_span_context().trace_id:032x}"
    for command in (["verify", "--all"], ["verify", trace_id]):
        result = run_cli(*command, "--store", str(path))
        assert result.returncode == 0, result.stdout + result.stderr


SEALED_V1 = Path(__file__).parent / "golden" / "sealed_v1_scores.nq"
"""A run with scores (0.8333333333333334), costs (0.30000000000000004, 0.003885, 0) and an
annotation, sealed by otel-prov 8e18cf6 in canonical form ``otel-prov-nt-sorted-1``
(numbers hashed as written), as its embedded store held it."""


def _load_v1(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    store = pyoxigraph.Store(str(path))
    store.load(SEALED_V1.read_bytes(), pyoxigraph.RdfFormat.N_QUADS)
    del store
    return path


def test_runs_sealed_in_the_first_canonical_form_still_verify(tmp_path: Path) -> None:
    path = _load_v1(tmp_path)
    for ident in ("--all", "sealed-v1"):
        result = run_cli("verify", ident, "--store", str(path))
        assert result.returncode == 0, result.stdout + result.stderr
        assert "2 verified, 0 failed" in result.stdout


def test_a_changed_score_in_the_first_canonical_form_is_caught(tmp_path: Path) -> None:
    path = _load_v1(tmp_path)
    _update(
        path,
        "DELETE { GRAPH ?g { ?e oprov:score ?s } } INSERT { GRAPH ?g { ?e oprov:score 0.9e0 } } "
        "WHERE { GRAPH ?g { ?e oprov:score ?s FILTER(STRENDS(STR(?e), '0001:evaluation-1')) } }",
    )
    result = run_cli("verify", "--all", "--store", str(path))
    assert result.returncode == 1
    assert "changed: 0000000000000001:evaluation-1" in result.stdout


def test_new_bundles_name_the_canonical_form_that_hashes_numbers_by_value(store: Path) -> None:
    forms = {
        quad.object
        for quad in pyoxigraph.Store.read_only(str(store)).quads_for_pattern(
            None, pyoxigraph.NamedNode(f"{O.canonicalization[1:-1]}"), None
        )
    }
    assert forms == {pyoxigraph.Literal("otel-prov-nt-sorted-2")}


def test_a_bundle_in_an_unknown_canonical_form_is_reported(store: Path) -> None:
    _update(
        store,
        "DELETE { GRAPH ?g { ?b oprov:canonicalization ?f } } "
        "INSERT { GRAPH ?g { ?b oprov:canonicalization 'otel-prov-nt-sorted-9' } } "
        "WHERE { GRAPH ?g { ?b oprov:canonicalization ?f } }",
    )
    result = run_cli("verify", "--store", str(store))
    assert result.returncode == 1
    assert "canonical form 'otel-prov-nt-sorted-9', which this otel-prov does not know" in (
        result.stdout
    )


def test_a_forged_blank_node_in_a_run_is_caught_by_either_read(store: Path) -> None:
    """One run is read by naming its members in a query, which a blank node cannot be:
    a blank node claiming a place in the run must still land in its content."""
    reader = open_store(store)
    run = reader.sessions().sessions[0].id
    _update(
        store,
        f"""INSERT DATA {{ GRAPH <urn:otel-prov:graph> {{
        _:forged a oprov:ToolCall ; oprov:partOf <{run}> ; oprov:status "ok" }} }}""",
    )
    reader = open_store(store)
    (alone,) = reader.verify(run)
    at_once = {check.session: check for check in reader.verify()}
    assert alone.problems[0].startswith("content changed since export (added: ")
    assert at_once[run] == alone
    assert sum(check.ok for check in at_once.values()) == 2


def test_a_runs_triples_are_what_one_construct_of_its_members_finds(store: Path) -> None:
    """``triples`` (what ``show`` serializes) names the run's members in a second query;
    it must read exactly what the one CONSTRUCT over the whole graph reads: no member's
    triple missing, nothing of another run, a forged blank node member included."""
    runs = [summary.id for summary in open_store(store).sessions().sessions]
    _update(
        store,
        f"""INSERT DATA {{ GRAPH <urn:otel-prov:graph> {{
        _:forged a oprov:ToolCall ; oprov:partOf <{runs[0]}> ; oprov:status "ok" }} }}""",
    )
    reader = open_store(store)
    stored = pyoxigraph.Store.read_only(str(store))
    for run in runs:
        whole = stored.query(session_construct_query("<urn:otel-prov:graph>", run))
        assert isinstance(whole, pyoxigraph.QueryTriples)
        expected = {str(triple) for triple in whole}
        read = {str(triple) for triple in reader.triples(run)}
        assert read == expected and len(read) > 20
    forged = [t for t in reader.triples(runs[0]) if isinstance(t.subject, pyoxigraph.BlankNode)]
    assert len(forged) == 3


def test_the_graph_reads_the_same_in_parts_as_in_one_dump(store: Path) -> None:
    """``verify --all`` reads a read-only snapshot one predicate at a time, on every
    core; through a writer's handle (which moves on between queries) in one dump.  Both
    must give every line, a predicate the mapper never writes and U+2028 included."""
    run = open_store(store).sessions().sessions[0].id
    _update(
        store,
        f"""INSERT DATA {{ GRAPH <urn:otel-prov:graph> {{
        <{run}> <urn:example:odd> "line\u2028separator" }} }}""",
    )
    in_parts = list(EmbeddedBackend(store).ntriples("urn:otel-prov:graph"))
    writer = pyoxigraph.Store(str(store))
    (dumped,) = EmbeddedBackend(store, writer=lambda: writer).ntriples("urn:otel-prov:graph")
    lines = sorted("".join(in_parts).split("\n"))
    assert len(in_parts) > 20 and lines == sorted(dumped.split("\n"))
    assert f'<{run}> <urn:example:odd> "line\u2028separator" .' in lines


def _with_a_tool_elsewhere(path: Path, *, service: str, behind_s: float) -> None:
    """``known_session`` stored with its successful tool call (``0x25``) recorded by
    ``service``, whose clock is ``behind_s`` seconds behind the agent's."""
    behind = int(behind_s * 1e9)
    spans = [
        dataclasses.replace(
            span,
            start_ns=span.start_ns - behind,
            end_ns=None if span.end_ns is None else span.end_ns - behind,
            service_name=service,
        )
        if span.span_id == 0x25
        else span
        for span in known_session()
    ]
    store_runs(path, spans)


def test_a_tool_on_a_host_seconds_behind_is_a_warning_not_tampering(tmp_path: Path) -> None:
    """Time across hosts is not ordered: the tool's arguments "generated after" the call
    that used them started, by 5 s on another service's clock, is skew, not an edit."""
    path = tmp_path / "store"
    _with_a_tool_elsewhere(path, service="weather-tools", behind_s=5)
    result = run_cli("verify", "--store", str(path))
    assert result.returncode == 0, result.stdout
    assert "warning: clock skew" in result.stdout and "weather-tools" in result.stdout
    assert "violated" not in result.stdout
    assert result.stdout.splitlines()[-1] == "1 verified, 0 failed"
    (check,) = json.loads(run_cli("verify", "--store", str(path), "--format", "json").stdout)
    assert check["ok"] and check["problems"] == []
    assert len(check["warnings"]) == 1 and ":0000000000000025:arguments" in check["warnings"][0]


def test_skew_beyond_the_bound_or_inside_one_clock_still_fails(tmp_path: Path) -> None:
    from otel_prov.read._verify import CLOCK_SKEW_BOUND_S

    for name, service, behind_s in [
        ("one-clock", "agent-service", 5),
        ("too-far", "weather-tools", CLOCK_SKEW_BOUND_S + 60),
    ]:
        path = tmp_path / name
        _with_a_tool_elsewhere(path, service=service, behind_s=behind_s)
        result = run_cli("verify", "--store", str(path))
        assert result.returncode == 1, (name, result.stdout)
        assert "PROV constraint 37 generation precedes usage violated by" in result.stdout


def test_an_edit_beside_clock_skew_still_fails(tmp_path: Path) -> None:
    path = tmp_path / "store"
    _with_a_tool_elsewhere(path, service="weather-tools", behind_s=5)
    _update(
        path,
        """DELETE { GRAPH ?g { ?o prov:value ?v } } INSERT { GRAPH ?g { ?o prov:value "sunny" } }
        WHERE { GRAPH ?g { ?o a oprov:Observation ; prov:value "18 °C" } }""",
    )
    result = run_cli("verify", "--store", str(path))
    assert result.returncode == 1 and "content changed since export" in result.stdout
