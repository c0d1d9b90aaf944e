"""The write engine: every writer maps, seals and exports through one ``WritePipeline``.

The span processor in an agent's process, ``otel-prov receive``, ``otel-prov import``,
``annotate`` and ``prune`` all write provenance, and used to each run a collect, map,
seal and export cycle of their own, two of them with streaming of their own: a defect
fixed on one path stayed on the others (a streamed run's start recorded twice by
``receive``).  What differs between them is *when* a group of spans is ready (the
assembler of the processor, the receiver's trace buffer, a file read whole), not what is
done with it, which is here:

* the record preparation (redaction, blobs, the content policy: ``RecordPreparer``), the
  writer's chain (sealer, key, checkpoints: ``ChainWriter``) and the price table;
* :meth:`WritePipeline.seal`: groups of spans mapped and sealed, the final entry of a
  streamed run among them (with what its streamed entries wrote and it does not say
  taken back: ``ProvRecord.retracted``); going on from what the store holds of the same
  traces when told it (:meth:`WritePipeline.continue_stored`: an import again, a
  receiver after a restart);
* :meth:`WritePipeline.stream`: the new steps of runs still open, each cycle a window of
  the run (``prov._stream_window``) and not the run so far, so that the work for a run
  of n steps grows with n, sealed as the next entries of the chain;
* :meth:`WritePipeline.export`: records to the exporter in batches.

Called from one thread at a time (each writer's worker).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from otel_prov._settings import env_bool
from otel_prov.environment_variables import OTEL_PROV_STREAM
from otel_prov.exporters._base import ExportResult, ProvExporter
from otel_prov.exporters._stored import StoredRuns, StoredSession
from otel_prov.processing._chain_writer import ChainWriter
from otel_prov.processing._preparer import RecordPreparer
from otel_prov.processing._price_file import prices_from_settings
from otel_prov.prov._chain import Tombstone
from otel_prov.prov._iris import activity_iri
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._prices import PriceTable
from otel_prov.prov._rdf import Triple, iri
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._span_record import SpanRecord
from otel_prov.prov._stream_window import RunWindow, kept

__all__ = ["STREAM_DEFAULT", "OpenRun", "WritePipeline"]

_logger = logging.getLogger(__name__)

_PROBLEMS_LOGGED = 5
_NO_TRACE = "0" * 32
"""The trace id of a record of no trace (a tombstone)."""

STREAM_DEFAULT = True
"""Whether a writer streams the steps of runs still open when ``OTEL_PROV_STREAM`` is unset."""


@dataclass(frozen=True)
class OpenRun:
    """A run still open, with spans that ended since the last cycle."""

    session: int
    """The span id of its outermost session (a snapshot of it is in ``known``)."""
    new: Sequence[int]
    """The ids of the spans that ended since the last cycle."""
    known: Mapping[int, SpanRecord]
    """Every span of its trace the writer holds, the open ones as snapshots."""


class WritePipeline:
    """See the module documentation.  ``stream``: whether :meth:`stream` seals anything
    (an exporter that cannot take triples back gets no streamed entries: the end of a
    streamed run may have to).  ``graph`` (an IRI term): the graph every record goes to,
    ``None`` for the exporter's own (a tenant's receiver names its tenant's)."""

    def __init__(
        self,
        exporter: ProvExporter,
        *,
        chain: ChainWriter,
        prepare: RecordPreparer,
        prices: PriceTable | None = None,
        stream: bool = False,
        batch_size: int = 64,
        graph: str | None = None,
    ) -> None:
        self.exporter = exporter
        self.chain = chain
        self.prepare = prepare
        self.prices = prices
        self.streams = stream and exporter.can_retract
        if stream and not exporter.can_retract:
            _logger.info(
                "%s cannot take back what a run's streamed steps wrote: its runs are "
                "stored when they end",
                exporter.describe(),
            )
        self.batch_size = batch_size
        self.graph = graph
        self.counts = Counter[str]()
        """``problems`` (attributes or spans mapped only partly), ``steps`` (streamed
        entries sealed)."""
        self._windows: dict[int, RunWindow] = {}
        """Open runs streamed so far, by the span id of their session."""

    @classmethod
    def from_settings(
        cls,
        exporter: ProvExporter,
        *,
        chain: ChainWriter | None = None,
        graph: str | None = None,
        stream: bool | None = None,
        prices: str | os.PathLike[str] | None = None,
        content: bool | None = None,
        blob_dir: str | os.PathLike[str] | None = None,
        blob_threshold: int | None = None,
        batch_size: int = 64,
    ) -> WritePipeline:
        """The arguments, else their ``OTEL_PROV_*`` variables (``OTEL_PROV_STREAM``,
        ``OTEL_PROV_PRICES``, ``OTEL_PROV_BLOB_*``, the capture switches), else the
        defaults; ``chain``: else a new chain, unsigned."""
        return cls(
            exporter,
            chain=chain if chain is not None else ChainWriter(signer=None),
            prepare=RecordPreparer.from_settings(
                blob_dir=blob_dir, blob_threshold=blob_threshold, content=content
            ),
            prices=prices_from_settings(prices),
            stream=stream if stream is not None else env_bool(OTEL_PROV_STREAM, STREAM_DEFAULT),
            batch_size=batch_size,
            graph=graph,
        )

    def restart(self) -> None:
        """A new chain and no open run (a forked child: the parent's are the parent's)."""
        self.chain.restart()
        self._windows = {}

    # --- sealing ---------------------------------------------------------------------------
    def seal(
        self,
        groups: Iterable[Sequence[SpanRecord]],
        now_ns: int,
        *,
        open_traces: Collection[int] | None = None,
    ) -> list[ProvRecord]:
        """Map and seal each group (spans of one trace, prepared), each bundle the next
        entry of the chain.  ``open_traces``: the traces with a span still open (``None``:
        not known); a group of none of them is whole, and the sealer need not remember it
        for late spans.  A streamed run's record is its final entry."""
        records = []
        for group in groups:
            whole = open_traces is not None and group[0].trace_id not in open_traces
            sealer = self.chain.sealer
            opened = [s for s in group if self._windows.pop(s.span_id, None) is not None]
            # A streamed run's final entry hashes its content itself (Sealer.streams).
            streamed = {
                s.span_id for s in opened if sealer.streams(activity_iri(s.trace_id, s.span_id))
            }
            mapped = map_spans(group, prices=self.prices, unbundled=streamed)
            record = sealer.seal(mapped, now_ns, whole=whole)
            self._report(record)
            records.append(self._in_graph(record))
        return records

    def continue_stored(self, sessions: Iterable[StoredSession], stored: StoredRuns) -> None:
        """Go on from what the store holds of these sessions (``exporters._stored``): a
        sealed one is revised by what the next record adds to it, never sealed again; a
        streamed one, still open, gets its next entries after the stored ones, and its
        end takes back what they wrote and it does not say."""
        sealer = self.chain.sealer
        for found in sessions:
            session, bundle = iri(found.session), iri(found.bundle)
            if found.streamed:
                sealer.continue_stream(session, bundle, found.revision, stored.content(found))
            else:
                sealer.continue_session(session, bundle, found.revision, stored.content(found))

    def end_abandoned(
        self, stored: StoredRuns, now_ns: int, *, silent_ns: int, gone: Collection[str]
    ) -> list[ProvRecord]:
        """The final entries of the runs the store holds open whose writer is gone: its
        chain among ``gone`` (its lock on this machine freed, ``_liveness``), or its last
        entry older than ``silent_ns``.  Each run ends as it stands, ``incomplete``
        (``Sealer.seal_abandoned``), an entry of this writer's chain; never a run of its
        own chain."""
        records = []
        sealer = self.chain.sealer
        for run in stored.open_runs():
            if run.chain == sealer.chain or sealer.knows(iri(run.stored.session)):
                continue  # its own, or one it ended already (from a dead process's log)
            if run.chain not in gone and now_ns - run.last_ns < silent_ns:
                continue
            records.append(self.end_run(run.stored, stored.content(run.stored), now_ns))
        return records

    def end_run(
        self,
        found: StoredSession,
        stored: Sequence[Triple],
        now_ns: int,
        known: Sequence[Triple] = (),
    ) -> ProvRecord:
        """The final entry of the streamed run ``found`` whose writer is gone, from what the
        store holds of it and what else is ``known``: ``Sealer.seal_abandoned``."""
        record = self.chain.sealer.seal_abandoned(
            iri(found.session), iri(found.bundle), found.revision, stored, now_ns, known=known
        )
        return self._in_graph(record)

    def seal_made(self, records: Iterable[ProvRecord], now_ns: int) -> list[ProvRecord]:
        """Records made without spans (an evaluation added after a run,
        ``prov._annotation``), each bundle sealed as the next entry of the chain."""
        return [self._in_graph(self.chain.sealer.seal(record, now_ns)) for record in records]

    def seal_tombstones(self, tombstones: Iterable[Tombstone]) -> list[ProvRecord]:
        """What ``prune`` leaves of the runs it removes: each tombstone the next entry of
        the chain, as a record of its own."""
        records = []
        for tombstone in tombstones:
            triples = self.chain.sealer.tombstone(tombstone)
            records.append(ProvRecord(_NO_TRACE, triples[0][0], tuple(triples), graph=self.graph))
        return records

    def stream(self, runs: Iterable[OpenRun], now_ns: int) -> list[ProvRecord]:
        """The next streamed entry of each run, from a window around its new spans; none
        for a run whose window adds nothing (or when this pipeline does not stream)."""
        if not self.streams:
            return []
        records = []
        for run in runs:
            window = self._windows.get(run.session)
            if window is None:
                window = self._windows[run.session] = RunWindow(run.session)
            spans = window.window(run.new, run.known)
            if spans is None:
                continue
            mapped = map_spans(
                spans.spans,
                prices=self.prices,
                step_numbers=window.step_numbers,
                unbundled=(run.session,),
            )
            triples = kept(mapped.triples, spans.dirty)
            window.learn(triples)
            sealed = self.chain.sealer.seal_step(
                dataclasses.replace(mapped, triples=tuple(triples), problems=()), now_ns
            )
            if sealed is not None:
                self.counts["steps"] += 1
                records.append(self._in_graph(sealed))
        return records

    def _report(self, record: ProvRecord) -> None:
        if not record.problems:
            return
        self.counts["problems"] += len(record.problems)
        _logger.warning(
            "trace %s: %d span attribute(s) converted only partly: %s",
            record.trace_id,
            len(record.problems),
            "; ".join(record.problems[:_PROBLEMS_LOGGED]),
        )

    def _in_graph(self, record: ProvRecord) -> ProvRecord:
        if self.graph is None or record.graph is not None:
            return record
        return dataclasses.replace(record, graph=self.graph)

    # --- exporting -------------------------------------------------------------------------
    def export(self, records: Sequence[ProvRecord]) -> Iterator[tuple[Sequence[ProvRecord], bool]]:
        """Hand ``records`` to the exporter ``batch_size`` at a time: each batch, and
        whether it was stored.  An exporter that raises (against its contract) failed."""
        for start in range(0, len(records), self.batch_size):
            batch = records[start : start + self.batch_size]
            yield batch, self.export_batch(batch)

    def store(self, records: Sequence[ProvRecord], now_ns: int) -> bool:
        """What a command that writes once does: ``records`` exported, the chain's head
        checkpointed, the exporter flushed; whether it all went."""
        exported = all(stored for _, stored in self.export(records))
        return (
            exported
            and self.chain.checkpoint(self.exporter, now_ns, graph=self.graph)
            and self.exporter.force_flush()
        )

    def export_batch(self, batch: Sequence[ProvRecord]) -> bool:
        try:
            return self.exporter.export(batch) is ExportResult.SUCCESS
        except Exception:
            _logger.exception("provenance exporter raised")
            return False
