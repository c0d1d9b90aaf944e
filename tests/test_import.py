"""``otel-prov import``: OTLP JSON trace files into provenance.

The parser is checked against an encoder written here from the OTLP/JSON spec (every
attribute type, both encodings of 64-bit integers and enums, defaults left out), and
against the OpenTelemetry SDK's own encoder: the demo agent's spans, written to a file
the way the Collector's file exporter writes them and imported, give exactly the triples
the same spans give when recorded live through ``configure()``.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyoxigraph
import pytest
from google.protobuf.json_format import MessageToDict
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common._internal.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

import otel_prov
from otel_prov.demo import run_demo_agent
from otel_prov.prov._otlp_json import parse_otlp_json
from otel_prov.prov._span_record import SpanEvent, SpanRecord, classify
from otel_prov.setup._configure import configure
from tests.builders import make_span
from tests.cli import run_cli
from tests.receiver import quads

# --- an OTLP/JSON encoder, from the spec ----------------------------------------------

Choose = Callable[[Sequence[Any]], Any]
"""Picks one of the ways the spec allows to write a value (hypothesis draws it)."""


def first_option(options: Sequence[Any]) -> Any:
    """Outside hypothesis: always the first way (strings for 64-bit integers, ...)."""
    return options[0]


def _any_value(value: Any, choose: Choose) -> dict[str, Any]:
    """The OTLP/JSON ``AnyValue`` of an SDK attribute value."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": choose([str(value), value])}
    if isinstance(value, float):
        if math.isfinite(value):
            return {"doubleValue": value}
        return {"doubleValue": "Infinity" if value > 0 else "-Infinity"}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, bytes):
        return {"bytesValue": base64.b64encode(value).decode()}
    if isinstance(value, tuple):
        return {"arrayValue": {"values": [_any_value(item, choose) for item in value]}}
    pairs = [{"key": k, "value": _any_value(v, choose)} for k, v in value.items()]
    return {"kvlistValue": {"values": pairs}}


def _attributes(attributes: Mapping[str, Any], choose: Choose) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any_value(v, choose)} for k, v in attributes.items()]


_CODES = {"unset": 0, "ok": 1, "error": 2}
_KINDS = ("unspecified", "internal", "server", "client", "producer", "consumer")


def _span_json(record: SpanRecord, choose: Choose) -> dict[str, Any]:
    """One span; a field at its default value is left out or written, as encoders do."""
    span: dict[str, Any] = {
        "traceId": choose([str.lower, str.upper])(f"{record.trace_id:032x}"),
        "spanId": f"{record.span_id:016x}",
        "startTimeUnixNano": choose([str(record.start_ns), record.start_ns]),
    }
    number = _KINDS.index(record.kind)
    if number or choose([False, True]):  # proto3 JSON may leave the default out
        span["kind"] = choose([number, f"SPAN_KIND_{record.kind.upper()}"])
    if record.parent_id is not None:
        span["parentSpanId"] = f"{record.parent_id:016x}"
        # A parent known to be local, or nothing said about it, reads the same.
        remote = 0x300 if record.remote_parent else choose([None, 0x100, "256"])
        if remote is not None:
            span["flags"] = choose([remote, str(remote)])
    elif choose([False, True]):
        span["parentSpanId"] = ""
    if record.name or choose([False, True]):
        span["name"] = record.name
    if record.end_ns is not None:
        span["endTimeUnixNano"] = choose([str(record.end_ns), record.end_ns])
    elif choose([False, True]):
        span["endTimeUnixNano"] = choose(["0", 0])
    status: dict[str, Any] = {}
    if record.status != "unset" or choose([False, True]):
        status["code"] = choose([_CODES[record.status], f"STATUS_CODE_{record.status.upper()}"])
    if record.status_message is not None:
        status["message"] = record.status_message
    if status or choose([False, True]):
        span["status"] = status
    if record.attributes:
        span["attributes"] = _attributes(record.attributes, choose)
    if record.events:
        span["events"] = [
            {
                "timeUnixNano": choose([str(event.time_ns), event.time_ns]),
                "name": event.name,
                "attributes": _attributes(event.attributes, choose),
            }
            for event in record.events
        ]
    if record.links:
        span["links"] = [{"traceId": f"{t:032x}", "spanId": f"{s:016x}"} for t, s in record.links]
    return span


