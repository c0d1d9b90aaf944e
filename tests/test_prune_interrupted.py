"""A prune killed half way is finished by the next one (issue 38 point 5).

Removal goes subject by subject in the store's own order, so a ``prune`` killed in the
middle may have removed a run's session (the ``oprov:runStartedAt`` a plan finds runs by)
and left its bundle and steps: before the prune intent, no later prune found them, and
``verify`` failed for ever (8 of 8 interrupted prunes of 600 signed runs).  Here a real
``otel-prov prune`` process of 300 of 600 signed runs is SIGKILLed at several points:
right after its intent is stored, and with three quarters and half of the runs it removes
left (with a quarter left, the kill sometimes landed after the last removal).  ``verify``
names the unfinished prune, a second ``prune`` finishes it, and ``verify --all --trust``
passes with the 300 runs left and the tombstone of those gone.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path

import pyoxigraph
import pytest

from benchmarks.workload import T0, session_spans
from otel_prov._signing import KeySigner, generate_key_pair
from otel_prov.exporters import OxigraphStoreExporter, ProvExporter
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.processing._chain_writer import ChainWriter
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._vocab import RDF_TYPE, O
from otel_prov.read._retention import unfinished
from tests.cli import CLI

RUNS = 600
KEPT = RUNS // 2
CUTOFF = datetime.fromtimestamp((T0 + KEPT * 1_000_000_000) / 1e9, timezone.utc).isoformat()
"""Runs 0-299 ended before it (each run starts a second after the one before)."""
GRAPH = "<urn:otel-prov:graph>"
KILL_POINTS = ("intent", 0.75, 0.5)
"""Where the prune is killed: as soon as its intent is stored, then when that share of
the runs it removes is still stored."""


def write_signed_runs(exporter: ProvExporter, keys: Path, runs: int = RUNS) -> None:
    """``runs`` runs of the benchmark workload sealed and signed by one writer (one chain,
    checkpointed at its end, its checkpoint file beside ``keys``), five a batch."""
    generate_key_pair(keys)
    writer = ChainWriter(
        signer=KeySigner(keys / "signing.key"), checkpoint_file=keys.parent / "checkpoints.jsonl"
    )
    for start in range(0, runs, 5):
        records = [
            writer.sealer.seal(map_spans(session_spans(i, iterations=2)), T0, whole=True)
            for i in range(start, min(start + 5, runs))
        ]
        assert exporter.export(records).name == "SUCCESS"
    assert writer.checkpoint(exporter, time.time_ns())
    assert exporter.force_flush(timeout_millis=600_000)  # a server takes 30,000 triples
    exporter.shutdown()


def environment(keys: Path) -> dict[str, str]:
    """A user's environment for the pruning writer: its key and checkpoint file."""
    found = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_PROV_")}
    found["OTEL_PROV_SIGNING_KEY"] = str(keys / "signing.key")
    found["OTEL_PROV_CHECKPOINT_FILE"] = str(keys.parent / "checkpoints.jsonl")
    return found


def run(args: list[str], keys: Path) -> tuple[int, str]:
    done = subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment(keys),
        cwd=keys.parent,  # what a server's exporter spools goes beside the keys
    )
    return done.returncode, done.stdout + done.stderr


def trust(keys: Path) -> list[str]:
    checkpoints = str(keys.parent / "checkpoints.jsonl")
    return ["--trust", str(keys / "signing.pub"), "--checkpoints", checkpoints]


