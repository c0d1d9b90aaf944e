"""The OTLP/JSON readers on hostile input: numbers past Python's ``int()`` limit (4,300
digits), nesting past its recursion limit, odd Unicode and lone surrogates, anywhere in
an otherwise valid request.

What ``import`` reads (:func:`parse_otlp_json`) never raises: every problem is one
message naming the source and line.  What ``receive`` reads (:func:`parse_otlp_json_body`)
raises :class:`InvalidRequestError` for a body it cannot read at all, and nothing else.
Every text that comes out, span or message, can be encoded (no lone surrogate reaches a
store, a log line or a protobuf answer).
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from otel_prov.prov._otlp_json import (
    InvalidRequestError,
    ParsedSpans,
    parse_otlp_json,
    parse_otlp_json_body,
)

_HOLE = re.compile(r'"@(big|deep|nest):(\d+)@"')
"""A placeholder :func:`_render` fills with JSON text ``json.dumps`` cannot write."""

_odd_text = st.text(
    st.characters(codec=None, categories=("Cs", "Co", "Cc", "Cf", "Zs", "Mn", "So", "Lo")),
    max_size=8,
)
_big = st.integers(4300, 6000).map(lambda digits: f"@big:{digits}@")
_deep = st.sampled_from([70, 400, 5_000, 100_000]).map(lambda depth: f"@deep:{depth}@")
_nest = st.sampled_from([63, 64, 65, 300, 5_000]).map(lambda depth: f"@nest:{depth}@")
_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(1 << 70), 1 << 70),
    st.floats(),
    _odd_text,
    _big,
    _deep,
    _nest,
    st.sampled_from(["1000", "9" * 5000, "-" + "1" * 4400, "NaN", "0af7651916cd43dd"]),
)
_hostile = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(_odd_text, inner, max_size=3),
        st.builds(lambda v: {"arrayValue": {"values": [v]}}, inner),
        st.builds(
            lambda k, v: {"kvlistValue": {"values": [{"key": k, "value": v}]}}, _odd_text, inner
        ),
    ),
    max_leaves=8,
)
_FIELDS = (
    "traceId",
    "spanId",
    "parentSpanId",
    "name",
    "startTimeUnixNano",
    "endTimeUnixNano",
    "flags",
    "status",
    "attributes",
    "events",
    "links",
)


@st.composite
def _requests(draw: st.DrawFn) -> str:
    """An export request whose span has some fields (or attribute values) replaced by
    hostile values, as JSON text."""
    span: dict[str, Any] = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "parentSpanId": "00f067aa0ba902b7",
        "name": draw(_odd_text),
        "startTimeUnixNano": "1000",
        "attributes": [
            {"key": draw(_odd_text), "value": {"stringValue": draw(_odd_text)}},
            {"key": "n", "value": draw(_hostile)},
        ],
        "events": [{"timeUnixNano": "1500", "name": draw(_odd_text)}],
    }
    for field in draw(st.lists(st.sampled_from(_FIELDS), max_size=3)):
        span[field] = draw(_hostile)
    resource = {"attributes": [{"key": "service.name", "value": draw(_hostile)}]}
    document = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [span]}]}]}
    return _render(json.dumps(document))


def _render(text: str) -> str:
    def fill(found: re.Match[str]) -> str:
        kind, size = found.group(1), int(found.group(2))
        if kind == "big":
            return "9" * size
        if kind == "deep":
            return "[" * size + "]" * size
        return '{"arrayValue": {"values": [' * size + '{"intValue": "1"}' + "]}}" * size

    return _HOLE.sub(fill, text)


def _encodable(parsed: ParsedSpans) -> None:
    """Every string that comes out can be written as UTF-8."""
    for problem in parsed.problems:
        problem.encode("utf-8")
    for span in parsed.spans:
        repr(span).encode("utf-8")  # every string in it, keys and nested values too
        span.name.encode("utf-8")
        for key, value in span.attributes.items():
            key.encode("utf-8")
            if isinstance(value, str):
                value.encode("utf-8")


_VALID_DRAWN_ID = json.dumps(
    {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [{
        "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "0af7651916cd43dd",
        "name": "", "startTimeUnixNano": "1000",
    }]}]}]}
)  # fmt: skip
"""A line whose hostile span id is the trace id's first half: a valid span (CI drew it)."""


@settings(max_examples=300, deadline=None)
@given(st.lists(_requests(), min_size=1, max_size=3))
@example([_VALID_DRAWN_ID])
def test_a_file_of_hostile_lines_reads_into_spans_and_problems_and_never_raises(
    lines: list[str],
) -> None:
    parsed = parse_otlp_json("\n".join(lines) + "\n", "f.jsonl")
    assert all(re.match(r"f\.jsonl:[1-3]: ", problem) for problem in parsed.problems)
    assert {span.span_id for span in parsed.spans} <= {0xB7AD6B7169203331} | _drawn_ids(lines)
    _encodable(parsed)


def _drawn_ids(lines: list[str]) -> set[int]:
    """Span ids a hostile draw put in a line that are valid ones after all (Hypothesis
    draws the test's own constants too: the trace id's first half is a span id)."""
    found = set()
    for line in lines:
        try:
            (resource,) = json.loads(line)["resourceSpans"]
        except (ValueError, RecursionError):
            continue
        span_id = resource["scopeSpans"][0]["spans"][0]["spanId"]
        if isinstance(span_id, str) and re.fullmatch(r"[0-9a-fA-F]{16}", span_id):
            found.add(int(span_id, 16))
    return found


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        _requests().map(lambda text: text.encode("utf-8", "surrogatepass")),
        st.binary(max_size=64),
        _hostile.map(lambda value: _render(json.dumps(value)).encode("utf-8", "surrogatepass")),
    )
)
def test_a_hostile_body_gives_spans_or_an_invalid_request_error_and_nothing_else(
    body: bytes,
) -> None:
    try:
        parsed = parse_otlp_json_body(body, "request")
    except InvalidRequestError as exc:
        assert str(exc).startswith("request: ")
        str(exc).encode("utf-8")
    else:
        _encodable(parsed)