def encode_request(records: Sequence[SpanRecord], choose: Choose = first_option) -> dict[str, Any]:
    """An ``ExportTraceServiceRequest``: the spans grouped by service into resourceSpans."""
    by_service: dict[str | None, list[dict[str, Any]]] = {}
    for record in records:
        by_service.setdefault(record.service_name, []).append(_span_json(record, choose))
    resource_spans = []
    for service, spans in by_service.items():
        attributes = [{"key": "telemetry.sdk.language", "value": {"stringValue": "python"}}]
        if service is not None:
            attributes.append({"key": "service.name", "value": {"stringValue": service}})
        resource_spans.append(
            {"resource": {"attributes": attributes}, "scopeSpans": [{"scope": {}, "spans": spans}]}
        )
    return {"resourceSpans": resource_spans}


def encode_lines(
    records: Sequence[SpanRecord], choose: Choose = first_option, per_line: int = 3
) -> str:
    """JSON Lines, as the Collector's file exporter writes them: a request per line."""
    chunks = [records[i : i + per_line] for i in range(0, len(records), per_line)]
    return "".join(json.dumps(encode_request(chunk, choose)) + "\n" for chunk in chunks)


def _line(*spans: dict[str, Any]) -> str:
    """One line of JSON Lines holding ``spans`` as they are (right or wrong)."""
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]})


# --- the round trip ------------------------------------------------------------------

_IDS_128 = st.integers(1, (1 << 128) - 1)
_IDS_64 = st.integers(1, (1 << 64) - 1)
_NANOS = st.integers(1, (1 << 64) - 1)
_primitive = st.one_of(
    st.text(max_size=12),
    st.booleans(),
    st.integers(-(1 << 63), (1 << 63) - 1),
    st.floats(allow_nan=False),
    st.binary(max_size=8),
)
_attribute_value = st.recursive(
    _primitive,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=5), inner, max_size=3),
    ),
    max_leaves=6,
)
_attribute_maps = st.dictionaries(st.text(max_size=12), _attribute_value, max_size=4)
_genai_attributes = st.fixed_dictionaries(
    {"gen_ai.operation.name": st.sampled_from(["invoke_agent", "execute_tool", "chat"])},
    optional={"otel_prov.iteration.number": st.integers(1, 9)},
)


@st.composite
def span_records(draw: st.DrawFn) -> SpanRecord:
    attributes = draw(_attribute_maps | _genai_attributes)
    parent = draw(st.none() | _IDS_64)
    events = draw(st.lists(st.tuples(st.text(max_size=8), _NANOS, _attribute_maps), max_size=2))
    return SpanRecord(
        trace_id=draw(_IDS_128),
        span_id=draw(_IDS_64),
        parent_id=parent,
        name=draw(st.text(max_size=12)),
        start_ns=draw(_NANOS),
        end_ns=draw(st.none() | _NANOS),
        status=draw(st.sampled_from(["unset", "ok", "error"])),
        status_message=draw(st.none() | st.text(min_size=1, max_size=12)),
        attributes=attributes,
        events=tuple(SpanEvent(name, time_ns, attrs) for name, time_ns, attrs in events),
        links=tuple(draw(st.lists(st.tuples(_IDS_128, _IDS_64), max_size=2))),
        service_name=draw(st.none() | st.text(max_size=8)),
        role=classify(attributes, root=parent is None),
        kind=draw(st.sampled_from(_KINDS)),
        remote_parent=parent is not None and draw(st.booleans()),
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(span_records(), max_size=6), st.data())
def test_span_records_survive_otlp_json_and_back(
    records: list[SpanRecord], data: st.DataObject
) -> None:
    def choose(options: Sequence[Any]) -> Any:
        return data.draw(st.sampled_from(options))

    if choose([True, False]):
        text = encode_lines(records, choose, per_line=choose([1, 2, 4]))
    else:  # one document, pretty-printed over many lines
        text = json.dumps(encode_request(records, choose), indent=2)
    parsed = parse_otlp_json(text, "spans.json")
    assert parsed.problems == ()
    assert sorted(parsed.spans, key=repr) == sorted(records, key=repr)


