"""A batch of mapped traces handed to the destination: in parts as they are mapped to one
that stores in the background, whole to one that stores in the call, never on top of a
batch the store did not take."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from benchmarks.workload import session_spans
from otel_prov.exporters._base import ExportResult, ProvExporter, graph_term
from otel_prov.exporters.oxigraph._exporter import OxigraphStoreExporter
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.ingest.receiver import Receiver, ReceiverSettings
from otel_prov.ingest.receiver._handover import Handover
from otel_prov.processing._pipeline import WritePipeline
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._record import ProvRecord
from tests.receiver import quads
from tests.test_otlp_proto import encode_request


class Queued(OxigraphStoreExporter):
    """The embedded store behind a queue, as the SPARQL exporter's spool is: ``export``
    keeps the records and returns, ``force_flush`` stores what was kept.  Each export
    call's records are remembered as one part, with whether the worker was still mapping."""

    delivers_in_background = True

    def __init__(self, path: Path, mapping: threading.Event) -> None:
        super().__init__(path)
        self._mapping = mapping
        self.kept: list[ProvRecord] = []
        self.parts: list[tuple[int, bool]] = []
        self.refuse = False

    def export(self, records: Sequence[ProvRecord]) -> ExportResult:
        if self.refuse:
            return ExportResult.FAILURE
        self.parts.append((len(records), self._mapping.is_set()))
        self.kept.extend(records)
        return ExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        kept, self.kept = self.kept, []
        return (not kept or super().export(kept) is ExportResult.SUCCESS) and super().force_flush(
            timeout_millis
        )


def _receiver(tmp_path: Path, exporter: ProvExporter) -> Receiver:
    started = Receiver(
        ReceiverSettings(data_dir=tmp_path / "data", trace_idle=60, fsync=False),
        pipeline=WritePipeline.from_settings(
            exporter, graph=graph_term(None), blob_dir=tmp_path / "blobs"
        ),
        reader=lambda: EmbeddedBackend(tmp_path / "store", writer=exporter.held_store),  # type: ignore[attr-defined]
    )
    started.start()
    return started


def test_a_destination_storing_in_the_background_gets_a_batch_in_parts_while_it_is_mapped(
    tmp_path: Path,
) -> None:
    spans = [span for index in range(200) for span in session_spans(index, iterations=3)]
    mapping = threading.Event()
    exporter = Queued(tmp_path / "queued" / "store", mapping)
    taking = _receiver(tmp_path / "queued", exporter)
    taking.accept(encode_request(spans).SerializeToString(), "protobuf", "t")
    original = taking._map

    def map_watched(*args: object) -> object:
        mapping.set()
        try:
            return original(*args)  # type: ignore[arg-type]
        finally:
            mapping.clear()

    taking._map = map_watched  # type: ignore[method-assign]
    assert taking.drain()
    assert len(exporter.parts) > 1 and exporter.parts[0][1], exporter.parts
    assert sum(count for count, _ in exporter.parts) == 200 + 1  # and the chain's checkpoint

    whole = OxigraphStoreExporter(tmp_path / "whole" / "store")
    in_one = _receiver(tmp_path / "whole", whole)
    in_one.accept(encode_request(spans).SerializeToString(), "protobuf", "t")
    assert in_one.drain()
    exporter.shutdown()
    whole.shutdown()
    assert quads(tmp_path / "queued" / "store") == quads(tmp_path / "whole" / "store")


def _records(count: int) -> list[ProvRecord]:
    return [map_spans(session_spans(index, iterations=1)) for index in range(count)]


class Kept(ProvExporter):
    delivers_in_background = True

    def __init__(self, *, refuse_after: int | None = None) -> None:
        self.parts: list[int] = []
        self.flushed = 0
        self._refuse_after = refuse_after

    def export(self, records: Sequence[ProvRecord]) -> ExportResult:
        if self._refuse_after is not None and len(self.parts) >= self._refuse_after:
            return ExportResult.FAILURE
        self.parts.append(len(records))
        return ExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        self.flushed += 1
        return True


@pytest.mark.parametrize("before", [False, "raised"])
def test_nothing_is_handed_over_on_top_of_a_batch_the_store_did_not_take(
    before: bool | str,
) -> None:
    storing = ThreadPoolExecutor(1)
    exporter = Kept()
    after: Future[bool] = Future()
    if before == "raised":
        after.set_exception(OSError("store gone"))
    else:
        after.set_result(False)
    handover = Handover(storing, exporter, after=after, part_triples=1)
    handover.export(_records(3))
    assert handover.finish(1.0).result() is False
    assert exporter.parts == [] and exporter.flushed == 0
    storing.shutdown()


def test_a_part_not_taken_stops_the_parts_after_it_and_the_flush() -> None:
    storing = ThreadPoolExecutor(1)
    exporter = Kept(refuse_after=1)
    handover = Handover(storing, exporter, after=None, part_triples=1)
    for record in _records(3):
        handover.export([record])
    assert handover.finish(1.0).result() is False
    assert exporter.parts == [1] and exporter.flushed == 0
    storing.shutdown()


def test_an_abandoned_batch_hands_over_no_more_parts() -> None:
    storing = ThreadPoolExecutor(1)
    gate = threading.Event()
    storing.submit(gate.wait)  # the storing thread is busy with the batch before
    exporter = Kept()
    handover = Handover(storing, exporter, after=None, part_triples=1)
    handover.export(_records(2))
    handover.abandon()
    gate.set()
    assert handover.finish(1.0).result() is False
    assert exporter.parts == [] and exporter.flushed == 0
    storing.shutdown()


def test_a_destination_storing_in_the_call_gets_the_batch_in_one_call() -> None:
    storing = ThreadPoolExecutor(1)
    exporter = Kept()
    handover = Handover(storing, exporter, after=None, part_triples=None)
    for record in _records(3):
        handover.export([record])
    assert handover.finish(1.0).result() is True
    assert exporter.parts == [3] and exporter.flushed == 1
    storing.shutdown()
