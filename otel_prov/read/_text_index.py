"""The listing's text search, from an index of each run's question and answer.

Searching the store for text is a scan: over 100,000 runs, matching the question
literals alone took Oxigraph 6 s, and with the answers and the newest-first order over
two minutes.  So the reader keeps the text itself.  The runs' marks
(``oprov:runStartedAt``) are counted at each search and read when the count grew; the
question and answer of the runs not seen before (or seen without an answer) are read
by their IRIs and kept lower-cased, newest first.  A search is then a pass over those
strings in Python; the page it finds is filtered by the store (agent, status, ...) and
described as any other.  The first search reads every run's text once; later ones
read only what was added since.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from otel_prov.exporters._reading import QueryBackend
from otel_prov.prov._rdf import instant_order
from otel_prov.read._sparql import SPARQL_PREFIXES, values

__all__ = ["TextIndex", "first_starts"]


def run_marks_query(graph: str) -> str:
    """SELECT ``?s ?start``: every marked run (one property, no order: the text index
    keeps its own)."""
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?start WHERE {{ GRAPH {graph} {{ ?s oprov:runStartedAt ?start }} }}"""


def run_marks_count_query(graph: str) -> str:
    """SELECT ``?marked``: how many runs are marked (a count, 60 ms over 100,000 runs,
    where reading them all takes seconds)."""
    return f"""{SPARQL_PREFIXES}
SELECT (COUNT(*) AS ?marked) WHERE {{ GRAPH {graph} {{ ?s oprov:runStartedAt ?start }} }}"""


def run_texts_query(graph: str, runs: Sequence[str]) -> str:
    """SELECT ``?s ?said``: the question and the answer of each of ``runs`` (IRIs), the
    text the listing's search looks in; each branch starts from the runs written in."""
    among = f"VALUES ?s {{ {values(runs)} }}"
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?said WHERE {{ GRAPH {graph} {{
  {{ {among} ?s prov:used ?found . ?found a oprov:Question ; prov:value ?said }}
  UNION {{ {among} ?found prov:wasGeneratedBy ?s ; a oprov:Answer ; prov:value ?said }}
}} }}"""


_BATCH = 1000
"""Runs whose text one query reads."""


@dataclass
class TextIndex:
    """Each marked run's start and lower-cased question and answer, newest first.

    One index serves many readers of one store (``otel-prov serve`` keeps one for its
    life); it is safe to share between threads.
    """

    _texts: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Run IRI -> (start, question and answer lower-cased)."""
    _order: list[str] = field(default_factory=list)
    _unanswered: set[str] = field(default_factory=set)
    """Runs read without an answer: read again, since a run exported before it ended
    (``incomplete``) gets its answer in a later export."""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _refreshing: threading.Lock = field(default_factory=threading.Lock)
    _marks: int = -1
    """How many runs were marked at the last refresh: while that stays, none is new."""

    def refresh(self, backend: QueryBackend, graph: str) -> None:
        """Read the text of the runs marked since the last refresh, and again of those
        read without an answer.  One refresh at a time: a search that comes while the
        first one reads the whole store waits for it instead of reading it too."""
        with self._refreshing:
            self._refresh(backend, graph)

    def _refresh(self, backend: QueryBackend, graph: str) -> None:
        count = int(backend.query(run_marks_count_query(graph)).rows[0]["marked"] or 0)
        with self._lock:
            if count == self._marks and not self._unanswered:
                return
            known = {run: self._texts[run][0] for run in self._unanswered}
        if count == self._marks:
            new = known
        else:
            marks = first_starts(backend.query(run_marks_query(graph)).rows)
            with self._lock:
                new = {
                    run: start
                    for run, start in marks.items()
                    if run not in self._texts or run in self._unanswered
                }
        self._marks = count
        if not new:
            return
        said: dict[str, list[str]] = {run: [] for run in new}
        runs = sorted(new)
        for begin in range(0, len(runs), _BATCH):
            query = run_texts_query(graph, runs[begin : begin + _BATCH])
            for row in backend.query(query).rows:
                said[row["s"] or ""].append((row["said"] or "").lower())
        with self._lock:
            for run, start in new.items():
                self._texts[run] = (start, "\n".join(said[run]))
                if len(said[run]) < 2:
                    self._unanswered.add(run)
                else:
                    self._unanswered.discard(run)
            by_run = sorted(self._texts)
            self._order = sorted(
                by_run, key=lambda run: instant_order(self._texts[run][0]), reverse=True
            )

    def matches(self, text: str, after: tuple[str, str] | None = None) -> Iterator[tuple[str, str]]:
        """(run IRI, start) of the runs whose question or answer holds ``text``, ignoring
        case, newest first (IRIs breaking ties), after the run ``after`` (its start's
        lexical form and IRI) when given."""
        wanted = text.lower()
        with self._lock:
            order, texts = self._order, self._texts
        for run in order:
            start, said = texts[run]
            if after is not None and not _later_in_listing(start, run, after):
                continue
            if wanted in said:
                yield run, start


def first_starts(rows: Iterable[Mapping[str, str | None]]) -> dict[str, str]:
    """Run IRI -> the first of its starts among ``rows`` (``?s ?start``): where the
    listing places a run marked twice (``_listing._at_first_start``)."""
    first: dict[str, str] = {}
    for row in rows:
        run, start = row["s"] or "", row["start"] or ""
        if run not in first or instant_order(start) < instant_order(first[run]):
            first[run] = start
    return first


def _later_in_listing(start: str, run: str, after: tuple[str, str]) -> bool:
    """Whether ``run`` comes after the run ``after`` in the newest-first order."""
    mine, theirs = instant_order(start), instant_order(after[0])
    return mine < theirs or (mine == theirs and run > after[1])


def chunks(items: Iterator[tuple[str, str]], size: int) -> Iterator[Sequence[tuple[str, str]]]:
    """``items`` in lists of ``size`` (the last one shorter)."""
    batch: list[tuple[str, str]] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
