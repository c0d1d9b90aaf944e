"""RDF terms as N-Triples text: the one place where literals are escaped and IRIs checked.

The mapper emits every term already in N-Triples syntax (a plain ``str``), because that
text is valid, unchanged, in N-Quads files, in pyoxigraph's bulk loader and inside a
SPARQL 1.1 ``INSERT DATA`` block.  Building strings is several times faster than building
rdflib or pyoxigraph term objects, and a triple is just a tuple of three of them.

Escaping follows the N-Triples ``ECHAR``/``UCHAR`` rules: backslash, double quote, line
feed and carriage return are escaped, every other control character becomes ``\\uXXXX``.
Lone surrogates (which cannot be encoded as UTF-8 and which stores reject) become
U+FFFD.  Everything else, emoji and U+2028 included, is written as itself.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable
from datetime import datetime, timezone
from decimal import Decimal

from pyoxigraph import NamedNode

__all__ = [
    "OPROV",
    "PPLAN",
    "PREFIXES",
    "PROV",
    "RDFS",
    "RDF_TYPE",
    "SPARQL_PREFIXES",
    "XSD",
    "InvalidIRIError",
    "Triple",
    "boolean",
    "by_predicate",
    "canonical_datetime",
    "datetime_from_ns",
    "datetime_literal",
    "decimal",
    "double",
    "instant_order",
    "integer",
    "iri",
    "is_true",
    "literal",
    "milliseconds_between",
    "named",
    "nquad_lines",
    "parse_literal",
    "to_nquads",
    "to_ntriples",
    "values",
]

PROV = "http://www.w3.org/ns/prov#"
OPROV = "https://w3id.org/otel-prov/ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
PPLAN = "http://purl.org/net/p-plan#"

#: Prefixes bound in every serialization we write (PROV-MODEL: bind one per namespace).
PREFIXES: dict[str, str] = {
    "prov": PROV,
    "oprov": OPROV,
    "rdf": RDF,
    "rdfs": RDFS,
    "xsd": XSD,
    "p-plan": PPLAN,
}

SPARQL_PREFIXES = "".join(f"PREFIX {name}: <{ns}>\n" for name, ns in PREFIXES.items())
"""The same prefixes as a SPARQL prologue, for every query we write."""

Triple = tuple[str, str, str]
"""Subject, predicate and object, each in N-Triples syntax."""


def by_predicate(
    triples: Iterable[Triple], only: Collection[str] | None = None
) -> dict[str, list[tuple[str, str]]]:
    """Predicate -> its (subject, object) pairs, in one pass: the checks of a run then
    read only the predicates they need.  ``only``: just these predicates, each a key
    even when no triple has it."""
    index: dict[str, list[tuple[str, str]]] = {} if only is None else {p: [] for p in only}
    for s, p, o in triples:
        found = index.get(p)
        if found is not None:
            found.append((s, o))
        elif only is None:
            index[p] = [(s, o)]
    return index


RDF_TYPE = f"<{RDF}type>"

_XSD_INTEGER = f"^^<{XSD}integer>"
_XSD_BOOLEAN = f"^^<{XSD}boolean>"
_XSD_DOUBLE = f"^^<{XSD}double>"
_SPECIAL_DOUBLES = {"nan": "NaN", "inf": "INF", "-inf": "-INF"}
_XSD_DATETIME = f"^^<{XSD}dateTime>"
_XSD_DECIMAL = f"^^<{XSD}decimal>"

# Characters that need escaping in a quoted literal: controls, quote, backslash, DEL,
# and lone surrogates.
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\\x7f\ud800-\udfff]')
_NEEDS_TABLE = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")
"""Characters only the escape table handles (controls and lone surrogates)."""
_ESCAPES: dict[int, str] = {c: f"\\u{c:04X}" for c in (*range(0x20), 0x7F)}
_ESCAPES.update(
    {
        ord("\\"): "\\\\",
        ord('"'): '\\"',
        ord("\n"): "\\n",
        ord("\r"): "\\r",
        ord("\t"): "\\t",
        ord("\b"): "\\b",
        ord("\f"): "\\f",
    }
)
_ESCAPES.update({c: "\ufffd" for c in range(0xD800, 0xE000)})

_CANONICAL_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d*[1-9])?Z")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


class InvalidIRIError(ValueError):
    """An IRI that cannot be written between ``<`` and ``>`` without changing meaning."""


def literal(value: str) -> str:
    """A plain (``xsd:string``) literal, escaped so that it round-trips byte for byte."""
    if _NEEDS_ESCAPE.search(value) is None:
        return f'"{value}"'
    if _NEEDS_TABLE.search(value) is None:
        # Only quotes and backslashes (JSON text, a bundle's manifest): two replaces do
        # what the per-character table does, many times faster.
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f'"{value.translate(_ESCAPES)}"'


def integer(value: int) -> str:
    """An ``xsd:integer`` literal in canonical form."""
    return f'"{int(value)}"{_XSD_INTEGER}'


def boolean(value: bool) -> str:
    """An ``xsd:boolean`` literal in canonical form."""
    return f'"{"true" if value else "false"}"{_XSD_BOOLEAN}'


def is_true(lexical: str | None) -> bool:
    """Whether a stored ``xsd:boolean``'s lexical form (a query answer's value) is true:
    ``true``, or ``1`` as Virtuoso answers."""
    return lexical in ("true", "1")


def _plain(value: Decimal) -> str:
    """``value`` without exponent or trailing zeros, as Oxigraph prints numbers."""
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "0") else text


def decimal(value: Decimal) -> str:
    """An ``xsd:decimal`` literal in the form stores print it (``2.5``, ``2``): a bundle
    hashes the text the store will give back."""
    if not value.is_finite():
        raise ValueError(f"{value} is not a decimal number")
    return f'"{_plain(value)}"{_XSD_DECIMAL}'


def double(value: float) -> str:
    """An ``xsd:double`` literal in the form stores print it (a bundle hashes the text
    the store gives back): the shortest digits that round-trip, with no exponent and no
    trailing ``.0`` (``4``, ``0.25``, ``0.0000001``), and XSD's spelling of the special
    values."""
    text = repr(float(value))
    if text in _SPECIAL_DOUBLES:
        return f'"{_SPECIAL_DOUBLES[text]}"{_XSD_DOUBLE}'
    return f'"{_plain(Decimal(text))}"{_XSD_DOUBLE}'


@functools.lru_cache(maxsize=4096)
def _utc_seconds(seconds: int) -> str:
    # Spans of a session share their seconds: bench_caches, 1.14x the CPU without the memo.
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def datetime_literal(lexical: str) -> str:
    """An ``xsd:dateTime`` literal of ``lexical`` as given (a store's, or a user's)."""
    return f"{literal(lexical)}{_XSD_DATETIME}"


def datetime_from_ns(unix_nanos: int) -> str:
    """An ``xsd:dateTime`` literal in UTC, microsecond precision, canonical lexical form.

    Microseconds because Python's ``datetime`` (and so the ``prov`` package and rdflib)
    holds no more; truncation is monotone, so start <= end survives it.  Trailing zeros of
    the fraction are dropped, as the XSD canonical form wants and as stores print it.
    """
    seconds, nanos = divmod(unix_nanos, 1_000_000_000)
    stamp = _utc_seconds(seconds)
    micros = nanos // 1000
    fraction = f".{micros:06d}".rstrip("0") if micros else ""
    return f'"{stamp}{fraction}Z"{_XSD_DATETIME}'


def canonical_datetime(lexical: str) -> str:
    """A stored ``xsd:dateTime`` as :func:`datetime_from_ns` writes it (UTC, no trailing zeros).

    Stores print the same instant differently (Virtuoso ``.090Z``, others ``+00:00``);
    readers normalise so that every store shows the same text.  Text that is not a
    dateTime comes back unchanged.
    """
    try:
        moment = datetime.fromisoformat(lexical.replace("Z", "+00:00"))
    except ValueError:
        return lexical
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    moment = moment.astimezone(timezone.utc)
    fraction = f".{moment.microsecond:06d}".rstrip("0") if moment.microsecond else ""
    return f"{moment.strftime('%Y-%m-%dT%H:%M:%S')}{fraction}Z"


def instant(lexical: str) -> datetime:
    """A stored ``xsd:dateTime`` as an aware ``datetime`` (UTC when it names no offset);
    raises ``ValueError`` for text that is not one."""
    moment = datetime.fromisoformat(canonical_datetime(lexical).replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def instant_order(lexical: str) -> tuple[str, str]:
    """A stored ``xsd:dateTime`` as a key that sorts as the instants do.

    The text alone misorders: canonical forms drop the fraction's trailing zeros, so
    ``...05Z`` sorts after ``...05.3Z``, and stores print offsets differently.
    """
    if _CANONICAL_UTC.fullmatch(lexical) is None:  # as the mapper writes it: no parsing
        lexical = canonical_datetime(lexical)
    seconds, _, fraction = lexical.removesuffix("Z").partition(".")
    return seconds, fraction.ljust(6, "0")


def milliseconds_between(start: str, end: str) -> float | None:
    """Milliseconds from one stored ``xsd:dateTime`` to another; None if either is no
    dateTime."""
    try:
        first, last = (datetime.fromisoformat(t.replace("Z", "+00:00")) for t in (start, end))
        return (last - first).total_seconds() * 1000
    except (ValueError, TypeError):
        return None


def iri(value: str) -> str:
    """An IRI term; raises :class:`InvalidIRIError` for text that is not an absolute IRI.

    Validation is RFC 3987's, by Oxigraph's parser: what passes here, every store that
    follows the RFC accepts.  Only user-given IRIs come through here; the mapper's own
    are valid by construction (``_iris``).
    """
    if _SCHEME.match(value) is None:
        raise InvalidIRIError(f"not an absolute IRI (no scheme): {value!r}")
    try:
        NamedNode(value)
    except ValueError as exc:
        raise InvalidIRIError(f"{exc} in {value!r}") from exc
    return f"<{value}>"


def values(iris: Iterable[str]) -> str:
    """``iris`` checked and written as terms, for a SPARQL ``VALUES`` block."""
    return " ".join(iri(each) for each in iris)


_UNESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_ESCAPE_SEQUENCE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))", re.DOTALL)


def named(term: str) -> str:
    """How a subject is named to people: an IRI without its brackets, a blank node whole
    (one can only be added to a stored run by hand, never by the mapper)."""
    return term[1:-1] if term.startswith("<") else term


def parse_literal(term: str) -> str:
    """The lexical value of a literal written by this module (used by tests and readers)."""
    end = term.rindex('"')
    body = term[1:end]

    def unescape(match: re.Match[str]) -> str:
        short, long, char = match.groups()
        if short or long:
            return chr(int(short or long, 16))
        return _UNESCAPES[char]

    return _ESCAPE_SEQUENCE.sub(unescape, body)


def to_ntriples(triples: Iterable[Triple]) -> str:
    """N-Triples text, one statement per line."""
    return "".join(f"{s} {p} {o} .\n" for s, p, o in triples)


def nquad_lines(triples: Iterable[Triple], graph: str) -> list[str]:
    """One N-Quads line per triple, all in ``graph`` (an IRI term, or ``""`` for default)."""
    suffix = f" {graph} .\n" if graph else " .\n"
    return [f"{s} {p} {o}{suffix}" for s, p, o in triples]


def to_nquads(triples: Iterable[Triple], graph: str) -> str:
    """N-Quads text with every triple in ``graph`` (an IRI term, or ``""`` for default)."""
    return "".join(nquad_lines(triples, graph))
