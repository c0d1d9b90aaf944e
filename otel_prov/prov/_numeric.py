"""Numbers in a bundle's canonical form: hashed by value, as every store can give them back.

A bundle hashes the session's triples as text, and the text must come back from the
store unchanged.  Oxigraph keeps a literal's lexical form; Virtuoso keeps only a value,
and changes even that.  Measured on Virtuoso 07.20.3229 (``make servers``):

* an ``xsd:double`` is kept as a binary double; CONSTRUCT in Turtle writes it bare with
  20 significant digits (``0.83333333333333337034``, ``4.0``, ``1.0000000000000000525e+300``),
  which Turtle reads as ``xsd:decimal`` unless there is an exponent.  N-Triples, RDF/XML
  and SELECT (JSON, XML, CSV) answers print it with 6 significant digits (``1.23457e+08``),
  ``STR()`` with 16: only Turtle gives the value back;
* an ``xsd:decimal`` is rounded to 15 fractional digits, half away from zero, and one
  with an integral value becomes an ``xsd:integer`` (``"0"^^xsd:decimal`` reads ``0``);
* integers come back exactly.

So the canonical form ``otel-prov-nt-sorted-2`` writes every ``xsd:integer``,
``xsd:decimal``, ``xsd:double`` (and derived integer) literal by its value, whatever its
datatype: the value (a double's exact binary value) rounded to 20 significant digits,
half to even, as Virtuoso prints it; then to 15 fractional digits, half away from zero,
as Virtuoso stores decimals; written as an ``xsd:integer`` when integral, else as an
``xsd:decimal`` with no exponent and no trailing zeros.  The special doubles are written
``NaN``, ``INF``, ``-INF`` (typed ``xsd:double``).  A canonical integer, as the mapper
writes it, is unchanged, so only sessions with doubles or decimals hash differently from
``otel-prov-nt-sorted-1``.  What it gives up: two numbers equal to 15 decimal places
(or to 20 significant digits) hash alike, and so do ``2``, ``2.0`` and ``"2"^^xsd:double``.
``xsd:float`` is left as written (the mapper never writes it, and Virtuoso widens it).
"""

from __future__ import annotations

import functools
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Context, Decimal, InvalidOperation

from otel_prov.prov._rdf import XSD

__all__ = ["NUMERIC_SUFFIXES", "canonical_number"]

_INTEGERS = (
    "integer",
    "int",
    "long",
    "short",
    "byte",
    "nonNegativeInteger",
    "positiveInteger",
    "nonPositiveInteger",
    "negativeInteger",
    "unsignedLong",
    "unsignedInt",
    "unsignedShort",
    "unsignedByte",
)
NUMERIC_SUFFIXES = tuple(f'"^^<{XSD}{name}>' for name in (*_INTEGERS, "decimal", "double"))
"""How a numeric literal term ends: ``term.endswith(NUMERIC_SUFFIXES)`` finds them fast."""

_DOUBLE = f'"^^<{XSD}double>'
_SIGNIFICANT = Context(prec=20, rounding=ROUND_HALF_EVEN)
_FRACTION = Decimal("1e-15")
_WIDE = Context(prec=64, rounding=ROUND_HALF_UP)
_SPECIAL = {"nan": "NaN", "inf": "INF", "infinity": "INF", "-inf": "-INF", "-infinity": "-INF"}


@functools.lru_cache(maxsize=4096)
def canonical_number(term: str) -> str:
    """The canonical term of a numeric literal term (see the module documentation).
    Memoised: sessions repeat their token counts and costs (bench_caches, 1.06x without).

    A term whose lexical form is not a number is returned unchanged, so that a change
    to it still shows.
    """
    cut = term.rindex('"^^<')
    lexical, is_double = term[1:cut], term.endswith(_DOUBLE)
    special = _SPECIAL.get(lexical.strip().lower()) if is_double else None
    if special is not None:
        return f'"{special}{_DOUBLE}'
    try:
        value = Decimal(float(lexical)) if is_double else Decimal(lexical.strip())
    except (ValueError, InvalidOperation):
        return term
    if not value.is_finite():
        return term
    value = _SIGNIFICANT.plus(value)
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -15:
        value = value.quantize(_FRACTION, context=_WIDE)
    if value == value.to_integral_value():
        return f'"{int(value)}"^^<{XSD}integer>'
    text = format(value.normalize(_WIDE), "f")
    return f'"{text}"^^<{XSD}decimal>'
