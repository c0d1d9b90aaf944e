"""A whole named graph as the store writes it, sorted so that each trace's triples stand
together: ``verify --all`` reads the graph once and then finds each run's trace by
bisection, instead of splitting and filing two million lines one by one in Python.

Every subject the mapper writes for a span of a trace starts with
``<urn:otel-prov:<trace>:``, so in code-point order the lines of one trace form one
run of the sorted list.  Subjects outside every trace (the agents; or a forged activity
that claims to be part of a run) are kept apart and offered with every trace, so a
forgery still lands in the content of the run it claims.
"""

from __future__ import annotations

from bisect import bisect_left

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
    """The N-Triples lines of one graph, sorted; each trace's found by bisection."""

    def __init__(self, ntriples: str) -> None:
        # not splitlines: a literal may hold U+2028 as it is
        lines = _canonical_times(ntriples).split("\n")
        if not lines[-1]:
            lines.pop()  # what follows the last line end
        lines.sort()
        self._lines = lines
        self.others = [triple_of(line) for line in self._outside_traces()]
        """The triples whose subject is in no trace, which every trace is offered."""

    def _outside_traces(self) -> list[str]:
        """The lines whose subject is in no trace, stepping over each trace's lines by
        bisection (ten thousand steps, not two million)."""
        lines, found, at = self._lines, [], 0
        while at < len(lines):
            line = lines[at]
            if _in_a_trace(line):
                at = bisect_left(lines, f"{line[:_TRACE_END]};", at)
            else:
                found.append(line)
                at += 1
        return found

    def of_trace(self, trace: str) -> list[Triple]:
        """The triples whose subject is in ``trace`` (32 hex digits)."""
        if len(trace) != _TRACE_END - len(_IN_A_TRACE):
            return []
        low = bisect_left(self._lines, f"{_IN_A_TRACE}{trace}:")
        high = bisect_left(self._lines, f"{_IN_A_TRACE}{trace};", low)  # ';' follows ':'
        return [triple_of(line) for line in self._lines[low:high]]


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
