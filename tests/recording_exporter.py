"""A ProvExporter that keeps what it receives, for processor tests (the interface is ours)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from otel_prov.exporters import ExportResult, ProvExporter
from otel_prov.prov._record import ProvRecord


class RecordingExporter(ProvExporter):
    def __init__(self, *, gate: threading.Event | None = None, fail: bool = False) -> None:
        self.records: list[ProvRecord] = []
        """The runs' records (a writer's checkpoints go to ``checkpoints``)."""
        self.checkpoints: list[ProvRecord] = []
        self.batches = 0
        self.shut_down = False
        self._gate = gate
        self._fail = fail
        self._lock = threading.Lock()

    def export(self, records: Sequence[ProvRecord]) -> ExportResult:
        if self._gate is not None:
            self._gate.wait()
        if self._fail:
            raise ConnectionError("store unreachable")
        runs = [r for r in records if not r.root.startswith("<urn:otel-prov:chain:")]
        with self._lock:
            self.checkpoints.extend(r for r in records if r not in runs)
            self.records.extend(runs)
            self.batches += 1 if runs else 0
        return ExportResult.SUCCESS

    def shutdown(self) -> None:
        self.shut_down = True

    def wait_for(self, count: int, timeout: float = 10.0) -> list[ProvRecord]:
        """Records once at least ``count`` arrived (the worker exports on its own thread)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.records) >= count:
                    return list(self.records)
            time.sleep(0.01)
        raise AssertionError(f"expected {count} records, got {len(self.records)}")