def test_non_finite_doubles_url_safe_bytes_and_empty_values_read_as_proto3_json_has_them() -> None:
    span = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "startTimeUnixNano": "1",
        "attributes": [
            {"key": "nan", "value": {"doubleValue": "NaN"}},
            {"key": "exact", "value": {"doubleValue": "1.5"}},
            {"key": "bytes", "value": {"bytesValue": "-_8"}},
            {"key": "null", "value": {}},
            {"key": "empty array", "value": {"arrayValue": {}}},
        ],
    }
    parsed = parse_otlp_json(_line(span), "f")
    assert parsed.problems == ()
    (record,) = parsed.spans
    assert math.isnan(record.attributes["nan"]) and record.attributes["exact"] == 1.5
    assert record.attributes["bytes"] == b"\xfb\xff"
    assert "null" not in record.attributes and record.attributes["empty array"] == ()
    assert parse_otlp_json("", "empty") == parse_otlp_json("{}\n", "empty")


# --- bad input -----------------------------------------------------------------------


def _nested(depth: int) -> dict[str, Any]:
    """An ``AnyValue`` holding arrays ``depth`` deep."""
    value: dict[str, Any] = {"intValue": "1"}
    for _ in range(depth):
        value = {"arrayValue": {"values": [value]}}
    return value


