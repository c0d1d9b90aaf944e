"""The SPARQL store's reader: a SPARQL 1.1 query endpoint, read with SPARQLWrapper.

It pages through SELECT answers, so a server's row cap (Virtuoso's ``ResultSetMaxRows``,
10,000 by default) never truncates a listing silently; an answer longer than a page is
read in a total order (:func:`total_order`), so no row is read twice or missed.
"""

from __future__ import annotations

import json
import re
import sys
import urllib.error
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

import pyoxigraph
from SPARQLWrapper import BASIC, JSON, POST, TURTLE, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import QueryBadFormed, SPARQLWrapperException

from otel_prov.exporters._reading import Dataset, QueryResult, StoreUnavailableError, json_datatypes
from otel_prov.exporters.sparql._settings import default_query_endpoint, redact_url
from otel_prov.prov._rdf import canonical_datetime

__all__ = ["RemoteBackend", "sort_key", "total_order"]


# A query's prologue (BASE and PREFIX declarations), its form, and a top-level LIMIT.
_PROLOGUE = re.compile(
    r"^(\s*(?:#[^\n]*\n\s*)*(?:(?:BASE|PREFIX)\s[^\n]*\n\s*|#[^\n]*\n\s*)*)", re.I
)
_FORM = re.compile(r"\b(SELECT|ASK|CONSTRUCT|DESCRIBE)\b", re.I)
_TOP_LIMIT = re.compile(r"\b(LIMIT|OFFSET)\s+\d+\s*$", re.I)
_FROM = re.compile(r"\bFROM\s", re.I)
_XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"


