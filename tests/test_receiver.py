"""The receiver's core in process, on the embedded store: what the transports hand it."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToDict

from benchmarks.workload import session_spans
from otel_prov.exporters._base import graph_term
from otel_prov.exporters.oxigraph._exporter import OxigraphStoreExporter
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.ingest.receiver import Receiver, ReceiverSettings, RequestRefusedError
from otel_prov.processing._pipeline import WritePipeline
from tests.receiver import quads
from tests.test_import import _hex_ids
from tests.test_otlp_proto import encode_request


def receiver(tmp_path: Path, **settings: int) -> Receiver:
    store = tmp_path / "store"
    started = Receiver(
        ReceiverSettings(data_dir=tmp_path / "data", trace_idle=60, fsync=False, **settings),
        pipeline=WritePipeline.from_settings(
            OxigraphStoreExporter(store), graph=graph_term(None), blob_dir=tmp_path / "blobs"
        ),
        reader=lambda: EmbeddedBackend(store),
    )
    started.start()
    return started


def test_the_same_spans_as_protobuf_or_json_store_the_same_triples(tmp_path: Path) -> None:
    spans = [span for index in range(3) for span in session_spans(index, iterations=2)]
    request = encode_request(spans)
    as_proto, as_json = receiver(tmp_path / "p"), receiver(tmp_path / "j")
    assert as_proto.accept(request.SerializeToString(), "protobuf", "t").spans == len(spans)
    body = json.dumps(_hex_ids(MessageToDict(request))).encode()
    assert as_json.accept(body, "json", "t").rejected == 0
    assert as_proto.drain() and as_json.drain()
    stored = quads(tmp_path / "p" / "store")
    assert len(stored) > 3 * 100 and stored == quads(tmp_path / "j" / "store")


def test_past_the_spans_per_trace_limit_a_trace_is_mapped_early_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    big, small = session_spans(1, iterations=3), session_spans(2, iterations=1)
    taking = receiver(tmp_path, max_spans_per_trace=5)
    taking.accept(encode_request(big + small).SerializeToString(), "protobuf", "t")
    with caplog.at_level(logging.WARNING):
        taking._cycle(drain=False)  # the worker's next cycle, without waiting for it
        assert taking.drain()
    assert "limit max_spans_per_trace (5) hit: 1 trace(s) mapped before they went idle" in (
        caplog.text
    )
    assert "otel_prov_receiver_limit_hits_total 1\n" in taking.metrics()


def test_a_backlog_past_max_pending_spans_is_refused_not_dropped(tmp_path: Path) -> None:
    spans = session_spans(1, iterations=3)
    taking = receiver(tmp_path, max_pending_spans=len(spans))
    taking.accept(encode_request(spans).SerializeToString(), "protobuf", "t")
    with pytest.raises(RequestRefusedError) as refused:
        taking.accept(encode_request(session_spans(2)).SerializeToString(), "protobuf", "t")
    assert refused.value.overloaded and refused.value.retry_after > 0
    assert "otel_prov_receiver_spans_refused_total 16\n" in taking.metrics()
    assert taking.drain()