def kill_prune(
    where: list[str], keys: Path, point: str | float, runs_left: Callable[[], int],
    intents: Callable[[], int],
) -> None:  # fmt: skip
    """Start ``otel-prov prune`` of the older half and SIGKILL it at ``point``; fails the
    test if the prune ended on its own first (the kill point was missed)."""
    process = subprocess.Popen(
        [*CLI, "prune", "--before", CUTOFF, *where],
        env=environment(keys),
        cwd=keys.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        while process.poll() is None:
            # Looked at while the prune is stopped: it removes nothing between the look and
            # the kill (on a loaded machine it could finish in between).
            process.send_signal(signal.SIGSTOP)
            if point == "intent":
                reached = intents() > 0
            else:
                reached = runs_left() <= KEPT + (RUNS - KEPT) * float(point)
            if reached:
                process.send_signal(signal.SIGKILL)
                break
            process.send_signal(signal.SIGCONT)
            time.sleep(0.005)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.stderr is not None
    stderr = process.stderr.read().decode()
    process.stderr.close()
    assert process.returncode == -signal.SIGKILL, f"the prune ended before {point}: {stderr}"


def check_finished(where: list[str], read: list[str], keys: Path, point: str | float) -> None:
    """After the kill: ``verify`` fails (naming the unfinished prune when its intent was
    stored), a second ``prune`` finishes it, and ``verify --all --trust`` then passes."""
    code, out = run(["verify", "--all", *read, *trust(keys)], keys)
    assert code == 1, out
    assert "removal in progress, finish it with otel-prov prune" in out, out
    code, out = run(["prune", "--keep", "36500d", *where], keys)
    assert code == 0, out
    assert "finished an interrupted prune (before " in out, out
    code, out = run(["verify", "--all", *read, *trust(keys)], keys)
    assert code == 0, out[-3000:]
    assert f"{KEPT + 1} verified, 0 failed" in out, out[-500:]
    assert f"sequence 1-{KEPT} ({KEPT} runs that ended before" in out, out[-500:]


def _count(path: Path, pattern: tuple[str | None, str, str | None]) -> int:
    store = pyoxigraph.Store.read_only(str(path))
    subject, predicate, obj = pattern
    found = sum(
        1
        for _ in store.quads_for_pattern(
            None if subject is None else pyoxigraph.NamedNode(subject),
            pyoxigraph.NamedNode(predicate[1:-1]),
            None if obj is None else pyoxigraph.NamedNode(obj[1:-1]),
        )
    )
    del store
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("signed")
    write_signed_runs(OxigraphStoreExporter(root / "store"), root / "keys")
    return root


@pytest.fixture
def signed(built: Path, tmp_path: Path) -> Iterator[Path]:
    """A copy of the 600 signed runs (store, keys, checkpoint file) for one test."""
    root = tmp_path / "signed"
    shutil.copytree(built, root)
    yield root


@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_prune_killed_half_way_is_finished_by_the_next(signed: Path, point: str | float) -> None:
    store, keys = signed / "store", signed / "keys"
    where = ["--store", str(store)]
    kill_prune(
        where,
        keys,
        point,
        runs_left=lambda: _count(store, (None, O.runStartedAt, None)),
        intents=lambda: _count(store, (None, RDF_TYPE, O.PruneIntent)),
    )
    left = unfinished(EmbeddedBackend(store), GRAPH)  # stored with the tombstone
    assert [len(each.traces) for each in left] == [KEPT], "killed after the removal"
    check_finished(where, where, keys, point)
    assert _count(store, (None, RDF_TYPE, O.PruneIntent)) == 0


def test_a_dry_run_says_it_would_finish_an_unfinished_prune(signed: Path) -> None:
    store, keys = signed / "store", signed / "keys"
    where = ["--store", str(store)]
    kill_prune(
        where,
        keys,
        0.5,
        runs_left=lambda: _count(store, (None, O.runStartedAt, None)),
        intents=lambda: _count(store, (None, RDF_TYPE, O.PruneIntent)),
    )
    code, out = run(["prune", "--keep", "36500d", "--dry-run", *where], keys)
    assert code == 0, out
    assert f"would finish an interrupted prune (before {CUTOFF[:10]}" in out, out
    assert f"of its {KEPT} traces would be removed" in out, out
    assert _count(store, (None, RDF_TYPE, O.PruneIntent)) == 1  # a dry run removes nothing
