"""Escaping and IRIs: any string must come back byte for byte from a real store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import cast

import pyoxigraph
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_prov.prov._iris import activity_iri, agent_iri
from otel_prov.prov._rdf import (
    InvalidIRIError,
    datetime_from_ns,
    instant_order,
    integer,
    iri,
    literal,
    parse_literal,
    to_nquads,
)

HOSTILE = [
    "",
    'say "hi"',
    '"""',
    "back\\slash",
    "\\u0041 is not A",
    "\n\r\t\f\b",
    "emoji 🧭 and U+2028 \u2028 and U+2029 \u2029",
    "\x00\x01\x1f\x7f",
    '"} } ; DROP ALL ; INSERT DATA { GRAPH <urn:pwn> { <urn:a> <urn:b> "c" } }',
    "'single' quotes",
    "é" * 3,
]

# Every code point except lone surrogates (which no UTF-8 store can hold; see the test below).
any_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=200)


def _roundtrip_sparql(values: list[str]) -> list[str]:
    """Insert with SPARQL INSERT DATA (the SPARQL parser) and read back with SELECT."""
    store = pyoxigraph.Store()
    body = " ".join(f"<urn:s:{i}> <urn:p> {literal(value)} ." for i, value in enumerate(values))
    store.update(f"INSERT DATA {{ GRAPH <urn:g> {{ {body} }} }}")
    rows = store.query("SELECT ?s ?o WHERE { GRAPH <urn:g> { ?s <urn:p> ?o } }")
    found = {row["s"].value: row["o"].value for row in rows}
    return [found[f"urn:s:{i}"] for i in range(len(values))]


def _roundtrip_nquads(values: list[str]) -> list[str]:
    """Load as N-Quads (the embedded exporter's path) and read back."""
    store = pyoxigraph.Store()
    triples = [(f"<urn:s:{i}>", "<urn:p>", literal(v)) for i, v in enumerate(values)]
    store.bulk_load(to_nquads(triples, "<urn:g>").encode(), pyoxigraph.RdfFormat.N_QUADS)
    found = {q.subject.value: q.object.value for q in store.quads_for_pattern(None, None, None)}
    return [found[f"urn:s:{i}"] for i in range(len(values))]


def test_hostile_strings_round_trip_through_sparql_and_nquads() -> None:
    assert _roundtrip_sparql(HOSTILE) == HOSTILE
    assert _roundtrip_nquads(HOSTILE) == HOSTILE


def test_injection_attempt_is_inert() -> None:
    store = pyoxigraph.Store()
    store.update('INSERT DATA { GRAPH <urn:keep> { <urn:x> <urn:y> "z" } }')
    attack = HOSTILE[8]
    store.update(f"INSERT DATA {{ GRAPH <urn:g> {{ <urn:s> <urn:p> {literal(attack)} }} }}")
    assert (
        len(list(store.quads_for_pattern(None, None, None, pyoxigraph.NamedNode("urn:keep")))) == 1
    )
    assert not store.contains_named_graph(pyoxigraph.NamedNode("urn:pwn"))


@settings(max_examples=300, deadline=None)
@given(st.lists(any_text, min_size=1, max_size=5))
def test_any_string_round_trips_byte_exact(values: list[str]) -> None:
    assert _roundtrip_sparql(values) == values
    assert _roundtrip_nquads(values) == values
    assert [parse_literal(literal(v)) for v in values] == values


@given(st.text(alphabet=st.characters(categories=("Cs",)), min_size=1, max_size=5))
def test_lone_surrogates_become_replacement_characters(value: str) -> None:
    assert _roundtrip_nquads([value]) == ["\ufffd" * len(value)]


@given(st.text(max_size=60))
def test_iri_accepts_only_what_a_store_accepts(value: str) -> None:
    candidate = f"urn:x:{value}"
    try:
        term = iri(candidate)
    except InvalidIRIError as exc:
        assert "IRI" in str(exc)
        return
    store = pyoxigraph.Store()
    store.update(f"INSERT DATA {{ {term} <urn:p> 1 }}")
    (quad,) = store.quads_for_pattern(None, None, None)
    assert quad.subject.value == candidate


@given(st.text(max_size=40))
def test_named_agent_iris_are_valid_and_deterministic(name: str) -> None:
    term = agent_iri(name)
    assert term == agent_iri(name)
    assert iri(term[1:-1]) == term
    pyoxigraph.NamedNode(term[1:-1])  # a real IRI parser agrees


@given(st.integers(0, 2**128 - 1), st.integers(0, 2**64 - 1))
def test_activity_iris_are_injective_and_valid(trace_id: int, span_id: int) -> None:
    term = activity_iri(trace_id, span_id)
    assert term == f"<urn:otel-prov:{trace_id:032x}:{span_id:016x}>"
    pyoxigraph.NamedNode(term[1:-1])


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("no-scheme", "no scheme"),
        ("urn:a b", "' '"),
        ("urn:a>b", "'>'"),
        ("urn:a\x7fb", "code point"),
    ],
)
def test_invalid_iris_are_named_in_the_error(value: str, message: str) -> None:
    with pytest.raises(InvalidIRIError, match=message) as caught:
        iri(value)
    assert repr(value) in str(caught.value)


@given(st.integers(0, 4_102_444_800_000_000_000))
def test_datetimes_are_canonical_utc_and_monotone(ns: int) -> None:
    term = datetime_from_ns(ns)
    lexical = parse_literal(term)
    parsed = datetime.fromisoformat(lexical.replace("Z", "+00:00"))
    assert parsed.tzinfo == timezone.utc
    assert int(parsed.timestamp()) == ns // 1_000_000_000
    assert parsed.microsecond == (ns // 1000) % 1_000_000
    # a store parses the literal as a dateTime and prints the same lexical form back
    store = pyoxigraph.Store()
    store.update(f"INSERT DATA {{ <urn:s> <urn:p> {term} }}")
    (row,) = cast(
        pyoxigraph.QuerySolutions, store.query("SELECT (STR(?o) AS ?t) ?o WHERE { ?s ?p ?o }")
    )
    assert cast(pyoxigraph.Literal, row["t"]).value == lexical
    assert cast(pyoxigraph.Literal, row["o"]).datatype.value.endswith("#dateTime")
    later = parse_literal(datetime_from_ns(ns + 999))
    assert datetime.fromisoformat(later.replace("Z", "+00:00")) >= parsed


def test_integer_literal_is_canonical() -> None:
    assert integer(7) == '"7"^^<http://www.w3.org/2001/XMLSchema#integer>'


_INSTANTS = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(9999, 1, 1), timezones=st.just(timezone.utc)
)


@given(first=_INSTANTS, second=_INSTANTS, hours=st.integers(-14, 14))
def test_instants_order_as_they_happened_in_any_lexical_form(
    first: datetime, second: datetime, hours: int
) -> None:
    """The mapper's form takes the unparsed path; any other form of the same instant
    (an offset, trailing zeros) the parsed one, and both give the same key."""
    ours = [parse_literal(datetime_from_ns(_ns(moment))) for moment in (first, second)]
    offset = timezone(timedelta(hours=hours))
    other = [
        moment.astimezone(offset).isoformat(timespec="microseconds") for moment in (first, second)
    ]
    keys = [instant_order(text) for text in ours]
    assert keys == [instant_order(text) for text in other]
    assert (keys[0] < keys[1]) == (first < second)


def _ns(moment: datetime) -> int:
    return (moment - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1) * 1000
