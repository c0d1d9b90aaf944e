"""Numbers hash by value: what Virtuoso gives back for a number hashes as what was sealed.

``_virtuoso_*`` copy what Virtuoso 07.20 was measured to do (``otel_prov/prov/_numeric.py``
says how): a double read back from a CONSTRUCT in Turtle, a decimal rounded when stored.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

import pyoxigraph
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from otel_prov.prov._bundle import canonical_text, content_hash
from otel_prov.prov._numeric import canonical_number
from otel_prov.prov._rdf import XSD, decimal, double, integer, literal


def _turtle_term(text: str) -> str:
    """A bare Turtle number as pyoxigraph reads it, in N-Triples syntax."""
    (triple,) = pyoxigraph.parse(f"<urn:s> <urn:p> {text} .", pyoxigraph.RdfFormat.TURTLE)
    value = triple.object
    assert isinstance(value, pyoxigraph.Literal)
    return f'"{value.value}"^^<{value.datatype.value}>'


def _virtuoso_double(value: float) -> str:
    """A double as Virtuoso's Turtle writes it (``%.20g``, ``.0`` after an integral one)."""
    if math.isnan(value):
        return f'"NAN"^^<{XSD}double>'
    if math.isinf(value):
        return f'"{"-" if value < 0 else ""}INF"^^<{XSD}double>'
    text = f"{value:.20g}"
    if not any(c in text for c in ".e"):
        text += ".0"
    return _turtle_term(text)


def _virtuoso_decimal(value: Decimal) -> str:
    """A decimal as Virtuoso stores it and Turtle reads it back: 15 fractional digits at
    most (half away from zero), an integral one as an integer."""
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -15:
        value = value.quantize(Decimal("1e-15"), rounding=ROUND_HALF_UP)
    text = format(value.normalize(), "f") if value else "0"
    return _turtle_term(text)


@given(st.floats(allow_nan=True, allow_infinity=True))
@example(0.75)
@example(0.8333333333333334)
@example(0.30000000000000004)
@example(123456789.12345679)
@example(1e300)
@example(5e-324)
@example(-0.0)
@example(4.0)
def test_a_double_read_back_from_virtuoso_hashes_as_sealed(value: float) -> None:
    assert canonical_number(_virtuoso_double(value)) == canonical_number(double(value))


@given(st.decimals(allow_nan=False, allow_infinity=False, places=None).filter(
    lambda d: abs(d) < Decimal("1e20") and len(d.as_tuple().digits) <= 20
))  # fmt: skip
@example(Decimal("0"))
@example(Decimal("2"))
@example(Decimal("0.003"))
@example(Decimal("0.30000000000000004"))
@example(Decimal("0.0000000000000025"))
@example(Decimal("0.000012345678901234567"))
@example(Decimal("1234567890.1234567890123"))
def test_a_decimal_stored_in_virtuoso_hashes_as_sealed(value: Decimal) -> None:
    assert canonical_number(_virtuoso_decimal(value)) == canonical_number(decimal(value))


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_a_canonical_integer_is_written_as_it_was(value: int) -> None:
    """Sessions with no double or decimal hash as they did in the first canonical form."""
    assert canonical_number(integer(value)) == integer(value)


_SCORES = st.floats(min_value=-1e5, max_value=1e5)


@given(_SCORES, _SCORES)
@example(0.75, 0.7500000000000101)
def test_doubles_that_differ_by_more_than_1e_14_hash_apart(a: float, b: float) -> None:
    """What the form gives up is below 15 decimal places: a changed score still shows."""
    if abs(a - b) >= 1e-14:
        assert canonical_number(double(a)) != canonical_number(double(b))


@pytest.mark.parametrize(
    ("term", "canonical"),
    [
        (double(0.75), f'"0.75"^^<{XSD}decimal>'),
        (double(4.0), f'"4"^^<{XSD}integer>'),
        (decimal(Decimal("2.50")), f'"2.5"^^<{XSD}decimal>'),
        (f'"NaN"^^<{XSD}double>', f'"NaN"^^<{XSD}double>'),
        (f'"NAN"^^<{XSD}double>', f'"NaN"^^<{XSD}double>'),
        (f'"-INF"^^<{XSD}double>', f'"-INF"^^<{XSD}double>'),
        (f'"not a number"^^<{XSD}double>', f'"not a number"^^<{XSD}double>'),
        (f'"0.1"^^<{XSD}float>', f'"0.1"^^<{XSD}float>'),
    ],
)
def test_canonical_terms(term: str, canonical: str) -> None:
    assert canonical_text([("<urn:s>", "<urn:p>", term)]) == f"<urn:s> <urn:p> {canonical} .\n"


def test_the_first_canonical_form_hashes_the_text_as_written() -> None:
    triples = [("<urn:s>", "<urn:p>", double(0.75)), ("<urn:s>", "<urn:q>", literal("x"))]
    by_text = "".join(sorted(f"{s} {p} {o} .\n" for s, p, o in triples))
    assert canonical_text(triples, "otel-prov-nt-sorted-1") == by_text
    assert content_hash(triples, "otel-prov-nt-sorted-1") != content_hash(triples)
    with pytest.raises(ValueError, match="unknown canonical form"):
        content_hash(triples, "otel-prov-nt-sorted-9")
