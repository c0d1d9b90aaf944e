"""Exporters: the embedded store and files, read back with real parsers."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pyoxigraph
import pytest
import rdflib

from otel_prov import ProvRecord, map_spans
from otel_prov.exporters import (
    DEFAULT_GRAPH,
    ExportResult,
    FileExporter,
    OxigraphStoreExporter,
    SparqlUpdateExporter,
)
from otel_prov.exporters.oxigraph._exporter import _held_by_another
from otel_prov.prov._rdf import PREFIXES
from otel_prov.setup._destination import destination_from_settings
from tests.session_tree import known_session


def _store_quads(path: Path) -> set[pyoxigraph.Quad]:
    store = pyoxigraph.Store.read_only(str(path))
    return set(store.quads_for_pattern(None, None, None))


def test_embedded_store_round_trip_in_the_provenance_graph(tmp_path: Path) -> None:
    record = map_spans(known_session())
    exporter = OxigraphStoreExporter(tmp_path / "store")
    assert exporter.export([record]) is ExportResult.SUCCESS
    exporter.shutdown()
    quads = _store_quads(tmp_path / "store")
    assert len(quads) == len(record.triples)
    assert {q.graph_name.value for q in quads} == {DEFAULT_GRAPH}


def test_re_exporting_the_same_session_adds_nothing(tmp_path: Path) -> None:
    record = map_spans(known_session())
    exporter = OxigraphStoreExporter(tmp_path / "store", graph="urn:my:graph")
    for _ in range(3):
        assert exporter.export([record]) is ExportResult.SUCCESS
    exporter.shutdown()
    quads = _store_quads(tmp_path / "store")
    assert len(quads) == len(record.triples)
    assert {q.graph_name.value for q in quads} == {"urn:my:graph"}


def test_graph_from_environment_and_bad_graph_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_PROV_GRAPH", "urn:from:env")
    exporter = FileExporter(tmp_path / "out.nq")
    exporter.export([map_spans(known_session())])
    assert "<urn:from:env> ." in (tmp_path / "out.nq").read_text()
    with pytest.raises(ValueError, match="OTEL_PROV_GRAPH"):
        FileExporter(tmp_path / "out.nq", graph="not a graph")


def test_a_second_writer_parks_its_batches_and_the_holder_loads_them(tmp_path: Path) -> None:
    record = map_spans(known_session())
    first = OxigraphStoreExporter(tmp_path / "store")
    second = OxigraphStoreExporter(tmp_path / "store")  # RocksDB's lock is taken: no error
    assert first.holds_store and not second.holds_store
    assert second.export([record]) is ExportResult.SUCCESS
    (parked,) = (tmp_path / "store.parked").glob("*.nq")
    assert second.waiting() == 1 and not second.force_flush()  # kept, not stored yet
    assert first.force_flush()  # loads what the other parked
    assert first.waiting() == 0
    assert not parked.exists()
    second.shutdown()
    first.shutdown()
    assert len(_store_quads(tmp_path / "store")) == len(record.triples)


def test_an_idle_holder_loads_what_another_process_parked_within_a_second(
    tmp_path: Path,
) -> None:
    """A holder that runs no session (gunicorn's master after ``--preload``, say) still
    loads its workers' batches: its processor's worker ticks the exporter every cycle."""
    from otel_prov import ProvSpanProcessor

    holder = OxigraphStoreExporter(tmp_path / "store", ingest_interval=0.05)
    processor = ProvSpanProcessor(holder, schedule_delay=0.02)
    parker = OxigraphStoreExporter(tmp_path / "store")
    record = map_spans(known_session())
    assert parker.export([record]) is ExportResult.SUCCESS and parker.waiting() == 1
    deadline = time.monotonic() + 10
    while holder.waiting() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert holder.waiting() == 0
    assert _count(holder.held_store()) == len(record.triples)
    parker.shutdown()
    processor.shutdown()


def test_the_next_process_to_get_the_store_loads_what_was_parked(tmp_path: Path) -> None:
    record = map_spans(known_session())
    first = OxigraphStoreExporter(tmp_path / "store")
    second = OxigraphStoreExporter(tmp_path / "store", ingest_interval=3600)
    first.shutdown()  # the holder goes away before the batch is parked
    assert second.export([record]) is ExportResult.SUCCESS  # not looked at again yet: parked
    assert second.waiting() == 1
    assert second.force_flush()  # takes the free store, and loads what waits
    assert second.holds_store and second.waiting() == 0
    second.shutdown()
    assert len(_store_quads(tmp_path / "store")) == len(record.triples)


def test_export_after_shutdown_fails_without_raising(tmp_path: Path) -> None:
    exporter = OxigraphStoreExporter(tmp_path / "store")
    exporter.shutdown()
    assert exporter.export([map_spans(known_session())]) is ExportResult.FAILURE


@pytest.mark.parametrize(
    ("suffix", "rdflib_format", "has_graph"),
    [
        (".nq", "nquads", True),
        (".trig", "trig", True),
        (".nt", "nt", False),
        (".ttl", "turtle", False),
    ],
)
def test_file_formats_by_suffix_parse_back(
    tmp_path: Path, suffix: str, rdflib_format: str, has_graph: bool
) -> None:
    record = map_spans(known_session())
    path = tmp_path / f"prov{suffix}"
    exporter = FileExporter(path)
    assert exporter.export([record]) is ExportResult.SUCCESS
    assert exporter.export([record]) is ExportResult.SUCCESS  # appended, still parseable
    dataset = rdflib.Dataset()
    dataset.parse(path, format=rdflib_format)
    triples = {(s, p, o) for s, p, o, _ in dataset.quads((None, None, None, None))}
    assert len(triples) == len(record.triples)
    if has_graph:
        graphs = {str(g) for _, _, _, g in dataset.quads((None, None, None, None))}
        assert graphs == {DEFAULT_GRAPH}
    if suffix in (".trig", ".ttl"):
        text = path.read_text()
        for prefix in ("prov", "oprov", "xsd"):
            assert f"@prefix {prefix}: <{PREFIXES[prefix]}>" in text


def test_unknown_suffix_is_refused_with_the_choices(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\.nq, \.nt, \.trig, \.ttl"):
        FileExporter(tmp_path / "prov.json")


def test_a_reader_of_the_store_this_process_writes_sees_each_batch_at_once(
    tmp_path: Path,
) -> None:
    """The import path reads through the writer's own handle: a read-only open is a
    snapshot (and fails beside a writer that compacts)."""
    destination = destination_from_settings(store=tmp_path / "store")
    count = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"
    assert destination.reader.query(count).rows == [{"n": "0"}]
    record = map_spans(known_session())
    assert destination.exporter.export([record]) is ExportResult.SUCCESS
    assert destination.reader.query(count).rows == [{"n": str(len(record.triples))}]
    destination.exporter.shutdown()
    # Without a writer in this process, it reads the store read-only.
    assert destination.reader.query(count).rows == [{"n": str(len(record.triples))}]


class _FlushesSeen:
    """The embedded store as the exporter uses it, counting the times it is written out."""

    def __init__(self, store: pyoxigraph.Store) -> None:
        self.store = store
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        self.store.flush()

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)


@pytest.mark.parametrize("policy", ["never", "always"])
def test_force_flush_writes_the_memtables_out_only_when_every_write_is_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, policy: str
) -> None:
    """A committed load is in RocksDB's own log, which a killed process keeps and a
    read-only opening replays; writing the memtables out (100-300 ms on a busy disk) is the
    fsync of ``OTEL_PROV_WAL_FSYNC=always`` only."""
    import subprocess
    import sys

    monkeypatch.setenv("OTEL_PROV_WAL_FSYNC", policy)
    record = map_spans(known_session())
    # Stored in the call, so readable elsewhere at once.
    exporter = OxigraphStoreExporter(tmp_path / "store")
    loads = _FlushesSeen(exporter.held_store())  # type: ignore[arg-type]
    exporter._store = loads  # type: ignore[assignment]
    assert exporter.export([record]) is ExportResult.SUCCESS
    assert exporter.force_flush()
    assert loads.flushes == (1 if policy == "always" else 0)
    reader = (
        "import pyoxigraph, sys; "
        "store = pyoxigraph.Store.read_only(sys.argv[1]); "
        "print(len(list(store.quads_for_pattern(None, None, None))))"
    )
    seen = subprocess.run(
        [sys.executable, "-c", reader, str(tmp_path / "store")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(seen.stdout) == len(set(record.triples))  # another process reads it at once
    exporter.shutdown()


def _count(store: pyoxigraph.Store | None) -> int:
    assert store is not None
    return len(list(store.quads_for_pattern(None, None, None)))


def test_the_holder_stores_each_batch_in_the_export_and_reads_its_own_writes(
    tmp_path: Path,
) -> None:
    """The processor's worker stores the batch itself, as the SDK's batch processor
    exports: nothing is parked, and a read through the holder's handle sees it."""
    record = map_spans(known_session())
    exporter = OxigraphStoreExporter(tmp_path / "store", ingest_interval=3600)
    assert exporter.export([record]) is ExportResult.SUCCESS
    assert exporter.waiting() == 0
    assert _count(exporter.held_store()) == len(record.triples)
    exporter.shutdown()


_KILLED_AFTER_EXPORT = """
import os, signal, sys
import otel_prov.exporters.oxigraph._exporter as oxigraph
from otel_prov import map_spans
from tests.session_tree import known_session

exporter = oxigraph.OxigraphStoreExporter(sys.argv[1])
assert exporter.export([map_spans(known_session())]) is oxigraph.ExportResult.SUCCESS
assert exporter.force_flush()
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_batch_exported_before_the_process_is_killed_is_in_the_store(tmp_path: Path) -> None:
    """``force_flush`` does not write the memtables out (see its docstring): a committed
    load is in RocksDB's own log, which the next opening replays."""
    import signal
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _KILLED_AFTER_EXPORT, str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    record = map_spans(known_session())
    exporter = OxigraphStoreExporter(tmp_path / "store")
    assert exporter.waiting() == 0
    assert _count(exporter.held_store()) == len(record.triples)
    exporter.shutdown()


def test_a_reader_opened_in_the_writing_process_reads_its_batches_at_once(tmp_path: Path) -> None:
    """``open_store`` after ``force_flush`` in the agent's own process (a notebook, say)
    reads through the exporter's handle: a read-only open beside an active writer fails
    while the writer compacts."""
    from otel_prov.read import open_store

    record = map_spans(known_session())
    exporter = OxigraphStoreExporter(tmp_path / "store", ingest_interval=3600)
    assert exporter.export([record]) is ExportResult.SUCCESS
    assert exporter.force_flush()
    assert [s.trace_id for s in open_store(tmp_path / "store").sessions().sessions] == [
        f"{record.trace_id}"
    ]
    exporter.shutdown()


def test_a_write_the_disk_refuses_fails_that_export_and_the_store_takes_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """After a write its disk refused, a RocksDB handle refuses every later one, even once
    there is room again: the exporter opens the store afresh."""
    import dataclasses

    import otel_prov.exporters.oxigraph._exporter as oxigraph

    write, refusals = oxigraph._write, [1]

    def refuse_once(store: pyoxigraph.Store, nquads: bytes) -> bool:
        if refusals:
            refusals.pop()
            raise OSError("IO error: No space left on device")  # as RocksDB says it
        return write(store, nquads)

    monkeypatch.setattr(oxigraph, "_write", refuse_once)
    first = map_spans(known_session())
    second = map_spans([dataclasses.replace(s, trace_id=0xBEEF) for s in known_session()])
    exporter = OxigraphStoreExporter(tmp_path / "store", ingest_interval=0)
    assert exporter.export([first]) is ExportResult.FAILURE
    assert "cannot write provenance to" in caplog.text
    assert not exporter.holds_store  # the broken handle is gone
    assert exporter.export([second]) is ExportResult.SUCCESS
    assert exporter.holds_store and exporter.waiting() == 0  # opened again, and stored
    exporter.shutdown()
    assert len(_store_quads(tmp_path / "store")) == len(second.triples)


def test_a_reader_finds_the_exporter_that_holds_the_store_among_several(tmp_path: Path) -> None:
    """A second exporter of the same store in one process (it parks) does not hide the
    handle of the first, which holds the store."""
    from otel_prov.read import open_store

    record = map_spans(known_session())
    holder = OxigraphStoreExporter(tmp_path / "store", ingest_interval=3600)
    parker = OxigraphStoreExporter(tmp_path / "store", ingest_interval=3600)
    assert holder.holds_store and not parker.holds_store
    assert holder.export([record]) is ExportResult.SUCCESS
    assert len(open_store(tmp_path / "store").sessions().sessions) == 1
    parker.shutdown()
    holder.shutdown()


def _many_quads(index: int, size: int) -> ProvRecord:
    """A record of about ``size`` bytes of N-Quads shaped as a run's: many short quads."""
    trace = f"{index:032x}"
    triples = []
    for n in range(size // 900):
        span = f"<urn:otel-prov:{trace}:{n:016x}>"
        triples += [
            (span, "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", "<urn:otel-prov:ToolCall>"),
            (span, "<http://www.w3.org/2000/01/rdf-schema#label>", '"execute_tool get_weather"'),
            (span, "<https://w3id.org/otel-prov/ns#spanId>", f'"{n:016x}"'),
            (span, "<https://w3id.org/otel-prov/ns#contentHash>", f'"sha256:{index:032x}{n:032x}"'),
            (span, "<http://www.w3.org/ns/prov#value>", f'"Paris: 18 °C {n}"'),
        ]
    return ProvRecord(trace, triples[0][0], tuple(triples))


def _resident_bytes() -> int:
    """This process's resident memory."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_the_store_writes_out_what_it_loaded_every_few_megabytes(tmp_path: Path) -> None:
    """RocksDB keeps every load in memory, and in a log beside the store, until it writes
    its memtables out, and pyoxigraph bounds neither: an agent's process holding the store
    grew by about 150 KB a session (1.6 GB after 10,000 sessions), a receiver's as well."""
    from otel_prov.exporters.oxigraph._exporter import UNFLUSHED_MAX

    exporter = OxigraphStoreExporter(tmp_path / "store")
    size = 200_000  # each batch stored in a transaction, as an agent's are
    records = [_many_quads(index, size) for index in range(4 * UNFLUSHED_MAX // size)]
    memory = []
    for index, record in enumerate(records):
        assert exporter.export([record]) is ExportResult.SUCCESS
        if index in (len(records) // 4, len(records) - 1):
            memory.append(_resident_bytes())
    # Three bounds' worth more loaded: about 135 MB more held when nothing is written out.
    assert memory[1] - memory[0] < 4 * UNFLUSHED_MAX
    assert _count(exporter.held_store()) == sum(len(record.triples) for record in records)
    exporter.shutdown()


def test_a_writer_waiting_for_the_store_leaves_few_info_logs(tmp_path: Path) -> None:
    """Every try to open a store another process holds makes RocksDB rotate its info log
    (``LOG.old.<time>``); at its limit of 1,000, processes opening at once raced to delete
    the same file and ``configure()`` raised (the hostile review: 999 files, 20 MB, after
    36 s of three agents on one store)."""
    holder = pyoxigraph.Store(str(tmp_path / "store"))
    waiting = OxigraphStoreExporter(tmp_path / "store", ingest_interval=0.0)
    for _ in range(40):
        assert waiting.export([map_spans(known_session())]) is ExportResult.SUCCESS  # parked
    old_logs = list((tmp_path / "store").glob("LOG.old.*"))
    assert len(old_logs) <= 10, len(old_logs)
    waiting.shutdown()
    del holder


def test_the_info_log_race_is_another_writer_not_a_broken_store() -> None:
    raced = OSError(
        "IO error: No such file or directory: While unlink() file: store/LOG.old.17: "
        "No such file or directory"
    )
    assert _held_by_another(raced)
    assert not _held_by_another(OSError("IO error: No space left on device"))


@pytest.mark.parametrize("failures", [1, 65, 1_100, 100_000])
def test_a_store_down_for_thousands_of_tries_keeps_a_bounded_retry_delay(
    failures: int, tmp_path: Path
) -> None:
    """Found in the suite's own output: after some 1,100 failed sends in a row the sender
    thread failed every step with ``OverflowError`` (``2 ** 1100`` as a float)."""
    from otel_prov.exporters.sparql._client import Answer, Outcome

    exporter = SparqlUpdateExporter(
        "http://127.0.0.1:9/update",
        spool_dir=tmp_path / "spool",
        retry_initial_delay=1.0,
        retry_max_delay=30.0,
    )
    try:
        exporter._failures = failures - 1
        before = time.monotonic()
        exporter._failed(Answer(Outcome.RETRY, "store down"))
        assert 0 < exporter._retry_at - before <= 30.0 * 1.5
    finally:
        exporter.shutdown(timeout_millis=0)
