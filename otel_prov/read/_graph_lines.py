"""A whole named graph as the store writes it, filed by trace as each part arrives:
``verify --all`` reads the graph once, in parts written on every core (one per
predicate), and files each part while the store writes the next ones, so that when
the last part is in, each run's trace is one lookup away.

Every subject the mapper writes for a span of a trace starts with
``<urn:otel-prov:<trace>:``, so in code-point order the lines of one trace form one
run of a sorted part: a part is sorted, then its traces are stepped over by bisection
(ten thousand steps, not two hundred thousand lines filed one by one in Python).
Subjects outside every trace (the agents; or a forged activity that claims to be part
of a run) are kept apart and offered with every trace, so a forgery still lands in the
content of the run it claims.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

from otel_prov.prov._rdf import Triple, canonical_datetime

__all__ = ["GraphLines", "triple_of"]

_IN_A_TRACE = "<urn:otel-prov:"
_TRACE_END = len(_IN_A_TRACE) + 32
"""Where the ``:`` after a 32-digit trace id stands in a subject of that trace."""
_DATETIME = '"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
_DATETIME_END = f"{_DATETIME} .\n"


def _in_a_trace(line: str) -> bool:
    return line.startswith(_IN_A_TRACE) and line[_TRACE_END : _TRACE_END + 1] == ":"


class GraphLines:
    """The triples of one graph, filed by trace; parts of it are added in any order."""

    def __init__(self, parts: Iterable[str] = ()) -> None:
        """``parts`` are filed as they come: a generator's next part is written by the
        store while this one is filed."""
        self._traces: dict[str, list[Triple]] = {}
        self.others: list[Triple] = []
        """The triples whose subject is in no trace, which every trace is offered."""
        for part in parts:
            self.add(part)

    def add(self, ntriples: str) -> None:
        """File the lines of ``ntriples`` (N-Triples as the store writes them)."""
        # not splitlines: a literal may hold U+2028 as it is
        lines = _canonical_times(ntriples).split("\n")
        if not lines[-1]:
            lines.pop()  # what follows the last line end
        lines.sort()
        traces, at = self._traces, 0
        while at < len(lines):
            line = lines[at]
            if _in_a_trace(line):
                end = bisect_left(lines, f"{line[:_TRACE_END]};", at)  # ';' follows ':'
                trace = line[len(_IN_A_TRACE) : _TRACE_END]
                found = traces.get(trace)
                if found is None:
                    found = traces[trace] = []
                found.extend(map(triple_of, lines[at:end]))
                at = end
            else:
                self.others.append(triple_of(line))
                at += 1

    def of_trace(self, trace: str) -> list[Triple]:
        """The triples whose subject is in ``trace`` (32 hex digits)."""
        return self._traces.get(trace, [])


def triple_of(line: str) -> Triple:
    """A line the store wrote, as the mapper writes the triple."""
    s, p, rest = line.split(" ", 2)
    return (s, p, rest[:-2])


def _canonical_times(ntriples: str) -> str:
    """The store's lines with each dateTime in the form the mapper writes.

    The store prints an offset as stored (``+01:00``); the mapper writes UTC (``Z``,
    fraction without trailing zeros), which only needs checking when it ends in ``0Z``.
    The text is searched for the few lines ending in a dateTime, rather than two million
    lines asked one by one whether they end in one.
    """
    parts, done, at = [], 0, 0
    while (end := ntriples.find(_DATETIME_END, at)) != -1:
        at = end + len(_DATETIME_END)
        if ntriples[end - 1] == "Z" and ntriples[end - 2] != "0":
            continue
        start = ntriples.rfind('"', 0, end) + 1  # a dateTime's lexical form holds no quote
        parts += [ntriples[done:start], canonical_datetime(ntriples[start:end])]
        done = end
    return "".join([*parts, ntriples[done:]]) if parts else ntriples
