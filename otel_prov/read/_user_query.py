"""A query someone typed (``otel-prov query``, the SPARQL page of ``otel-prov serve``),
checked before it is sent.

Both read; they must never write.  SPARQLWrapper picks query or update from the text
by itself, so a ``DROP ALL`` given to ``--endpoint`` would be sent as an update to a store
that grants them.  :func:`query_form` reads the prologue (``BASE``, ``PREFIX``, comments)
as the SPARQL grammar has it and returns the keyword that follows, and
:func:`run_user_query` runs only SELECT, ASK, CONSTRUCT and DESCRIBE.  The project's
prefixes are predeclared, as Oxigraph and most stores do, so a query pasted without its
PREFIX lines still runs; a prefix that is neither predeclared nor declared is named, with
where the text uses it, when the store refuses the query, and the store's positions count
the lines of the text as written, not the predeclarations put before it.

Nor may a query make the store fetch from elsewhere: ``SERVICE <url>`` has the store
send requests to any host it can reach (the web view's store is on the user's machine
or network), so it runs only for an endpoint allowed by name
(:func:`refuse_services`).  That is read on the query as rdflib's SPARQL parser parses
it, prefixes and BASE resolved, wherever the pattern sits.

A tenant's reader runs every query on its tenant's graph alone
(:mod:`otel_prov.read._confinement`), and a ``FROM`` or ``FROM NAMED`` naming any other
graph is refused before it is sent (:func:`refuse_other_graphs`): Virtuoso (7.2) reads
the graphs a query's ``FROM`` names in place of the dataset the request gives, which
Oxigraph and the embedded store read as the SPARQL protocol says.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterator

from pyparsing import ParseResults
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.parser import parseQuery
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.term import Variable

from otel_prov.exporters._reading import Dataset, QueryBackend, QueryResult
from otel_prov.prov._rdf import PREFIXES
from otel_prov.read._confinement import Confinement

__all__ = [
    "QUERY_FORMS",
    "GraphRefusedError",
    "ServiceRefusedError",
    "UpdateRefusedError",
    "check_user_query",
    "dataset_graphs",
    "line_and_column",
    "prologue_end",
    "query_form",
    "refuse_other_graphs",
    "refuse_services",
    "refuse_updates",
    "run_user_query",
    "service_endpoints",
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


def prologue_end(text: str) -> int:
    """Where the query after its prologue (``BASE``, ``PREFIX``, comments) starts in
    ``text``: what wraps a query in another keeps the prologue before it."""
    return _prologue(text)[1]


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


def _undeclared(text: str) -> dict[str, int]:
    """Prefixes (``p:``) the query's body uses and its prologue does not declare, in order,
    each with the offset in ``text`` of its first use."""
    declared, start = _prologue(text)
    # Blanked to the same length, so that offsets in the body are offsets in the text.
    body = _NOT_A_NAME.sub(lambda skipped: " " * len(skipped.group()), text[start:])
    used: dict[str, int] = {}
    for match in _USED_PREFIX.finditer(body):
        used.setdefault(match.group(1), start + match.start(1))
    return {prefix: at for prefix, at in used.items() if prefix not in declared}


def line_and_column(text: str, offset: int) -> tuple[int, int]:
    """Where ``offset`` is in ``text``, as editors and stores count: line and column from 1,
    lines ended by ``\n``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


class UpdateRefusedError(ValueError):
    """The text is not a SELECT, ASK, CONSTRUCT or DESCRIBE query; it was not sent."""


class ServiceRefusedError(ValueError):
    """The query calls SERVICE on an endpoint that was not allowed; it was not sent."""


class GraphRefusedError(ValueError):
    """A tenant's query names a graph (``FROM``, ``FROM NAMED``) outside its tenant's; it
    was not sent."""


_MAY_CALL_SERVICE = re.compile(r"service|\\[uU]", re.I)
"""Text without these has no SERVICE for any store to read: the keyword needs its letters,
unless written with ``\\u`` escapes, which some stores decode before reading keywords."""
_MAY_NAME_GRAPHS = re.compile(r"from|\\[uU]", re.I)
"""Likewise, text without these has no ``FROM`` or ``FROM NAMED``."""