class RemoteBackend:
    """Reads a SPARQL 1.1 query endpoint with SPARQLWrapper, paging through SELECT answers."""

    def __init__(
        self, endpoint: str, *, headers: Mapping[str, str] | None = None, page_size: int = 5000
    ) -> None:
        self.endpoint, self._credentials = _split_credentials(endpoint)
        """The URL without ``user:password@``, which is sent as basic auth instead (the
        exporter writes with the same URL so, through ``requests``)."""
        self._headers = dict(headers or {})
        self._page_size = page_size

    def _wrapper(self, sparql: str, return_format: str, dataset: Dataset | None) -> SPARQLWrapper:
        wrapper = SPARQLWrapper(self.endpoint)
        if dataset is not None:  # the protocol's dataset overrides FROM and FROM NAMED
            for graph in dataset.defaults:
                wrapper.addDefaultGraph(graph)
            for graph in dataset.named_graphs or ():
                wrapper.addNamedGraph(graph)
        wrapper.setMethod(POST)
        wrapper.setTimeout(60)
        wrapper.setReturnFormat(return_format)
        if self._credentials is not None:
            wrapper.setHTTPAuth(BASIC)
            wrapper.setCredentials(*self._credentials)
        for name, value in self._headers.items():
            wrapper.addCustomHttpHeader(name, value)
        wrapper.setQuery(sparql)
        return wrapper

    def _run(self, sparql: str, return_format: str, dataset: Dataset | None) -> Any:
        where = self._where()
        try:
            response = self._wrapper(sparql, return_format, dataset).query().response
            return response.read()
        except QueryBadFormed as exc:
            self._not_an_update_endpoint(where)
            raise ValueError(f"invalid SPARQL (the server says: {_first_line(exc)})") from exc
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403):
                raise StoreUnavailableError(
                    f"{where} refused the credentials (HTTP {exc.code})"
                ) from exc
            if 400 <= exc.code < 500:
                self._not_an_update_endpoint(where)
            raise StoreUnavailableError(f"{where} answered HTTP {exc.code}") from exc
        except SPARQLWrapperException as exc:
            raise StoreUnavailableError(f"{where}: {_first_line(exc)}") from exc
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise StoreUnavailableError(f"cannot reach {where}: {reason}") from exc

    def _not_an_update_endpoint(self, where: str) -> None:
        """A query the server refused, sent to what looks like its update endpoint: the
        URL is what is wrong, not the query (Oxigraph answers 400 there)."""
        query_endpoint = default_query_endpoint(self.endpoint)
        if query_endpoint != self.endpoint:
            raise StoreUnavailableError(
                f"{where} refused the query: this looks like an update endpoint; the query "
                f"endpoint is probably {redact_url(query_endpoint)}"
            )

    def _select_page(self, sparql: str, dataset: Dataset | None) -> QueryResult:
        answer = json.loads(self._run(sparql, JSON, dataset))
        variables = tuple(answer["head"].get("vars", []))
        bindings = answer["results"]["bindings"]
        return QueryResult(
            "select",
            variables=variables,
            rows=[
                {name: _plain(binding[name]) if name in binding else None for name in variables}
                for binding in bindings
            ],
            datatypes=[
                json_datatypes((name, term.get("datatype")) for name, term in binding.items())
                for binding in bindings
            ],
        )

    def _page(self, prologue: str, body: str, offset: int, dataset: Dataset | None) -> QueryResult:
        """The rows of ``body`` from ``offset``, at most a page: the query nested, as
        Virtuoso needs to sort past its row cap (ORDER BY and OFFSET at one level fail
        there beyond ``ResultSetMaxRows``)."""
        size = self._page_size
        page = self._select_page(
            f"{prologue}SELECT * WHERE {{ {body}\n}} LIMIT {size} OFFSET {offset}", dataset
        )
        if len(page.rows) > size:  # paging on would never end
            raise StoreUnavailableError(
                f"{self._where()} answered {len(page.rows)} rows to a query for at most {size}"
            )
        return page

    def _select_all(self, prologue: str, body: str, dataset: Dataset | None) -> QueryResult:
        """Every row of a SELECT, each once, a page at a time.

        Each page is a query of its own, and without an order that makes every row's
        place certain, two may order the same rows otherwise (SPARQL 1.1, 15.4-15.5):
        rows read twice, others never (Virtuoso ignores a page's ``OFFSET`` over an
        unordered ``SELECT DISTINCT``, so every page repeats those before it).  So an
        answer longer than a page is read again in :func:`total_order`.  The first page
        is asked for unordered: most answers fit in one, and a server sorts them for
        nothing (sorting 12,000 subjects made a read of them seven times slower on
        Oxigraph).  A query Oxigraph cannot parse, whose order cannot be completed,
        is run as written, in one request.  A server that refuses the order's keys
        (Virtuoso: a key over an aggregate's name beside the query's own ORDER BY) is
        sent the order of the variables themselves, which only Oxigraph cannot always
        sort; Oxigraph accepts every order :func:`total_order` gives, its parser checked.
        """
        first = self._page(prologue, body, 0, dataset)
        if len(first.rows) < self._page_size:
            return first
        ordered = total_order(prologue, body)
        if ordered is None:
            return self._whole(prologue + body, dataset)
        try:
            return self._ordered_pages(prologue, ordered, dataset)
        except ValueError:
            plain = total_order(prologue, body, key=str)
            if plain is None:
                raise
            return self._ordered_pages(prologue, plain, dataset)

    def _ordered_pages(self, prologue: str, ordered: str, dataset: Dataset | None) -> QueryResult:
        """Every row of ``ordered`` (a query of :func:`total_order`), a page at a time."""
        rows: list[dict[str, str | None]] = []
        datatypes: list[dict[str, str]] = []
        while True:
            batch = self._page(prologue, ordered, len(rows), dataset)
            rows.extend(batch.rows)
            datatypes.extend(batch.datatypes)
            if len(batch.rows) < self._page_size:
                return QueryResult(
                    "select", variables=batch.variables, rows=rows, datatypes=datatypes
                )

    def _whole(self, sparql: str, dataset: Dataset | None) -> QueryResult:
        """A SELECT as written, in one request: a server's row cap may cut it short."""
        whole = self._select_page(sparql, dataset)
        if len(whole.rows) >= 10_000:
            print(
                f"otel-prov: warning: {len(whole.rows)} rows; the server may cap answers "
                "(add ORDER BY without LIMIT to let otel-prov page)",
                file=sys.stderr,
            )
        return whole

    def _where(self) -> str:
        """The endpoint as messages name it (no credentials)."""
        return redact_url(self.endpoint)

    def query(self, sparql: str, *, dataset: Dataset | None = None) -> QueryResult:
        """Each request of the query, every page of a SELECT, is sent with ``dataset``,
        which is passed along, never kept: other threads query through this backend."""
        prologue_match = _PROLOGUE.match(sparql)
        prologue = prologue_match.group(1) if prologue_match else ""
        body = sparql[len(prologue) :].strip()
        form_match = _FORM.search(body)
        form = form_match.group(1).upper() if form_match else ""
        if form == "ASK":
            answer = json.loads(self._run(sparql, JSON, dataset))
            return QueryResult("ask", boolean=bool(answer["boolean"]))
        if form in ("CONSTRUCT", "DESCRIBE"):
            data = self._run(sparql, TURTLE, dataset)
            return QueryResult(
                "graph", triples=list(pyoxigraph.parse(data, pyoxigraph.RdfFormat.TURTLE))
            )
        if not body.upper().startswith("SELECT") or _TOP_LIMIT.search(body) or _FROM.search(body):
            # The query pages itself, or cannot be nested (FROM): run it as written.
            return self._whole(sparql, dataset)
        return self._select_all(prologue, body, dataset)