_GOOD = {
    "traceId": "0af7651916cd43dd8448eb211c80319c",
    "spanId": "b7ad6b7169203331",
    "name": "invoke_agent a",
    "startTimeUnixNano": "1000",
    "endTimeUnixNano": "2000",
    "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}],
}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        # A cut line: the parser notices at the end of the next; reading resumes there.
        ('{"resourceSpans": [', "f.jsonl:2: invalid JSON: Expecting ',' delimiter (line 4,"),
        ("[1, 2]", "f.jsonl:2: not an OTLP trace export (a JSON object); skipped"),
        ('{"resourceMetrics": []}', "f.jsonl:2: no resourceSpans: not an OTLP trace export"),
        (
            _line(_GOOD, {k: v for k, v in _GOOD.items() if k != "traceId"}),
            "f.jsonl:2: span 2 has no traceId; skipped",
        ),
        (
            _line({**_GOOD, "spanId": "t61rcWkgMzE="}),
            'f.jsonl:2: span 1 has spanId "t61rcWkgMzE=", not 16 hex digits (OTLP/JSON ids are '
            "hex, not base64); skipped",
        ),
        (
            _line({**_GOOD, "spanId": "0000000000000000"}),
            "f.jsonl:2: span 1 has an all-zero spanId; skipped",
        ),
        (
            _line({**_GOOD, "startTimeUnixNano": "soon"}),
            'f.jsonl:2: span 1 has startTimeUnixNano "soon", not an integer; skipped',
        ),
        (
            _line({**_GOOD, "status": {"code": 7}}),
            "f.jsonl:2: span 1 has status code 7, not 0, 1, 2 or a STATUS_CODE_ name; skipped",
        ),
        (
            _line({**_GOOD, "attributes": [{"key": "n", "value": {"intValue": "1.5"}}]}),
            "f.jsonl:2: span 1 (b7ad6b7169203331): attribute 'n' has intValue \"1.5\", not an "
            "integer; skipped",
        ),
        (
            _line({**_GOOD, "attributes": [{"key": "b", "value": {"boolValue": "yes"}}]}),
            "f.jsonl:2: span 1 (b7ad6b7169203331): attribute 'b' has boolValue \"yes\" of the "
            "wrong type; skipped",
        ),
        (
            _line({**_GOOD, "events": [{"name": "e"}]}),
            "f.jsonl:2: span 1 (b7ad6b7169203331): event 1 has no timeUnixNano; skipped",
        ),
        (
            _line({**_GOOD, "links": [{"traceId": "x", "spanId": "b7ad6b7169203331"}]}),
            'f.jsonl:2: span 1 (b7ad6b7169203331): link 1 has traceId "x", not 32 hex digits',
        ),
        # Hostile input: past Python's int() limit (4,300 digits) or its recursion limit.
        (
            _line({**_GOOD, "attributes": [{"key": "n", "value": {"intValue": "9" * 5000}}]}),
            "f.jsonl:2: span 1 (b7ad6b7169203331): attribute 'n' has intValue of 5000 digits, "
            "out of the 64-bit range; skipped",
        ),
        (
            _line({**_GOOD, "attributes": [{"key": "n", "value": {"intValue": 0}}]}).replace(
                '"intValue": 0', '"intValue": -' + "9" * 5000
            ),
            "f.jsonl:2: span 1 (b7ad6b7169203331): attribute 'n' has intValue of 5000 digits, "
            "out of the 64-bit range; skipped",
        ),
        (
            _line({**_GOOD, "startTimeUnixNano": 0}).replace(
                '"startTimeUnixNano": 0', '"startTimeUnixNano": ' + "1" * 5000
            ),
            "f.jsonl:2: span 1 has startTimeUnixNano of 5000 digits, out of the 64-bit range; "
            "skipped",
        ),
        (
            _line({**_GOOD, "attributes": [{"key": "n", "value": _nested(100)}]}),
            "f.jsonl:2: span 1 (b7ad6b7169203331): attribute 'n' has values nested more than "
            "64 deep; skipped",
        ),
        ("[" * 100_000 + "]" * 100_000, "f.jsonl:2: JSON nested too deep to read; skipped"),
    ],
)
def test_a_bad_part_is_named_by_file_and_line_and_the_rest_is_read(line: str, problem: str) -> None:
    other = {**_GOOD, "traceId": "1" * 32}
    parsed = parse_otlp_json(f"{_line(other)}\n{line}\n{_line(other)}\n", "f.jsonl")
    (reported,) = parsed.problems
    assert reported.startswith(problem)
    # The lines around it are read; a span with one bad attribute, event or link is kept.
    assert sum(span.trace_id == int("1" * 32, 16) for span in parsed.spans) == 2
    if "(b7ad6b7169203331)" in problem:
        assert any(span.span_id == 0xB7AD6B7169203331 for span in parsed.spans)


def test_reading_resumes_at_the_next_line_after_invalid_json() -> None:
    text = '{"resourceSpans": [\n' + _line(_GOOD) + "\nnot json either\n" + _line(_GOOD) + "\n"
    parsed = parse_otlp_json(text, "t.jsonl")
    assert [p.split(":")[1] for p in parsed.problems] == ["1", "3"]
    assert len(parsed.spans) == 2


# --- files written by the OpenTelemetry SDK ------------------------------------------