def refuse_updates(text: str) -> None:
    """Raises :class:`UpdateRefusedError` unless ``text`` is a SELECT, ASK, CONSTRUCT or
    DESCRIBE query: a check of its first keyword, at once."""
    if query_form(text) is None:
        raise UpdateRefusedError(
            "only SELECT, ASK, CONSTRUCT or DESCRIBE queries run, and this is none of them "
            "(an update is never sent)"
        )


def service_endpoints(text: str) -> list[str]:
    """The endpoint of each SERVICE the query calls, as the SPARQL grammar reads it: an
    IRI (``<...>``, prefixes and BASE resolved) or a variable (``?name``).

    Read on rdflib's parse of the query, so comments, strings, case, nesting (subqueries,
    EXISTS, OPTIONAL, UNION) and SILENT are the grammar's business, not a pattern's.  Text
    that cannot hold the keyword is not parsed.  Raises ``ValueError`` ("invalid SPARQL")
    when rdflib cannot read the query: what cannot be read is not sent.  rdflib's parser
    has limits a store may not: it stops at about 30 nested brackets or 100 triple
    patterns in one block, and a ``#`` (in an IRI, say) before a SERVICE on its line
    fails it.  Each SERVICE costs a pass over the whole text, so a query with many is
    slow to read: the web view reads it in the process its time limit stops.
    """
    if not _MAY_CALL_SERVICE.search(text):
        return []
    return [
        f"?{term}" if isinstance(term, Variable) else f"<{term}>"
        for term in _service_terms(_algebra(text))
    ]


def dataset_graphs(text: str) -> list[tuple[str, str]]:
    """Each ``FROM`` and ``FROM NAMED`` of the query: the clause (``FROM``, ``FROM
    NAMED``) and the IRI it names as rdflib's parser reads it (prefixes resolved; under
    BASE, a relative IRI stays relative).  Raises ``ValueError`` ("invalid SPARQL") when
    rdflib cannot read the query."""
    if not _MAY_NAME_GRAPHS.search(text):
        return []
    named = []
    for clause in dict.get(_algebra(text), "datasetClause") or []:
        default = dict.get(clause, "default")
        iri = default if default is not None else dict.get(clause, "named")
        named.append(("FROM" if default is not None else "FROM NAMED", str(iri)))
    return named


@functools.lru_cache(maxsize=4)
def _algebra(text: str) -> CompValue:
    """rdflib's algebra of the query (read once for the checks that need it), or
    ``ValueError`` naming why it cannot be read."""
    try:
        algebra: CompValue = translateQuery(parseQuery(text), initNs=PREFIXES).algebra
    except RecursionError as exc:
        raise _naming_prefixes(text, "invalid SPARQL: it nests too deeply to be read") from exc
    except Exception as exc:  # a ParseException; a bare Exception for an unknown prefix
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise _naming_prefixes(text, f"invalid SPARQL: {reason}") from exc
    return algebra


def _service_terms(algebra: CompValue) -> Iterator[object]:
    """The endpoint term of every SERVICE pattern in the algebra, however deep (a loop,
    not recursion: the depth is the query's)."""
    stack: list[object] = [algebra]
    while stack:
        node = stack.pop()
        if isinstance(node, CompValue):
            if node.name == "ServiceGraphPattern":
                yield dict.get(node, "term")
            stack.extend(dict.values(node))
        elif isinstance(node, (list, tuple, ParseResults)):
            stack.extend(node)


def refuse_services(text: str, allowed: Collection[str] = ()) -> None:
    """Raises :class:`ServiceRefusedError` when the query calls SERVICE on an endpoint
    that is not one of the IRIs ``allowed``; a variable endpoint is never allowed, since
    it could name any host.  Raises ``ValueError`` for a query that cannot be read."""
    for endpoint in service_endpoints(text):
        if endpoint.startswith("?"):
            raise ServiceRefusedError(
                f"SERVICE {endpoint} is refused: its endpoint is a variable, which could "
                "name any host (a query may not make the store fetch from elsewhere)"
            )
        if endpoint[1:-1] not in allowed:
            raise ServiceRefusedError(
                f"SERVICE {endpoint} is refused: a query may not make the store fetch from "
                f"another endpoint unless it is allowed (--allow-service {endpoint[1:-1]})"
            )


