"""What ``otel-prov prune`` costs, what its tombstones cost ``verify --all --trust``, and
what recording its intent first costs (issue 38 point 5).

5,000 runs of the benchmark workload (two steps each), sealed and signed by one writer
(one chain) and stored as agents store them (5 a transaction); then half of them (those
that ended before the middle run started) pruned as ``prune --before`` does: the plan
read from the store, the tombstone stored, the runs removed.  ``verify(trusted=[key])``
is timed before and after, to show that a tombstone costs the check nothing per run.

The intent: the same prune of copies of the same store, side by side, as ``prune`` does
it now (the unfinished prunes looked up, the intent stored with the tombstone, removed
with the last runs) and as it did before the intent (tombstone, checkpoint, removal),
alternately (each first in every other round), ``ROUNDS`` times each; the ratio of the
medians, and every time measured (on a loaded machine the spread is wider than the gap).
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.workload import T0, session_spans
from otel_prov._signing import KeySigner, generate_key_pair
from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.exporters._base import ExportResult
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.processing._chain_writer import ChainWriter
from otel_prov.processing._pipeline import WritePipeline
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._record import ProvRecord
from otel_prov.read import open_store
from otel_prov.read._retention import PrunePlan, plan_prune, prune, unfinished

RUNS = 5_000
PER_BATCH = 5
GRAPH = "<urn:otel-prov:graph>"
ROUNDS = 3


def _without_intent(
    plan: PrunePlan, exporter: OxigraphStoreExporter, chain: ChainWriter, now_ns: int
) -> None:
    """The prune as it was before its intent: tombstones and checkpoint, then removal."""
    records = [
        ProvRecord("0" * 32, (triples := chain.sealer.tombstone(t))[0][0], tuple(triples))
        for t in plan.tombstones
    ]
    assert exporter.export(records) is ExportResult.SUCCESS
    assert chain.checkpoint(exporter, now_ns, graph=GRAPH) and exporter.force_flush()
    assert exporter.remove(GRAPH, list(plan.subjects))


def _timed_prune(
    root: Path, copy: Path, signer: KeySigner, cutoff: datetime, intent: bool
) -> float:
    """Seconds one prune of a fresh copy of the store takes, the plan apart."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root / "pristine", copy)
    exporter = OxigraphStoreExporter(copy)
    chain = ChainWriter(signer=signer, checkpoint_file=copy.parent / "checkpoints-copy.jsonl")
    backend = EmbeddedBackend(copy, writer=exporter.held_store)
    plan = plan_prune(backend, GRAPH, cutoff=cutoff, policy="bench", now=datetime.now(timezone.utc))
    begin = time.perf_counter()
    if intent:
        assert not unfinished(backend, GRAPH)
        pipeline = WritePipeline.from_settings(exporter, chain=chain, graph=GRAPH, stream=False)
        prune(plan, pipeline=pipeline, now_ns=time.time_ns())
    else:
        _without_intent(plan, exporter, chain, time.time_ns())
    took = time.perf_counter() - begin
    exporter.shutdown()
    return took


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-prune-"))
    try:
        generate_key_pair(root / "keys")
        signer = KeySigner(root / "keys" / "signing.key")
        writer = ChainWriter(signer=signer, checkpoint_file=root / "checkpoints.jsonl")
        exporter = OxigraphStoreExporter(root / "store")
        for start in range(0, RUNS, PER_BATCH):
            records = [
                writer.sealer.seal(map_spans(session_spans(i, iterations=2)), T0, whole=True)
                for i in range(start, start + PER_BATCH)
            ]
            exporter.export(records)
        writer.checkpoint(exporter, time.time_ns())
        exporter.shutdown()
        shutil.copytree(root / "store", root / "pristine")  # what each timed prune copies
        key = [signer.key_id]
        begin = time.perf_counter()
        before = open_store(root / "store").verify(trusted=key)
        verified = time.perf_counter() - begin
        assert all(check.ok for check in before), [c for c in before if not c.ok][:1]
        exporter = OxigraphStoreExporter(root / "store")
        pruner = ChainWriter(signer=signer, checkpoint_file=root / "checkpoints.jsonl")
        cutoff = datetime.fromtimestamp((T0 + RUNS // 2 * 1_000_000_000) / 1e9, timezone.utc)
        backend = EmbeddedBackend(root / "store", writer=exporter.held_store)
        begin = time.perf_counter()
        plan = plan_prune(
            backend, GRAPH, cutoff=cutoff, policy="bench", now=datetime.now(timezone.utc)
        )
        planned = time.perf_counter() - begin
        begin = time.perf_counter()
        pipeline = WritePipeline.from_settings(exporter, chain=pruner, graph=GRAPH, stream=False)
        prune(plan, pipeline=pipeline, now_ns=time.time_ns())
        pruned = time.perf_counter() - begin
        exporter.shutdown()
        begin = time.perf_counter()
        after = open_store(root / "store").verify(trusted=key)
        again = time.perf_counter() - begin
        assert all(check.ok for check in after), [c for c in after if not c.ok][:1]
        print(
            f"prune {len(plan.runs):,} of {RUNS:,} signed runs ({len(plan.subjects):,} "
            f"subjects, {len(plan.tombstones)} tombstone): plan {planned:.2f} s, tombstone "
            f"and removal {pruned:.2f} s"
        )
        print(
            f"verify --all --trust: {verified:.2f} s for {RUNS:,} runs before, {again:.2f} s "
            f"for the {len(after) - len(plan.tombstones):,} left and the tombstone after "
            f"({verified / RUNS * 1000:.2f} and {again / (RUNS - len(plan.runs)) * 1000:.2f} "
            "ms a run)"
        )
        times: dict[bool, list[float]] = {True: [], False: []}
        for round_ in range(ROUNDS):
            for intent in (False, True) if round_ % 2 == 0 else (True, False):
                times[intent].append(_timed_prune(root, root / "copy", signer, cutoff, intent))
        before, now = statistics.median(times[False]), statistics.median(times[True])
        print(
            f"tombstone and removal of {len(plan.runs):,} runs, median of {ROUNDS}: "
            f"{before:.2f} s without the intent, {now:.2f} s with it recorded first "
            f"({now / before:.2f}x; each: "
            f"{', '.join(f'{t:.1f}' for t in times[False])} s and "
            f"{', '.join(f'{t:.1f}' for t in times[True])} s)"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
