"""(m) What each memo of the pure core saves on mapping and sealing a session.

The mapper and the sealer memoise three functions whose arguments recur across sessions:
the IRIs of named agents, tools and models (``prov/_iris.py``), the UTC seconds of
timestamps (``prov/_rdf.py``) and the canonical form of numeric literals
(``prov/_numeric.py``, for the bundle hash).  Each is switched off in turn (its
``__wrapped__`` put in its place) and the same 2-step sessions mapped and sealed, rounds
alternating; the ratio is CPU without the memo / CPU with every memo, median of the rounds.
"""

from __future__ import annotations

import statistics
import time
from types import ModuleType

from benchmarks.workload import session_spans
from otel_prov.prov import _bundle, _iris, _rdf
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._sealer import Sealer

SESSIONS = [session_spans(i, iterations=2) for i in range(300)]
ROUNDS = 15
MEMOS: dict[str, tuple[ModuleType, str]] = {
    "named IRIs (prov/_iris.py _named)": (_iris, "_named"),
    "UTC seconds (prov/_rdf.py _utc_seconds)": (_rdf, "_utc_seconds"),
    "canonical numbers (prov/_numeric.py, as prov/_bundle.py calls it)": (
        _bundle,
        "canonical_number",
    ),
}


def _map_and_seal() -> float:
    sealer = Sealer()
    start = time.process_time()
    for spans in SESSIONS:
        sealer.seal(map_spans(spans), 0)
    return time.process_time() - start


def main() -> None:
    memoised = {name: getattr(module, attr) for name, (module, attr) in MEMOS.items()}
    every: list[float] = []
    without: dict[str, list[float]] = {name: [] for name in MEMOS}
    for _ in range(ROUNDS):
        every.append(_map_and_seal())
        for name, (module, attr) in MEMOS.items():
            setattr(module, attr, memoised[name].__wrapped__)
            try:
                without[name].append(_map_and_seal())
            finally:
                setattr(module, attr, memoised[name])
    base = statistics.median(every)
    print(f"every memo: {base / len(SESSIONS) * 1e6:.0f} us CPU a session, mapped and sealed")
    for name, times in without.items():
        print(f"without {name}: {statistics.median(times) / base:.3f}x")


if __name__ == "__main__":
    main()
