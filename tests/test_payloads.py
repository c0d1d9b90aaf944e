"""Big, cut and withheld content: blobs, truncation, and sizes and hashes with capture off."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pyoxigraph
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanLimits, TracerProvider

import otel_prov
from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.processing._blobs import (
    PREVIEW_CHARS,
    BlobError,
    BlobStore,
    externalize,
    read_blob,
)
from tests.builders import make_span
from tests.cli import run_cli

PREFIXES = """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
"""


def _sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _record(
    tmp_path: Path,
    agent: Callable[[TracerProvider], None],
    *,
    span_limits: SpanLimits | None = None,
    blob_threshold: int | None = None,
) -> Path:
    """Run ``agent`` with a real processor into an embedded store; return the store path."""
    store = tmp_path / "store"
    provider = TracerProvider(
        resource=Resource.create({"service.name": "payloads"}), span_limits=span_limits
    )
    processor = otel_prov.ProvSpanProcessor(
        OxigraphStoreExporter(store), blob_dir=tmp_path / "blobs", blob_threshold=blob_threshold
    )
    provider.add_span_processor(processor)
    agent(provider)
    provider.shutdown()
    return store


def _one_tool_session(observation: str, arguments: str = '{"q": "x"}') -> Callable[..., None]:
    def agent(provider: TracerProvider) -> None:
        with (
            otel_prov.agent_session("a", question="Q?", tracer_provider=provider),
            otel_prov.iteration(1, thought="look", action="fetch", tracer_provider=provider),
            otel_prov.tool_call("fetch", arguments=arguments, tracer_provider=provider),
        ):
            otel_prov.set_observation(observation)

    return agent


def _entity(store_path: Path, cls: str) -> dict[str, str]:
    """prov:value and the oprov descriptors of the only entity of class ``cls``."""
    store = pyoxigraph.Store.read_only(str(store_path))
    rows = cast(
        pyoxigraph.QuerySolutions,
        store.query(
            PREFIXES
            + f"""SELECT ?p ?o WHERE {{ GRAPH ?g {{ ?e a oprov:{cls} ; ?p ?o .
            FILTER(?p IN (prov:value, oprov:contentHash, oprov:byteSize, oprov:mediaType,
                          oprov:contentLocation, oprov:truncated)) }} }}"""
        ),
    )
    found = {}
    for row in rows:
        name = cast(pyoxigraph.NamedNode, row["p"]).value.rsplit("#", 1)[1]
        found[name] = cast(pyoxigraph.NamedNode | pyoxigraph.Literal, row["o"]).value
    return found


def test_a_large_observation_is_stored_once_by_hash_with_a_preview(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_PROV_BLOB_DIR", str(tmp_path / "blobs"))  # where the CLI reads
    payload = json.dumps({"rows": [f"row {i} " + "x" * 90 for i in range(1500)]})
    assert len(payload.encode()) > 64 * 1024

    def two_sessions(provider: TracerProvider) -> None:
        _one_tool_session(payload)(provider)
        _one_tool_session(payload)(provider)

    store = _record(tmp_path, two_sessions)
    blobs = [p for p in (tmp_path / "blobs").rglob("*") if p.is_file()]
    assert len(blobs) == 1 and blobs[0].read_text() == payload  # written once
    store_db = pyoxigraph.Store.read_only(str(store))
    values = {
        cast(pyoxigraph.Literal, row["v"]).value
        for row in cast(
            pyoxigraph.QuerySolutions,
            store_db.query(
                PREFIXES + "SELECT ?v WHERE { GRAPH ?g { ?e a oprov:Observation ; prov:value ?v } }"
            ),
        )
    }
    del store_db
    assert values == {payload[:PREVIEW_CHARS]}
    observation = _entity_of_first(store)
    assert observation["byteSize"] == str(len(payload.encode()))
    assert observation["contentHash"] == _sha256(payload)
    assert observation["mediaType"] == "application/json"
    assert read_blob(observation["contentLocation"], observation["contentHash"]) == payload
    # The small arguments stay inline, with their hash and size.
    sessions = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    short = run_cli("show", sessions[0]["id"], "--store", str(store))
    assert short.returncode == 0 and payload not in short.stdout
    assert "--full shows it" in short.stdout and observation["contentLocation"] in short.stdout
    full = run_cli("show", sessions[0]["id"], "--store", str(store), "--full", "--format", "json")
    (view,) = json.loads(full.stdout)
    assert view["iterations"][0]["tool_calls"][0]["observation"] == payload
    assert run_cli("verify", "--all", "--store", str(store)).returncode == 0
    # A blob that no longer matches its hash is named, not shown as if it were the value.
    blobs[0].write_text(payload.replace("row 7 ", "row 8 "))
    tampered = run_cli("show", sessions[0]["id"], "--store", str(store), "--full")
    assert "does not match its recorded hash" in tampered.stdout
    # ... and verify, which passed before the edit, fails on it.
    verified = run_cli("verify", "--all", "--store", str(store))
    assert verified.returncode == 1 and "does not match its recorded hash" in verified.stdout


def _entity_of_first(store: Path) -> dict[str, str]:
    store_db = pyoxigraph.Store.read_only(str(store))
    rows = cast(
        pyoxigraph.QuerySolutions,
        store_db.query(
            PREFIXES
            + """SELECT ?p ?o WHERE { GRAPH ?g {
            { SELECT ?e WHERE { GRAPH ?g { ?e a oprov:Observation } } ORDER BY ?e LIMIT 1 }
            ?e ?p ?o } }"""
        ),
    )
    found = {
        cast(pyoxigraph.NamedNode, row["p"]).value.rsplit("#", 1)[1]: cast(
            pyoxigraph.NamedNode | pyoxigraph.Literal, row["o"]
        ).value
        for row in rows
    }
    del store_db
    return found


def test_the_blob_threshold_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_PROV_BLOB_THRESHOLD", "100")
    big, small = "b" * 150, "s" * 80  # the arguments JSON is 92 bytes

    def agent(provider: TracerProvider) -> None:
        _one_tool_session(big, arguments=json.dumps({"note": small}))(provider)

    store = _record(tmp_path, agent)
    observation = _entity(store, "Observation")
    arguments = _entity(store, "Arguments")
    assert "contentLocation" in observation and observation["byteSize"] == "150"
    assert "contentLocation" not in arguments and arguments["value"] == json.dumps({"note": small})
    assert arguments["contentHash"] == _sha256(arguments["value"])


def test_an_attribute_limit_that_cuts_content_is_recorded(tmp_path: Path) -> None:
    whole = "result " * 30  # 210 characters; the limit keeps 80 (the hash is 71)

    def agent(provider: TracerProvider) -> None:
        _one_tool_session(whole)(provider)
        # A third-party instrumentation setting its own content attribute, cut the same way.
        tracer = provider.get_tracer("third-party")
        agent_kind = {"openinference.span.kind": "AGENT"}
        tool_kind = {"openinference.span.kind": "TOOL", "tool.name": "other"}
        with (
            tracer.start_as_current_span("agent", attributes=agent_kind),
            tracer.start_as_current_span("tool", attributes=tool_kind) as tool,
        ):
            tool.set_attribute("output.value", "theirs " * 30)

    store = _record(tmp_path, agent, span_limits=SpanLimits(max_span_attribute_length=80))
    db = pyoxigraph.Store.read_only(str(store))
    rows = {
        cast(pyoxigraph.Literal, row["v"]).value: row
        for row in cast(
            pyoxigraph.QuerySolutions,
            db.query(
                PREFIXES
                + """SELECT ?v ?t ?size ?hash WHERE { GRAPH ?g { ?e a oprov:Observation ;
                prov:value ?v . OPTIONAL { ?e oprov:truncated ?t }
                OPTIONAL { ?e oprov:byteSize ?size } OPTIONAL { ?e oprov:contentHash ?hash } } }"""
            ),
        )
    }
    ours, theirs = rows[whole[:80]], rows[("theirs " * 30)[:80]]
    assert cast(pyoxigraph.Literal, ours["t"]).value == "true"
    assert cast(pyoxigraph.Literal, ours["size"]).value == str(len(whole))
    assert cast(pyoxigraph.Literal, ours["hash"]).value == _sha256(whole)
    # Of the third party's value only the cut is known: flagged, no size or hash claimed.
    assert cast(pyoxigraph.Literal, theirs["t"]).value == "true"
    assert theirs["size"] is None and theirs["hash"] is None


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("OTEL_PROV_CAPTURE_CONTENT", "false"),
        ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT"),
    ],
)
def test_content_off_keeps_sizes_and_hashes_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    secret = "the secret result"
    store = _record(tmp_path, _one_tool_session(secret, arguments='{"k": "secret"}'))
    observation = _entity(store, "Observation")
    assert "value" not in observation
    assert observation["contentHash"] == _sha256(secret)
    assert observation["byteSize"] == str(len(secret))
    assert _entity(store, "Arguments")["contentHash"] == _sha256('{"k": "secret"}')
    assert _entity(store, "Question")["byteSize"] == "2"
    dump = run_cli(
        "query", "--store", str(store), "--format", "csv", "SELECT * { GRAPH ?g { ?s ?p ?o } }"
    )
    assert dump.returncode == 0 and "secret" not in dump.stdout
    sessions = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    shown = run_cli("show", sessions[0]["id"], "--store", str(store)).stdout
    assert f"[not captured: {len(secret)} bytes, {_sha256(secret)}]" in shown


@settings(max_examples=60, deadline=None)
@given(text=st.text(min_size=1, max_size=3000), threshold=st.integers(min_value=1, max_value=4096))
def test_externalize_keeps_a_prefix_and_the_whole_value_by_hash(
    tmp_path_factory: pytest.TempPathFactory, text: str, threshold: int
) -> None:
    store = BlobStore(tmp_path_factory.mktemp("blobs"))
    record = make_span(1, k=text, n=3)
    moved = externalize(record, store, threshold)
    if len(text.encode()) <= threshold:
        assert moved is record
        return
    blob = moved.blobs["k"]
    assert text.startswith(moved.attributes["k"]) and moved.attributes["n"] == 3
    assert blob.size == len(text.encode()) and blob.sha256 == _sha256(text)
    assert read_blob(blob.location, blob.sha256, directory=store.directory) == text


def test_a_blob_is_read_by_its_hash_from_the_blob_directory_never_from_a_recorded_path(
    tmp_path: Path,
) -> None:
    # A shared store could hold a location planted by anyone: a file: URI to any file of
    # the reader's machine, with that file's real hash.  Nothing outside the blob
    # directory is ever opened.
    secret = tmp_path / "elsewhere" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("PRIVATE KEY")
    planted = _sha256("PRIVATE KEY")
    blobs = BlobStore(tmp_path / "blobs")
    with pytest.raises(BlobError, match="not in the blob directory"):
        read_blob(secret.as_uri(), planted, directory=blobs.directory)
    with pytest.raises(BlobError, match="no sha256 recorded"):
        read_blob(secret.as_uri(), None, directory=blobs.directory)
    # The same text kept by us is found by its hash, wherever the location says it is.
    digest, _ = blobs.put(b"PRIVATE KEY")
    assert read_blob(secret.as_uri(), digest, directory=blobs.directory) == "PRIVATE KEY"


def test_content_cut_at_start_by_the_providers_span_limits_keeps_its_size_and_hash(
    tmp_path: Path,
) -> None:
    """Limits given to the TracerProvider in code, with no variable set, cut a value set
    when the span starts as they cut one set later: its whole size and hash are kept."""
    whole = "Where is the Louvre, and when does it open? " * 4

    def agent(provider: TracerProvider) -> None:
        with otel_prov.agent_session("a", question=whole, tracer_provider=provider):
            pass

    store = _record(tmp_path, agent, span_limits=SpanLimits(max_span_attribute_length=80))
    question = _entity(store, "Question")
    assert question["value"] == whole[:80] and question["truncated"] == "true"
    assert question["byteSize"] == str(len(whole)) and question["contentHash"] == _sha256(whole)


def _nested(depth: int, inner: str = "1") -> str:
    """A JSON value nested ``depth`` deep, objects and arrays by turns: parsing it takes
    more recursion than Python has."""
    opening = "".join('{"a":' if level % 2 else "[" for level in range(depth))
    closing = "".join("}" if level % 2 else "]" for level in reversed(range(depth)))
    return opening + inner + closing


DEEP = _nested(40_000)
assert len(DEEP.encode()) > 64 * 1024


def test_a_deeply_nested_value_over_the_threshold_is_kept_as_text_and_costs_no_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool result fetched from a hostile page: JSON nested deeper than Python parses.
    Before, the blob store's JSON check raised, and the run (and the next) was lost."""
    monkeypatch.setenv("OTEL_PROV_BLOB_DIR", str(tmp_path / "blobs"))

    def two_runs(provider: TracerProvider) -> None:
        _one_tool_session(DEEP, arguments=DEEP)(provider)
        _one_tool_session("fine")(provider)

    store = _record(tmp_path, two_runs)
    sessions = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    assert sorted(row["tool_calls"] for row in sessions) == [1, 1]
    store_db = pyoxigraph.Store.read_only(str(store))
    (row,) = cast(
        pyoxigraph.QuerySolutions,
        store_db.query(
            PREFIXES
            + """SELECT ?type ?hash ?at WHERE { GRAPH ?g { ?e a oprov:Observation ;
            oprov:mediaType ?type ; oprov:contentHash ?hash ; oprov:contentLocation ?at } }"""
        ),
    )
    media_type, digest = (cast(pyoxigraph.Literal, row[name]).value for name in ("type", "hash"))
    location = cast(pyoxigraph.NamedNode, row["at"]).value
    del store_db
    assert media_type == "text/plain; charset=utf-8"
    assert read_blob(location, digest) == DEEP
    assert run_cli("verify", "--all", "--store", str(store)).returncode == 0


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)


