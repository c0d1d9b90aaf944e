"""The embedded store's reader: the pyoxigraph store on disk, read-only, or through the
handle of this process's own writer of it."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import TypeVar

import pyoxigraph

from otel_prov.exporters._reading import Dataset, QueryResult, StoreUnavailableError, json_datatypes
from otel_prov.exporters.oxigraph._rocksdb import open_read_only, writer_here

__all__ = ["EmbeddedBackend"]


def _value(term: object) -> str | None:
    if term is None:
        return None
    if isinstance(term, (pyoxigraph.NamedNode, pyoxigraph.Literal)):
        return term.value
    if isinstance(term, pyoxigraph.BlankNode):
        return f"_:{term.value}"
    return str(term)


T = TypeVar("T")

_ATTEMPTS = 10
"""Read-only opens (and queries) tried while a writer compacts the store under them; the
waits between them double from 50 ms up to 1 s (about 6 s in all)."""


def _retried(
    action: Callable[[], T], failure: str, again: Callable[[], object] = lambda: None
) -> T:
    """``action``, tried again (after a back-off and ``again``) while the store's files
    change under it; after the last attempt ``StoreUnavailableError`` says ``failure``
    and why."""
    attempt = 1
    while True:
        try:
            return action()
        except (OSError, RuntimeError) as exc:
            if attempt == _ATTEMPTS:
                raise StoreUnavailableError(f"{failure}: {exc}") from exc
        time.sleep(min(1.0, 0.05 * 2 ** (attempt - 1)))
        again()
        attempt += 1


class EmbeddedBackend:
    """Reads an on-disk pyoxigraph store, read-only (the default graph is the union of all).

    ``writer`` gives the handle of a process's own writer of the store (``None`` while it
    holds none), by default the exporter writing it in this process, if any: reading
    through it sees every batch exported so far, where a read-only open is a snapshot, and
    one opened beside an active writer fails while it compacts.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        writer: Callable[[], pyoxigraph.Store | None] | None = None,
    ) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise StoreUnavailableError(
                f"no provenance store at {self.path} (run an instrumented agent or "
                "'otel-prov demo' first, or pass --store)"
            )
        self.writer = writer if writer is not None else writer_here(self.path)
        self._read_only = None if self._held() is not None else self._open()

    def _held(self) -> pyoxigraph.Store | None:
        return self.writer() if self.writer is not None else None

    @property
    def _store(self) -> pyoxigraph.Store:
        held = self._held()
        if held is not None:
            return held
        if self._read_only is None:
            self._read_only = self._open()
        return self._read_only

    def _open(self) -> pyoxigraph.Store:
        """Open read-only.  A process writing the store may compact it meanwhile, deleting
        files the opening (or a query) was about to read: then open it again, as it is now."""
        return _retried(lambda: open_read_only(self.path), f"cannot open the store at {self.path}")

    def ntriples(self, graph: str) -> Iterator[str]:
        """Every triple of the named graph ``graph`` (an IRI), as N-Triples written by the
        store (terms in the syntax the mapper writes), in parts, each as soon as it is
        written: the caller works on one while the store writes the others.

        Decoding terms is what writing a graph out costs (each IRI and long literal is
        looked up by its hash), and one dump does it on one core.  A read-only handle is
        a snapshot, so the graph is written out one predicate at a time, on every core:
        each query lets go of the interpreter while the store works.  A writer's handle
        moves on between queries, so through it the graph is dumped at once.
        """
        store, name = self._store, pyoxigraph.NamedNode(graph)
        if self._held() is not None:
            data = store.dump(format=pyoxigraph.RdfFormat.N_TRIPLES, from_graph=name)
            yield (data or b"").decode()
            return
        used = store.query(f"SELECT DISTINCT ?p WHERE {{ GRAPH {name} {{ ?s ?p ?o }} }}")
        assert isinstance(used, pyoxigraph.QuerySolutions)

        def written(predicate: object) -> str:
            triple = f"?s {predicate} ?o"
            answer = store.query(
                f"CONSTRUCT {{ {triple} }} WHERE {{ GRAPH {name} {{ {triple} }} }}"
            )
            assert isinstance(answer, pyoxigraph.QueryTriples)
            return (answer.serialize(format=pyoxigraph.RdfFormat.N_TRIPLES) or b"").decode()

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            for part in as_completed([pool.submit(written, row[0]) for row in used]):
                yield part.result()

    def query(self, sparql: str, *, dataset: Dataset | None = None) -> QueryResult:
        return _retried(
            lambda: self._query(sparql, dataset),
            f"cannot read the store at {self.path}",
            again=self._reopen,
        )

    def _reopen(self) -> None:
        self._read_only = self._open()

    def _query(self, sparql: str, dataset: Dataset | None) -> QueryResult:
        try:
            if dataset is None or not dataset.defaults:
                answer = self._store.query(sparql, use_default_graph_as_union=True)
            else:  # the dataset, FROM and FROM NAMED overridden
                default: list[pyoxigraph.NamedNode | pyoxigraph.BlankNode | pyoxigraph.DefaultGraph]
                default = [pyoxigraph.NamedNode(graph) for graph in dataset.defaults]
                if dataset.named_graphs is None:
                    answer = self._store.query(sparql, default_graph=default)
                else:
                    named: list[pyoxigraph.NamedNode | pyoxigraph.BlankNode] = [
                        pyoxigraph.NamedNode(graph) for graph in dataset.named_graphs
                    ]
                    answer = self._store.query(sparql, default_graph=default, named_graphs=named)
        except SyntaxError as exc:
            raise ValueError(f"invalid SPARQL: {exc}") from exc
        if isinstance(answer, pyoxigraph.QueryBoolean):
            return QueryResult("ask", boolean=bool(answer))
        if isinstance(answer, pyoxigraph.QuerySolutions):
            variables = tuple(variable.value for variable in answer.variables)
            rows, datatypes = [], []
            for solution in answer:
                terms = [(name, solution[name]) for name in variables]
                rows.append({name: _value(term) for name, term in terms})
                datatypes.append(
                    json_datatypes(
                        (name, term.datatype.value)
                        for name, term in terms
                        if isinstance(term, pyoxigraph.Literal)
                    )
                )
            return QueryResult("select", variables=variables, rows=rows, datatypes=datatypes)
        return QueryResult("graph", triples=list(answer))
