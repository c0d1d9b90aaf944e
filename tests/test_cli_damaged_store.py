"""Writing to a damaged embedded store is a store error: one line on stderr and exit 2 when
it cannot open, as reading one is; never a traceback (issue 26, point 6).

The store is a real one, written by ``otel-prov demo``, then damaged on disk as a failing
disk or a careless copy damages it: RocksDB's table files cut short (found when the store
opens), or bytes of their data blocks flipped (found only when a write reads them).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from otel_prov.cli._exit import ExitCode
from tests.cli import run_cli, write_demo_store

TRACES = Path(__file__).parent / "data" / "traces.jsonl"


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store as a real run leaves it."""
    store = write_demo_store(tmp_path_factory.mktemp("damaged"))
    assert list(store.glob("*.sst")), "the demo's store has no table files to damage"
    return store


def _cut_short(store: Path) -> None:
    for table in store.glob("*.sst"):
        with table.open("r+b") as file:
            file.truncate(100)


def _flip_data_blocks(store: Path) -> None:
    """Flip bytes near the start of the first larger table (its first data block), leaving
    the footer and index the opening checks intact.

    One table, the first the store wrote: damage in every table also reaches the ones a
    query of the write path joins over, and pyoxigraph 0.5 then repeats the read's error
    without end while it collects the join (its memory grows until the kernel kills it: one
    run in five), an upstream defect no caller can stop; a write reads this table first."""
    table = min(t for t in store.glob("*.sst") if t.stat().st_size > 5000)
    data = bytearray(table.read_bytes())
    for offset in range(100, 3000, 50):
        data[offset] ^= 0xFF
    table.write_bytes(bytes(data))


def _park_a_batch(store: Path) -> None:
    """Something for ``flush`` to write: a batch another process parked beside the store."""
    parked = store.parent / f"{store.name}.parked"
    parked.mkdir(exist_ok=True)
    (parked / "00000000000000000001-1-000001.nq").write_text(
        "<urn:s> <urn:p> <urn:o> <urn:otel-prov:graph> .\n", encoding="utf-8"
    )


COMMANDS = {
    "import": ("import", str(TRACES)),
    "annotate": ("annotate", "demo-conversation", "--name", "correctness", "--score", "1"),
    "flush": ("flush",),
    "prune": ("prune", "--before", "2099-01-01"),
}


def _damaged(written: Path, tmp_path: Path, damage: Callable[[Path], None]) -> Path:
    store = tmp_path / "store"
    shutil.copytree(written, store)
    damage(store)
    _park_a_batch(store)
    return store


def _one_line_naming_the_damage(stderr: str, store: Path) -> None:
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("otel-prov: ") and "Corruption" in lines[0], lines[0]
    assert str(store) in lines[0]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_write_to_a_store_that_cannot_open_is_one_line_and_exit_2(
    written: Path, tmp_path: Path, command: str
) -> None:
    store = _damaged(written, tmp_path, _cut_short)
    result = run_cli(*COMMANDS[command], "--store", str(store))
    assert result.returncode == ExitCode.STORE_ERROR, (result.stdout, result.stderr)
    _one_line_naming_the_damage(result.stderr, store)


@pytest.mark.parametrize("command", ["import", "flush"])
def test_damage_found_while_writing_is_one_line_not_a_traceback(
    written: Path, tmp_path: Path, command: str
) -> None:
    """The store opens; a write, or writing the memtables out, reads a damaged block.
    What fails first varies from run to run, so each failure is a line of its own, and
    the command says it failed whichever it was (even when only writing the memtables out
    at the end failed, which no export result reports)."""
    store = _damaged(written, tmp_path, _flip_data_blocks)
    result = run_cli(*COMMANDS[command], "--store", str(store))
    assert result.returncode == ExitCode.STORE_ERROR, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    first, *_ = lines = result.stderr.splitlines()
    assert all(line.startswith("otel-prov: ") for line in lines), result.stderr
    assert "Corruption" in first and str(store) in first, first
