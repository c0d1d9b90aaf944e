"""What signing costs: per session sealed, and for ``verify --all --trust`` (issue 27.7).

Sealing: the benchmark workload's sessions (two steps each) mapped once, then sealed by a
:class:`~otel_prov.prov._sealer.Sealer` with no key and by one with an Ed25519 key
(``otel-prov keygen``'s), each over fresh records; the difference per session, in
microseconds and as a ratio of the unsigned seal.

Verifying: 10,000 runs stored as agents store them (5 a transaction), once sealed without
a key and once signed; ``verify()`` of the first, and ``verify(trusted=[key])`` of the
second (every entry's signature checked), each timed as ``verify --all`` runs it.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.workload import session_spans
from otel_prov._signing import KeySigner, generate_key_pair
from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._sealer import Sealer
from otel_prov.read import open_store

SEALED = 2_000
STORED = 10_000
PER_BATCH = 5


def _seal_seconds(signer: KeySigner | None) -> float:
    records = [map_spans(session_spans(i, iterations=2)) for i in range(SEALED)]
    sealer = Sealer(chain="bench", signer=signer)
    begin = time.perf_counter()
    for record in records:
        sealer.seal(record, 0)
    return time.perf_counter() - begin


def _store(path: Path, signer: KeySigner | None) -> None:
    exporter = OxigraphStoreExporter(path)
    sealer = Sealer(chain="bench", signer=signer)
    for start in range(0, STORED, PER_BATCH):
        batch = range(start, start + PER_BATCH)
        exporter.export([sealer.seal(map_spans(session_spans(i, iterations=2)), 0) for i in batch])
    exporter.shutdown()


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-signing-"))
    try:
        private, _ = generate_key_pair(root / "keys")
        signer = KeySigner(private)
        _seal_seconds(None)  # warm up
        unsigned = min(_seal_seconds(None) for _ in range(3)) / SEALED * 1e6
        signed = min(_seal_seconds(signer) for _ in range(3)) / SEALED * 1e6
        print(
            f"sealing a session ({SEALED:,} sessions, best of 3): unsigned {unsigned:.0f} us, "
            f"signed {signed:.0f} us: signing adds {signed - unsigned:.0f} us "
            f"({signed / unsigned:.2f}x of the unsigned seal)"
        )
        timings = {}
        for name, key in (("unsigned", None), ("signed", signer)):
            _store(root / name, key)
            reader = open_store(root / name)
            trusted = [signer.key_id] if key is not None else []
            begin = time.perf_counter()
            checks = reader.verify(trusted=trusted)
            timings[name] = time.perf_counter() - begin
            failed = sum(not check.ok for check in checks)
            print(
                f"verify --all {'--trust ' if trusted else ''}over {len(checks):,} {name} runs: "
                f"{timings[name]:.1f} s, {failed} failed"
            )
        print(
            f"verify --all --trust / unsigned verify --all: "
            f"{timings['signed'] / timings['unsigned']:.2f}x (target: within 1.2x)"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
