"""A query someone typed (``otel-prov query``, the SPARQL page of ``otel-prov serve``),
checked before it is sent.

Both read; they must never write.  SPARQLWrapper picks query or update from the text
by itself, so a ``DROP ALL`` given to ``--endpoint`` would be sent as an update to a store
that grants them.  :func:`query_form` reads the prologue (``BASE``, ``PREFIX``, comments)
as the SPARQL grammar has it and returns the keyword that follows, and
:func:`run_user_query` runs only SELECT, ASK, CONSTRUCT and DESCRIBE.  The project's
prefixes are predeclared, as Oxigraph and most stores do, so a query pasted without its
PREFIX lines still runs; a prefix that is neither predeclared nor declared is named when
the store refuses the query.
"""

from __future__ import annotations

import re

from otel_prov.prov._rdf import PREFIXES
from otel_prov.read._backend import QueryBackend, QueryResult

__all__ = [
    "QUERY_FORMS",
    "UpdateRefusedError",
    "check_user_query",
    "query_form",
    "run_user_query",
    "undeclared_prefixes",
    "with_prefixes",
]

QUERY_FORMS = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")

_SPACE_OR_COMMENT = re.compile(r"(?:\s+|#[^\n\r]*)*")
_IRIREF = r"<[^<>\"{}|^`\\\x00-\x20]*>"
_PNAME_NS = r"(?:[^\W\d_][\w.-]*)?:"
_DECLARATION = re.compile(
    rf"(?:BASE\s*(?P<base>{_IRIREF})|PREFIX\s+(?P<prefix>{_PNAME_NS})\s*{_IRIREF})", re.I
)
_KEYWORD = re.compile(r"[A-Za-z]+")
# What the body holds besides prefixed names, skipped when looking for them.
_NOT_A_NAME = re.compile(
    rf"\"\"\"(?:[^\\]|\\.)*?\"\"\"|'''(?:[^\\]|\\.)*?'''|\"(?:[^\"\\\n]|\\.)*\""
    rf"|'(?:[^'\\\n]|\\.)*'|{_IRIREF}|#[^\n\r]*|[?$]\w+",
    re.S,
)
_USED_PREFIX = re.compile(rf"(?<![\w.:-])({_PNAME_NS})")


def _prologue(text: str) -> tuple[list[str], int]:
    """The prefixes the prologue declares (``p:``), and where the query after it starts."""
    declared: list[str] = []
    position = 0
    while True:
        position = _SPACE_OR_COMMENT.match(text, position).end()  # type: ignore[union-attr]
        declaration = _DECLARATION.match(text, position)
        if declaration is None:
            return declared, position
        if declaration.group("prefix") is not None:
            declared.append(declaration.group("prefix"))
        position = declaration.end()


def query_form(text: str) -> str | None:
    """``SELECT``, ``ASK``, ``CONSTRUCT`` or ``DESCRIBE`` when ``text`` is a query of that form
    after its prologue; ``None`` for anything else (an update, say)."""
    _, start = _prologue(text)
    keyword = _KEYWORD.match(text, start)
    form = keyword.group().upper() if keyword else ""
    return form if form in QUERY_FORMS else None


def with_prefixes(text: str) -> str:
    """``text`` with a declaration of each of the project's prefixes it uses undeclared.

    They go on one line before it, and only when used, so that the positions in a store's
    error message match the text as written whenever it needs none of them.
    """
    needed = [p for p in _undeclared(text) if p[:-1] in PREFIXES]
    if not needed:
        return text
    return " ".join(f"PREFIX {p} <{PREFIXES[p[:-1]]}>" for p in needed) + "\n" + text


def undeclared_prefixes(text: str) -> list[str]:
    """Prefixes (``p:``) the query's body uses but neither it nor the project declares."""
    return [prefix for prefix in _undeclared(text) if prefix[:-1] not in PREFIXES]


def _undeclared(text: str) -> list[str]:
    """Prefixes (``p:``) the query's body uses and its prologue does not declare, in order."""
    declared, start = _prologue(text)
    body = _NOT_A_NAME.sub(" ", text[start:])
    used = dict.fromkeys(match.group(1) for match in _USED_PREFIX.finditer(body))
    return [prefix for prefix in used if prefix not in declared]


class UpdateRefusedError(ValueError):
    """The text is not a SELECT, ASK, CONSTRUCT or DESCRIBE query; it was not sent."""


def check_user_query(text: str) -> None:
    """Raises :class:`UpdateRefusedError` unless ``text`` is a query :func:`run_user_query`
    runs: a check that needs no store."""
    if query_form(text) is None:
        raise UpdateRefusedError(
            "only SELECT, ASK, CONSTRUCT or DESCRIBE queries run, and this is none of them "
            "(an update is never sent)"
        )


def run_user_query(backend: QueryBackend, text: str, *, graph: str) -> QueryResult:
    """Run ``text`` on ``backend`` with the provenance graph ``graph`` (an IRI) as its
    default graph and the project's prefixes predeclared.

    Raises :class:`UpdateRefusedError` for anything but a query (nothing is sent), and
    ``ValueError`` for a query the store cannot parse, naming undeclared prefixes.
    """
    check_user_query(text)
    try:
        return backend.query(with_prefixes(text), default_graph=graph)
    except ValueError as exc:
        unknown = undeclared_prefixes(text)
        named = f"; unknown prefix {', '.join(unknown)}" if unknown else ""
        raise ValueError(str(exc).splitlines()[0] + named) from exc