def _hex_ids(node: Any) -> Any:
    """The protobuf JSON mapping writes ids in base64; OTLP/JSON (and the Collector) in hex."""
    if isinstance(node, dict):
        return {
            key: base64.b64decode(value).hex()
            if key in ("traceId", "spanId", "parentSpanId")
            else _hex_ids(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(item) for item in node]
    return node


class OtlpJsonFileExporter(SpanExporter):
    """Writes each batch as the Collector's file exporter does: one OTLP/JSON request per
    line, built by the SDK's own OTLP encoder.  Enums go out as names and as integers in
    turn (the protobuf mapping writes names, the Collector integers)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._batches = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            self._batches += 1
            message = MessageToDict(
                encode_spans(spans), use_integers_for_enums=self._batches % 2 == 0
            )
            with self._path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(_hex_ids(message), ensure_ascii=False) + "\n")
        return SpanExportResult.SUCCESS


def _show_json(store: Path, ident: str) -> Any:
    result = run_cli("show", ident, "--store", str(store), "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def demo_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The demo agent recorded live into a store, its spans also written to a trace file."""
    monkeypatch.chdir(tmp_path)  # the blob store's default directory
    live, trace_file = tmp_path / "live", tmp_path / "traces.jsonl"
    handle = configure(
        store=live,
        set_global=False,
        otlp=False,
        service_name="otel-prov-demo",
        wal_dir=tmp_path / "wal",
    )
    handle.tracer_provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(trace_file)))
    run_demo_agent(tracer_provider=handle.tracer_provider)
    handle.shutdown()
    return live, trace_file


def test_an_sdk_trace_file_imports_to_exactly_what_configure_records_live(
    demo_run: tuple[Path, Path], tmp_path: Path
) -> None:
    live, trace_file = demo_run
    imported = tmp_path / "imported"
    result = _import(trace_file, "--store", imported)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "imported 12 spans from 1 traces: 1 sessions\n"
    assert result.stderr == ""
    assert quads(imported) == quads(live)
    assert _show_json(imported, "demo-conversation") == _show_json(live, "demo-conversation")
    # Recorded live and imported too, a run is stored once.
    recorded = quads(live)
    assert _import(trace_file, "--store", live).returncode == 0
    assert quads(live) == recorded