@settings(max_examples=40, deadline=None)
@given(
    document=_json,
    depth=st.integers(0, 30) | st.sampled_from([999, 1000, 5000, 30_000]),
    cut=st.integers(0, 20),
    threshold=st.sampled_from([16, 64 * 1024]),
)
def test_externalize_never_raises_and_types_json_only_when_it_parses(
    tmp_path_factory: pytest.TempPathFactory, document: object, depth: int, cut: int, threshold: int
) -> None:
    """Any JSON, nested to any depth, cut short or not: each value over the threshold is
    a blob, JSON only when it parses, and the span's other values are as they were."""
    text = _nested(depth, json.dumps(document))
    text = text[: len(text) - cut] if cut else text
    store = BlobStore(tmp_path_factory.mktemp("blobs"))
    moved = externalize(make_span(1, k=text, other="small"), store, threshold)
    assert moved.attributes["other"] == "small"
    if len(text.encode()) <= threshold:
        assert "k" not in moved.blobs
        return
    try:
        parses = isinstance(json.loads(text), list | dict)
    except (ValueError, RecursionError):
        parses = False
    blob = moved.blobs["k"]
    assert blob.media_type == ("application/json" if parses else "text/plain; charset=utf-8")
    assert read_blob(blob.location, blob.sha256, directory=store.directory) == text