def sort_key(variable: str) -> str:
    """An ORDER BY key that places every value of ``variable`` (``?name``) for certain, in
    an order every store can sort: a literal as one string of its datatype, language tag
    and text, any other term as itself.

    Ordered by the value itself, literals of mixed types are compared by rules that are
    no order: Oxigraph (0.5.13) compares two numbers by value and a number with a string
    by their text, so ``2 < 10 < "10" < 2``, and the sort of its ``ORDER BY`` panics on
    such rows, taking down the server and every writer with it.  Strings are ordered as
    text, and blank nodes, IRIs and strings each by kind first (SPARQL 1.1, 15.1), an
    unbound value before all.  The string of a literal names it alone (neither an IRI
    nor a language tag holds a space), so rows tied on every key are the same row.  One
    key a variable: Virtuoso (7.2) refuses more than 20.
    """
    parts = f'COALESCE(STR(DATATYPE({variable})), ""), " ", COALESCE(LANG({variable}), "")'
    return f'IF(isLITERAL({variable}), CONCAT({parts}, " ", STR({variable})), {variable})'


def total_order(prologue: str, body: str, *, key: Callable[[str], str] = sort_key) -> str | None:
    """``body``, a SELECT (read after ``prologue``), with an order that makes the place of
    each of its rows certain, ``None`` when Oxigraph cannot parse it.

    The order is the query's own ORDER BY, if any, then every variable it projects, each
    by its ``key`` (:func:`sort_key`, or ``str``: the variable itself): rows tied on all
    of them are the same row, so whichever comes first the pages hold the same rows.  A
    query without an order of its own is sorted outside, by its projected variables:
    after its DISTINCT or GROUP BY, so a server sorts the rows it gives, not those it
    reads (sorting inside, Oxigraph took 11 s for 12,000 subjects, outside 1.7 s).
    Oxigraph's parser tells which one the query is: a second ORDER BY is an error, and
    so are keys after a query that does not end in one.
    """
    answer = _solutions(prologue, body)
    if answer is None:
        return None
    keys = " ".join(key(f"?{variable.value}") for variable in answer.variables)
    candidates = (f"{body}\nORDER BY {keys}", f"{body}\n{keys}")
    own = next((c for c in candidates if _solutions(prologue, c) is not None), None)
    if own is None:
        return None
    if own == candidates[1]:  # keys after the query's own ORDER BY
        return own
    return f"SELECT * WHERE {{ {body}\n}} ORDER BY {keys}"


def _solutions(prologue: str, body: str) -> pyoxigraph.QuerySolutions | None:
    """What Oxigraph makes of the SELECT ``body`` (its projected variables), None for a
    query it cannot parse or one of another form.

    Asked as a subquery under ``FILTER(false)``, which Oxigraph's optimizer answers
    without evaluating it: on an empty store, a query's own ``VALUES`` are still rows
    to sort or join (two of 2,000 values grouped and ordered took 86 s), and a sort that
    panics (:func:`sort_key`) would take down this process.
    """
    try:
        answer = pyoxigraph.Store().query(
            f"{prologue}SELECT * WHERE {{ {{ {body}\n}} FILTER(false) }}"
        )
    except SyntaxError:
        return None
    return answer if isinstance(answer, pyoxigraph.QuerySolutions) else None


def _split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``http://user:password@host/path`` -> ``http://host/path`` and the (unquoted) user and
    password; a URL without user info as it is."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None:
        return url, None
    host = parts.netloc.rpartition("@")[2]
    bare = urllib.parse.urlunsplit(parts._replace(netloc=host))
    return bare, (urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or ""))


def _plain(term: Mapping[str, str]) -> str:
    value = term["value"]
    if term.get("datatype") == _XSD_DATETIME:
        return canonical_datetime(value)
    if term.get("type") == "bnode":
        return f"_:{value}"
    return value


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
