"""Triples about shared subjects that the held store already has from us: not sent again.

Every session describes its agents, tools, models and services again (their types and
labels), and the embedded store writes a quad at the same cost whether it holds it or
not.  ``benchmarks/bench_shared_triples.py`` measures what leaving them out saves.  Triples of a run (subjects under
``urn:otel-prov:<trace>:``) never repeat across sessions and are not remembered.  The
store holds the same quads either way: only writes are skipped.
"""

from __future__ import annotations

from collections.abc import Iterable

from otel_prov.prov._iris import SHARED_PREFIXES
from otel_prov.prov._rdf import Triple

__all__ = ["SharedTriples"]


class SharedTriples:
    """What one opening of a store holds from us about shared subjects (bounded memory).

    Not thread-safe: the exporter calls it under its lock.  A new opening of the store
    (after a fork, a failed write, or by another exporter) starts with an empty one.
    """

    def __init__(self, *, limit: int = 8192) -> None:
        self._held: set[Triple] = set()
        self._limit = limit

    def fresh(self, triples: Iterable[Triple]) -> tuple[list[Triple], list[Triple]]:
        """``triples`` without the shared ones the store holds (or that came earlier in
        ``triples``), and the shared ones kept: to :meth:`remember` once they are stored."""
        kept: list[Triple] = []
        shared: set[Triple] = set()
        held = self._held
        is_shared: dict[str, bool] = {}  # a subject has several triples: test its IRI once
        for triple in triples:
            subject = triple[0]
            found = is_shared.get(subject)
            if found is None:
                found = is_shared[subject] = subject.startswith(SHARED_PREFIXES)
            if found:
                if triple in held or triple in shared:
                    continue
                shared.add(triple)
            kept.append(triple)
        return kept, list(shared)

    def remember(self, stored: Iterable[Triple]) -> None:
        """``stored`` are in the store now (the load that carried them succeeded)."""
        self._held.update(stored)
        if len(self._held) > self._limit:  # an unusual number of agents: start over
            self._held.clear()