def test_a_servers_tool_call_for_a_remote_caller_imports_as_recorded_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An MCP server's trace file holds no session: its tool call, whose parent is remote
    (OTLP ``flags``), is provenance all the same; a plain span under a remote parent is not."""
    monkeypatch.chdir(tmp_path)
    live, trace_file = tmp_path / "live", tmp_path / "traces.jsonl"
    handle = configure(store=live, set_global=False, otlp=False, service_name="tools")
    provider = handle.tracer_provider
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(trace_file)))
    tracer = provider.get_tracer("t")
    for trace_id, plain in ((0xABC, False), (0xDEF, True)):
        caller = SpanContext(trace_id, 0x123, True, TraceFlags(1))
        token = otel_context.attach(trace.set_span_in_context(NonRecordingSpan(caller)))
        try:
            if plain:
                tracer.start_span("GET /health").end()
            else:
                with otel_prov.tool_call("lookup", arguments="{}", tracer_provider=provider):
                    otel_prov.set_observation("found")
        finally:
            otel_context.detach(token)
    handle.shutdown()
    imported = tmp_path / "imported"
    result = _import(trace_file, "--store", imported)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("imported 1 spans from 1 traces: 0 sessions")
    assert quads(imported) == quads(live)
    parent = f"<urn:otel-prov:{0xABC:032x}:{0x123:016x}>"
    assert any("remoteParent" in quad and "true" in quad for quad in quads(live))
    assert any(f"partOf> {parent}" in quad for quad in quads(live))


def test_importing_again_adds_nothing_and_forks_no_chain(
    demo_run: tuple[Path, Path], tmp_path: Path
) -> None:
    _, trace_file = demo_run
    store = tmp_path / "imported"
    first = _import(trace_file, "--store", store)
    assert first.returncode == 0, first.stderr
    before = quads(store)
    # The file again, and once more from stdin: each span twice in one run.
    text = trace_file.read_text()
    again = _import(trace_file, "-", "--store", store, "--format", "json", stdin=text)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert (report["spans"], report["sessions"], report["already_stored"]) == (12, 1, 1)
    assert report["revised"] == 0 and report["problems"] == []
    assert quads(store) == before
    assert run_cli("verify", "--store", str(store)).returncode == 0


def _session_spans(
    trace_id: int, agent: str, start_ms: float, *, first_id: int = 1, parent: int | None = None
) -> list[SpanRecord]:
    """One run of ``agent``: a session, an iteration and a tool call."""
    session, iteration, tool = first_id, first_id + 1, first_id + 2
    return [
        make_span(
            session,
            parent,
            trace_id=trace_id,
            name=f"invoke_agent {agent}",
            start_ms=start_ms,
            end_ms=start_ms + 10,
            gen_ai__operation__name="invoke_agent",
            gen_ai__agent__name=agent,
            gen_ai__conversation__id=f"conversation-{trace_id}",
            otel_prov__question="Weather in Paris?",
            otel_prov__answer="18 °C",
        ),
        make_span(
            iteration,
            session,
            trace_id=trace_id,
            name="iteration 1",
            start_ms=start_ms + 1,
            end_ms=start_ms + 5,
            otel_prov__iteration__number=1,
            otel_prov__thought="Ask the weather service.",
            otel_prov__action="get_weather",
        ),
        make_span(
            tool,
            iteration,
            trace_id=trace_id,
            name="execute_tool get_weather",
            start_ms=start_ms + 2,
            end_ms=start_ms + 4,
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="get_weather",
            otel_prov__observation="18 °C",
        ),
    ]


def _write(path: Path, records: Sequence[SpanRecord]) -> Path:
    path.write_text(encode_lines(records), encoding="utf-8")
    return path


def _import(*args: str | Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli("import", *map(str, args), stdin=stdin)


def _chain(store: Path) -> dict[str, tuple[str, int]]:
    """Bundle -> its chain and sequence number."""
    solutions = pyoxigraph.Store.read_only(str(store)).query(
        "PREFIX oprov: <https://w3id.org/otel-prov/ns#> SELECT ?b ?c ?n WHERE { GRAPH ?g { "
        "?b oprov:bundleOf ?s ; oprov:chainId ?c ; oprov:sequenceNumber ?n } }"
    )
    assert isinstance(solutions, pyoxigraph.QuerySolutions)
    return {row["b"].value: (row["c"].value, int(row["n"].value)) for row in solutions}


def _bundle(trace_id: int, span_id: int = 1) -> str:
    return f"urn:otel-prov:{trace_id:032x}:{span_id:016x}:bundle"


def test_each_import_is_a_chain_of_its_own_and_reimports_leave_it_alone(tmp_path: Path) -> None:
    store = tmp_path / "store"
    first = _write(tmp_path / "a.jsonl", _session_spans(0xA, "weather", 0))
    second = _write(tmp_path / "b.jsonl", _session_spans(0xB, "weather", 100))
    for path in (first, second):
        assert _import(path, "--store", store).returncode == 0
    chains = _chain(store)
    assert sorted(chains) == [_bundle(0xA), _bundle(0xB)]
    assert chains[_bundle(0xA)][0] != chains[_bundle(0xB)][0]
    assert {n for _, n in chains.values()} == {1}
    before = quads(store)
    again = _import(second, first, "--store", store)
    assert again.returncode == 0, again.stderr
    assert again.stdout == (
        "imported 6 spans from 2 traces: 2 sessions (2 already stored, 0 of them revised)\n"
    )
    assert quads(store) == before and _chain(store) == chains  # no entry added
    assert run_cli("verify", "--store", str(store)).returncode == 0


def test_spans_of_a_stored_session_from_a_later_file_revise_its_bundle(tmp_path: Path) -> None:
    store = tmp_path / "store"
    session, iteration, tool = _session_spans(0xC, "weather", 0)
    earlier = _import(_write(tmp_path / "1.jsonl", [session, iteration]), "--store", store)
    assert earlier.returncode == 0, earlier.stderr
    later = _import(_write(tmp_path / "2.jsonl", [tool]), "--store", store)
    assert later.returncode == 0, later.stderr
    assert later.stdout == (
        "imported 1 spans from 1 traces: 0 sessions (1 already stored, 1 of them revised)\n"
    )
    (view,) = _show_json(store, f"{0xC:032x}")
    assert view["iterations"][0]["tool_calls"][0]["observation"] == "18 °C"
    verified = run_cli("verify", "--store", str(store))
    assert verified.returncode == 0, verified.stdout
    # The revision is an entry of the chain of the import that made it.
    chains = _chain(store)
    assert sorted(chains) == [_bundle(0xC), f"{_bundle(0xC)}-2"]
    assert chains[f"{_bundle(0xC)}-2"][1] == 1


def test_a_trace_with_two_runs_maps_once_and_seals_both(tmp_path: Path) -> None:
    """An HTTP request that ran two agents one after the other: two outermost sessions."""
    request = make_span(
        0x10, None, trace_id=1, name="POST /ask", start_ms=0, end_ms=100, service="web"
    )
    planner = _session_spans(1, "planner", 10, first_id=0x20, parent=0x10)
    writer = _session_spans(1, "writer", 50, first_id=0x30, parent=0x10)
    store = tmp_path / "store"
    result = _import(_write(tmp_path / "t.jsonl", [request, *planner, *writer]), "--store", store)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "imported 7 spans from 1 traces: 2 sessions\n"
    listed = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    assert sorted(session["agent"] for session in listed) == ["planner", "writer"]
    assert run_cli("verify", "--store", str(store)).stdout.endswith("2 verified, 0 failed\n")


def test_traces_without_a_session_are_left_out_and_unended_spans_are_incomplete(
    tmp_path: Path,
) -> None:
    session, iteration, tool = _session_spans(0xD, "weather", 0)
    health_check = make_span(1, None, trace_id=0xE, name="GET /health")
    path = _write(
        tmp_path / "t.jsonl",
        [dataclasses.replace(session, end_ns=None), iteration, tool, health_check],
    )
    result = _import(path, "--store", tmp_path / "store")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "imported 3 spans from 1 traces: 1 sessions (1 spans of 1 traces without an agent "
        "session left out)\n"
    )
    (listed,) = json.loads(
        run_cli("sessions", "--store", str(tmp_path / "store"), "--format", "json").stdout
    )
    assert listed["status"] == "incomplete"


def test_spans_are_redacted_and_big_values_moved_out_as_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_PROV_REDACT_PATTERNS", '["sk-[a-z0-9]+"]')
    monkeypatch.setenv("OTEL_PROV_BLOB_DIR", str(tmp_path / "blobs"))
    monkeypatch.setenv("OTEL_PROV_BLOB_THRESHOLD", "1000")
    session, iteration, tool = _session_spans(0x6, "weather", 0)
    secret = dataclasses.replace(
        session, attributes={**session.attributes, "otel_prov.question": "key sk-abc123?"}
    )
    big = dataclasses.replace(
        tool, attributes={**tool.attributes, "otel_prov.observation": "rain " * 1000}
    )
    store = tmp_path / "store"
    assert (
        _import(_write(tmp_path / "t.jsonl", [secret, iteration, big]), "--store", store).returncode
        == 0
    )
    (view,) = _show_json(store, f"{0x6:032x}")
    assert view["question"] == "key [REDACTED]?"
    observation = view["iterations"][0]["tool_calls"][0]["observation"]
    assert observation.endswith("--full shows it]")
    assert "sk-abc123" not in "".join(quads(store))
    assert len(list((tmp_path / "blobs").rglob("*"))) == 3  # sha256/ab/abcd...


def test_bad_lines_are_named_by_file_and_line_and_the_rest_imported_exit_2(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        encode_lines(_session_spans(0xF, "weather", 0))
        + "not json\n"
        + _line({**_GOOD, "traceId": None}, {**_GOOD, "traceId": "2" * 32, "spanId": "3" * 16})
        + "\n",
        encoding="utf-8",
    )
    result = _import(path, "--store", tmp_path / "store")
    assert result.returncode == 2  # unreadable input is a usage error, though the rest is in
    assert result.stderr.splitlines() == [
        f"otel-prov: {path}:2: invalid JSON: Expecting value (line 2, column 1); skipped",
        f"otel-prov: {path}:3: span 1 has no traceId; skipped",
    ]
    assert result.stdout == (
        "imported 4 spans from 2 traces: 2 sessions (2 unreadable parts skipped, listed above)\n"
    )


def test_hostile_lines_are_named_by_file_and_line_and_the_rest_imported_exit_2(
    tmp_path: Path,
) -> None:
    """Past Python's limits (int() of more than 4,300 digits, nesting past the recursion
    limit): one line each on stderr, no traceback, every session around them imported."""
    path = tmp_path / "hostile.jsonl"
    attributes = [*_GOOD["attributes"], {"key": "n", "value": {"intValue": 0}}]
    huge = _line({**_GOOD, "attributes": attributes})
    path.write_text(
        encode_lines(_session_spans(0xA, "weather", 0))
        + huge.replace('"intValue": 0', '"intValue": ' + "9" * 5000)
        + "\n"
        + "[" * 100_000
        + "]" * 100_000
        + "\n"
        + encode_lines(_session_spans(0xB, "weather", 100))
        + _line({**_GOOD, "traceId": "c" * 32, "startTimeUnixNano": "9" * 5000})
        + "\n",
        encoding="utf-8",
    )
    result = _import(path, "--store", tmp_path / "store")
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        f"otel-prov: {path}:2: span 1 (b7ad6b7169203331): attribute 'n' has intValue of 5000 "
        "digits, out of the 64-bit range; skipped",
        f"otel-prov: {path}:3: JSON nested too deep to read; skipped",
        f"otel-prov: {path}:5: span 1 has startTimeUnixNano of 5000 digits, out of the 64-bit "
        "range; skipped",
    ]
    assert result.stdout.startswith("imported 7 spans from 3 traces: 3 sessions")


def test_nothing_to_import_is_exit_1(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", [make_span(1, None, trace_id=0x7, name="GET /health")])
    result = _import(path, "--store", tmp_path / "store")
    assert result.returncode == 1
    assert result.stderr == "otel-prov: no agent session in the spans read: nothing imported\n"


def test_stdin_is_read_for_a_dash(tmp_path: Path) -> None:
    text = encode_lines(_session_spans(0x5, "weather", 0))
    result = _import("-", "--store", tmp_path / "store", "--format", "json", stdin=text)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["sessions"] == 1


def test_usage_errors_exit_2_and_import_nothing(tmp_path: Path) -> None:
    store = tmp_path / "store"
    trace_file = _write(tmp_path / "t.jsonl", _session_spans(0x1, "weather", 0))
    missing = tmp_path / "missing.jsonl"
    for args in (
        (),
        (missing,),
        (trace_file, missing),
        (trace_file, "--endpoint-update", "http://localhost:1/update"),
        (trace_file, "--endpoint", "http://localhost:1/query"),
        (trace_file, "--format", "xml"),
    ):
        result = _import(*args, "--store", store)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr and "Traceback" not in result.stderr
    assert _import(trace_file, missing, "--store", store).stderr == (
        f"otel-prov: cannot read {missing}: No such file or directory\n"
    )
    assert not store.exists()
    query_only = run_cli(
        "import", str(trace_file), "--endpoint", "http://localhost:1/query", cwd=tmp_path
    )
    assert query_only.returncode == 2 and "--endpoint-update" in query_only.stderr
    assert not (tmp_path / ".otel-prov").exists()
