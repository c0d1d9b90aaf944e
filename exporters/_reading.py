"""The reader's interface every store backend implements: SPARQL in, plain values out.

A reader answers SPARQL and returns plain Python values, so the session views, the
renderers and the write path's reads of what is stored (``_stored``) do not care which
store they read.  Each backend's reader lives with its writer (``oxigraph/_reader.py``,
``sparql/_reader.py``), found by the backend's name (``_registry``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import pyoxigraph

__all__ = [
    "Dataset",
    "JsonValue",
    "QueryBackend",
    "QueryResult",
    "StoreUnavailableError",
    "json_datatypes",
]


@dataclass(frozen=True)
class Dataset:
    """The graphs (IRIs) one query reads, whatever its ``FROM`` and ``FROM NAMED`` say
    (what a reader may see, :mod:`otel_prov.read._confinement`, is sent as one)."""

    default_graphs: tuple[str, ...] = ()
    """Merged, the query's default graph; none: the merge of :attr:`named_graphs` when
    they are given, else the store's own default graph."""
    named_graphs: tuple[str, ...] | None = None
    """The only named graphs the query sees (``GRAPH ?g`` ranges over them, ``GRAPH
    <other>`` is empty); ``None``: every named graph of the store."""

    @property
    def defaults(self) -> tuple[str, ...]:
        """The graphs merged into the default graph, as both backends send them."""
        return self.default_graphs or (self.named_graphs or ())


class StoreUnavailableError(Exception):
    """The store cannot be read (missing, locked, unreachable); the message says which."""


@dataclass(frozen=True)
class QueryResult:
    """A SPARQL answer: rows for SELECT, a boolean for ASK, triples for CONSTRUCT/DESCRIBE."""

    kind: str
    """``select``, ``ask`` or ``graph``."""
    variables: tuple[str, ...] = ()
    rows: list[dict[str, str | None]] = field(default_factory=list)
    boolean: bool | None = None
    triples: list[pyoxigraph.Triple] = field(default_factory=list)
    datatypes: list[dict[str, str]] = field(default_factory=list)
    """Beside each row, the datatype of each of its values JSON has a type for (numbers,
    booleans): the rows hold text, as every reader compares it, and :meth:`json_rows`
    gives those values their JSON types."""

    def json_rows(self) -> list[dict[str, JsonValue]]:
        """The rows with counts, sums and flags as JSON numbers and booleans (``"n": 2``,
        not ``"2"``); a value JSON has no number for (NaN, an ill-formed literal) stays
        its text."""
        typed: list[dict[str, JsonValue]] = []
        for index, row in enumerate(self.rows):
            types = self.datatypes[index] if index < len(self.datatypes) else {}
            typed.append({name: _json_value(value, types.get(name)) for name, value in row.items()})
        return typed


JsonValue = str | int | float | bool | None
"""A value of a row as JSON gives it."""

_XSD = "http://www.w3.org/2001/XMLSchema#"
_INTEGERS = frozenset(
    f"{_XSD}{name}"
    for name in (
        "integer", "long", "int", "short", "byte", "nonNegativeInteger", "positiveInteger",
        "nonPositiveInteger", "negativeInteger", "unsignedLong", "unsignedInt",
        "unsignedShort", "unsignedByte",
    )
)  # fmt: skip
_NUMBERS = frozenset(f"{_XSD}{name}" for name in ("decimal", "double", "float"))
_BOOLEAN = f"{_XSD}boolean"
_JSON_TYPED = _INTEGERS | _NUMBERS | {_BOOLEAN}


def json_datatypes(datatypes: Iterable[tuple[str, str | None]]) -> dict[str, str]:
    """The names among ``(name, datatype)`` whose value JSON has a type for."""
    return {name: datatype for name, datatype in datatypes if datatype in _JSON_TYPED}


def _json_value(value: str | None, datatype: str | None) -> JsonValue:
    if value is None or datatype is None:
        return value
    try:
        if datatype in _INTEGERS:
            return int(value.strip())
        if datatype == _BOOLEAN:
            return {"true": True, "1": True, "false": False, "0": False}[value.strip()]
        number = float(value)
    except (ValueError, KeyError):
        return value
    return number if math.isfinite(number) else value


class QueryBackend(Protocol):
    """What every reader of a store does: answer SPARQL (the read side's only need of a
    store, :mod:`otel_prov.read`, and of the write path's reads of what is stored,
    :mod:`otel_prov.exporters._stored`)."""

    def query(self, sparql: str, *, dataset: Dataset | None = None) -> QueryResult:
        """Run any SPARQL query; raises ``ValueError`` for a malformed one.

        ``dataset`` (a reader's, see :class:`Dataset`) is the graphs
        the query reads, whatever its ``FROM`` and ``FROM NAMED`` say; without it the
        query reads the store's own dataset (on the embedded store, the union of all
        graphs as the default graph).  It holds for this query only: one backend serves
        readers of different datasets at once.
        """