def refuse_other_graphs(text: str, dataset: Dataset) -> None:
    """Raises :class:`GraphRefusedError` when ``dataset`` is confined (it names its named
    graphs) and the query's ``FROM`` or ``FROM NAMED`` names a graph outside it; raises
    ``ValueError`` for a query that cannot be read."""
    if dataset.named_graphs is None:
        return
    allowed = {*dataset.defaults, *dataset.named_graphs}
    for clause, named in dataset_graphs(text):
        if named not in allowed:
            raise GraphRefusedError(
                f"{clause} <{named}> is refused: this reader's queries read "
                f"{' and '.join(f'<{graph}>' for graph in sorted(allowed))} only"
            )


def check_user_query(
    text: str, *, allow_service: Collection[str] = (), dataset: Dataset | None = None
) -> None:
    """Raises :class:`UpdateRefusedError` unless ``text`` is a query,
    :class:`ServiceRefusedError` when it calls SERVICE on an endpoint not in
    ``allow_service``, and :class:`GraphRefusedError` when it names a graph outside a
    confined ``dataset``: every check :func:`run_user_query` makes, none needing a store."""
    refuse_updates(text)
    refuse_services(text, allow_service)
    if dataset is not None:
        refuse_other_graphs(text, dataset)


def run_user_query(
    backend: QueryBackend,
    text: str,
    *,
    confinement: Confinement,
    allow_service: Collection[str] = (),
) -> QueryResult:
    """Run ``text`` on ``backend`` for the reader of ``confinement``, with the project's
    prefixes predeclared: its graph is the query's default graph and, for a tenant's
    reader, its only named graph too, whatever ``FROM``, ``FROM NAMED`` or ``GRAPH`` say
    (:mod:`otel_prov.read._confinement`).

    Raises :class:`UpdateRefusedError` for anything but a query,
    :class:`ServiceRefusedError` for a SERVICE on an endpoint not in ``allow_service``
    and :class:`GraphRefusedError` for a tenant's ``FROM`` naming another graph (nothing
    is sent), and ``ValueError`` for a query that cannot be parsed, naming undeclared
    prefixes.
    """
    check_user_query(text, allow_service=allow_service, dataset=confinement.dataset)
    sent = with_prefixes(text)
    try:
        return backend.query(sent, dataset=confinement.dataset)
    except ValueError as exc:
        added = sent.count("\n") - text.count("\n")
        raise _naming_prefixes(text, _as_written(str(exc).splitlines()[0], added)) from exc


_STORE_LINE = re.compile(r"(?<=\bat )\d+(?=:\d)|(?<=\bline )\d+")
"""A line number in a store's message: Oxigraph's ``error at 2:37``, Jena's ``at line 2,
column 37``."""


def _as_written(message: str, added: int) -> str:
    """A store's ``message`` about the text sent, its line numbers moved back by the
    ``added`` lines of predeclared prefixes, so that they count the text as typed."""
    if not added:
        return message
    return _STORE_LINE.sub(lambda line: str(max(1, int(line.group()) - added)), message)


def _naming_prefixes(text: str, message: str) -> ValueError:
    """An unknown prefix is what a query using one does wrong: then the error names each,
    where the text first uses it, instead of the parser's ``message`` (whose list of
    what it expected mentions it only as ``Prefix not found``); else ``message``."""
    unknown = [
        (prefix, at) for prefix, at in _undeclared(text).items() if prefix[:-1] not in PREFIXES
    ]
    if not unknown:
        return ValueError(message)
    named = ", ".join(
        "'{}' at {}:{}".format(prefix, *line_and_column(text, at)) for prefix, at in unknown
    )
    each = "it" if len(unknown) == 1 else "each"
    return ValueError(
        f"invalid SPARQL: unknown prefix {named} (declare {each}: PREFIX {unknown[0][0]} "
        f"<IRI>; predeclared: {', '.join(f'{p}:' for p in PREFIXES)})"
    )
