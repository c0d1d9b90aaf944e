"""``GET /metrics``: the receiver's counters in the Prometheus text format (version 0.0.4).

A dozen numbers do not need a metrics library: counters and gauges are plain values the
receiver updates under its lock, one histogram times the export cycles, and
:func:`render` writes them with their ``# HELP`` and ``# TYPE`` lines.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

__all__ = ["CONTENT_TYPE", "Histogram", "Sample", "render"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclass(frozen=True, slots=True)
class Sample:
    name: str
    kind: str
    """``counter`` or ``gauge``."""
    help: str
    value: float
    labels: str = ""
    """``tenant="a"``: one receiver's of several (a tenant's)."""


@dataclass(slots=True)
class Histogram:
    """Observations (seconds) in cumulative buckets, as Prometheus histograms are."""

    name: str
    help: str
    bounds: Sequence[float] = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    labels: str = ""

    def labelled(self, labels: str) -> Histogram:
        """A copy of it as it stands, with ``labels`` on its lines."""
        return Histogram(self.name, self.help, self.bounds, list(self.counts), self.total, labels)

    def observe(self, value: float) -> None:
        if not self.counts:
            self.counts = [0] * (len(self.bounds) + 1)
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += value

    def lines(self) -> list[str]:
        """Its samples, without the ``# HELP`` and ``# TYPE`` lines :func:`render` writes."""
        counts = self.counts or [0] * (len(self.bounds) + 1)
        out = []
        cumulative = 0
        given = f"{self.labels}," if self.labels else ""
        braces = f"{{{self.labels}}}" if self.labels else ""
        for bound, count in zip([*self.bounds, math.inf], counts, strict=True):
            cumulative += count
            label = "+Inf" if math.isinf(bound) else repr(bound)
            out.append(f'{self.name}_bucket{{{given}le="{label}"}} {cumulative}')
        out.append(f"{self.name}_sum{braces} {self.total!r}")
        out.append(f"{self.name}_count{braces} {cumulative}")
        return out


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def render(samples: Iterable[Sample], histograms: Iterable[Histogram] = ()) -> str:
    """Each metric's ``# HELP`` and ``# TYPE`` once, then its samples (one per label set)."""
    series: dict[str, tuple[str, str, list[str]]] = {}
    for sample in samples:
        labels = f"{{{sample.labels}}}" if sample.labels else ""
        line = f"{sample.name}{labels} {_number(sample.value)}"
        series.setdefault(sample.name, (sample.kind, sample.help, []))[2].append(line)
    for histogram in histograms:
        kept = series.setdefault(histogram.name, ("histogram", histogram.help, []))
        kept[2].extend(histogram.lines())
    lines: list[str] = []
    for name, (kind, text, samples_of) in series.items():
        lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}", *samples_of]
    return "\n".join(lines) + "\n"
