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


@dataclass(slots=True)
class Histogram:
    """Observations (seconds) in cumulative buckets, as Prometheus histograms are."""

    name: str
    help: str
    bounds: Sequence[float] = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
    counts: list[int] = field(default_factory=list)
    total: float = 0.0

    def observe(self, value: float) -> None:
        if not self.counts:
            self.counts = [0] * (len(self.bounds) + 1)
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += value

    def lines(self) -> list[str]:
        counts = self.counts or [0] * (len(self.bounds) + 1)
        out = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        cumulative = 0
        for bound, count in zip([*self.bounds, math.inf], counts, strict=True):
            cumulative += count
            label = "+Inf" if math.isinf(bound) else repr(bound)
            out.append(f'{self.name}_bucket{{le="{label}"}} {cumulative}')
        out.append(f"{self.name}_sum {self.total!r}")
        out.append(f"{self.name}_count {cumulative}")
        return out


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def render(samples: Iterable[Sample], histograms: Iterable[Histogram] = ()) -> str:
    lines: list[str] = []
    for sample in samples:
        lines += [
            f"# HELP {sample.name} {sample.help}",
            f"# TYPE {sample.name} {sample.kind}",
            f"{sample.name} {_number(sample.value)}",
        ]
    for histogram in histograms:
        lines += histogram.lines()
    return "\n".join(lines) + "\n"
