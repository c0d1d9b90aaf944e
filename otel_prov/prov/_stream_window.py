"""What a streaming cycle maps of a run still open: a window around the spans that ended.

Mapping the whole run at every cycle made streaming's work grow with the square of a
run's length (0.2 s a cycle at 200 steps).  A cycle maps a *window* instead, whose size
does not grow with the run: the run's session (a snapshot while it is open), its first
step (what the run was asked is read from it), and around each span that ended since
the last cycle the step it belongs to, the step before (its links to the new one may
change: a step's tool results can be read from the next request, issue 42) and the one
before that (context for those links).

The run is cut into *units*, the subtrees under the session's direct children, in the
order they started.  A unit whose root is an iteration or a model call *opens* a step;
the units after it up to the next opener (tool calls, retrievals, plain spans of an
inferred step) belong to its step.  Triples are kept only for the subjects of the
*dirty* units (the new spans' steps and the steps before them) and for subjects that
belong to no span (agents, tools, models, services): what a window says of its context
units, from a partial view of the run, is left out.

A window can still be wrong where the mapper looks at the whole run (a session's
aggregates, a wrapper session around several others, a plan's outcome); those triples
are provisional, like an activity's ``running`` status, and the run's end takes back
whatever the mapping of the whole run does not say (``Sealer.seal``, ``ProvRecord.
retracted``), so a streamed run ends up exactly as if sealed at its end.

The numbers of inferred steps are learned from each window as it is mapped
(:meth:`RunWindow.learn`), so that a window that holds steps 7 to 9 and the first one
numbers them 7 to 9, not 2 to 4 (``SpanTree(step_numbers=...)``).

Pure: no clock, no I/O; the writer keeps one per open run.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from otel_prov.prov._iris import STEP, owner_span
from otel_prov.prov._rdf import Triple, parse_literal
from otel_prov.prov._span_record import Role, SpanRecord
from otel_prov.prov._vocab import O

__all__ = ["RunWindow", "Window"]

_OPENERS = (Role.ITERATION, Role.MODEL_CALL)
_STEP_SUFFIX = f":{STEP}>"


@dataclass(frozen=True)
class Window:
    """The spans a cycle maps, and the span ids whose triples it keeps."""

    spans: list[SpanRecord]
    dirty: frozenset[int]


class RunWindow:
    """One open run (its outermost session ``session``) as the cycles see it."""

    def __init__(self, session: int) -> None:
        self.session = session
        self._unit_of: dict[int, int] = {}
        """Span id -> the unit root (a direct child of the session) it lies under."""
        self._members: dict[int, list[int]] = {}
        """Unit root -> the spans under it (itself first)."""
        self._order: list[tuple[int, int]] = []
        """(start, unit root) of every unit, sorted: the run's units in the order they started."""
        self._opens: dict[int, bool] = {}
        """Unit root -> whether it opens a step."""
        self._started: dict[int, int] = {}
        """Unit root -> when it started (its key in ``_order``)."""
        self._waiting: set[int] = set()
        """Spans whose way up to the session is not known yet (a parent that has not come)."""
        self.step_numbers: dict[int, int] = {}
        """Model call span id -> the number of the inferred step it opens."""

    def window(self, new: Iterable[int], known: Mapping[int, SpanRecord]) -> Window | None:
        """The window for the spans ``new`` (ids; ended since the last cycle) among
        ``known`` (every span of the trace the writer holds, open ones as snapshots);
        ``None`` when none of them can be placed in the run yet (they wait)."""
        dirty_units: set[int] = set()
        for span_id in (*self._waiting, *new):
            unit = self._place(span_id, known)
            if unit is None:
                self._waiting.add(span_id)
            else:
                self._waiting.discard(span_id)
                dirty_units.add(unit)
        if not dirty_units or self.session not in known:
            return None
        order = self._order
        taken: set[int] = set()
        dirty: set[int] = {self.session}
        for unit in dirty_units:
            at = bisect.bisect_left(order, (self._started[unit], unit))
            first, keep_from, last = self._around(at)
            taken.update(range(first, last))
            for index in range(keep_from, last):
                dirty.update(self._members[order[index][1]])
        if order:
            taken.add(0)  # the first step: the run's question is read from it
        spans = [known[self.session]]
        for index in sorted(taken):
            spans.extend(known[s] for s in self._members[order[index][1]] if s in known)
        return Window(spans, frozenset(dirty))

    def _around(self, at: int) -> tuple[int, int, int]:
        """(first, keep_from, last): the units a window takes for the unit at ``at`` of the
        run's order, and from which of them on it keeps triples."""
        order = self._order
        openers = 0
        first = keep_from = at
        index = at
        while index >= 0:
            first = index
            if self._opens[order[index][1]]:
                openers += 1
                if openers == 2:
                    keep_from = index  # the step before: its links to this one
                elif openers == 3:
                    break  # the step before that: context for them
            index -= 1
        if openers < 2:
            keep_from = first
        last = at + 1
        while last < len(order) and not self._opens[order[last][1]]:
            last += 1  # the rest of this step
        return first, keep_from, last

    def _place(self, span_id: int, known: Mapping[int, SpanRecord]) -> int | None:
        """The unit ``span_id`` belongs to, recorded; ``None`` when its way up is not known."""
        found = self._unit_of.get(span_id)
        if found is not None:
            return found
        path: list[int] = []
        current = known.get(span_id)
        while current is not None and current.span_id != self.session:
            path.append(current.span_id)
            if current.parent_id == self.session:
                break
            above = self._unit_of.get(current.parent_id) if current.parent_id else None
            if above is not None:
                return self._join(path, above)
            current = known.get(current.parent_id) if current.parent_id is not None else None
        if current is None or not path or current.span_id == self.session:
            return None
        root = path[-1]
        if root not in self._members:
            self._members[root] = []
            self._opens[root] = current.role in _OPENERS
            self._started[root] = current.start_ns
            bisect.insort(self._order, (current.start_ns, root))
        return self._join(path, root)

    def _join(self, path: list[int], unit: int) -> int:
        members = self._members[unit]
        for span_id in reversed(path):
            if span_id not in self._unit_of:
                self._unit_of[span_id] = unit
                members.append(span_id)
        return unit

    def learn(self, triples: Iterable[Triple]) -> None:
        """Keep the numbers a window's mapping gave its inferred steps."""
        for subject, predicate, number in triples:
            if predicate != O.iterationNumber or not subject.endswith(_STEP_SUFFIX):
                continue
            owner = owner_span(subject)
            if owner is not None:
                self.step_numbers[owner] = int(parse_literal(number))


def kept(triples: Iterable[Triple], dirty: frozenset[int]) -> list[Triple]:
    """The triples of a window a cycle stores: those of its dirty spans' subjects and of
    subjects that belong to no span (agents, tools, models, services)."""
    keep: dict[str, bool] = {}  # by subject: a subject has a dozen triples
    out = []
    for triple in triples:
        subject = triple[0]
        kept_here = keep.get(subject)
        if kept_here is None:
            owner = owner_span(subject)
            kept_here = keep[subject] = owner is None or owner in dirty
        if kept_here:
            out.append(triple)
    return out
