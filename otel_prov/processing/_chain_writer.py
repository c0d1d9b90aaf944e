"""A writer's chain in the imperative shell: its id, its key, and its checkpoints.

The pure :class:`~otel_prov.prov._sealer.Sealer` makes each bundle the next entry of a
chain; what it needs from outside is made here: a chain id that is new in every process
(and in a forked child: the parent's chain stays the parent's), the signing key read once
at start, and the checkpoints.  Every ``every`` entries or ``interval_s`` seconds, and at
shutdown, the chain's head is stated in a signed checkpoint, handed to the writer's
exporter (into the store) and appended to the checkpoint file (one line each, flushed and
fsynced: the file is what an auditor keeps out of the store's reach).  One class for the
processor, ``receive``, ``import`` and ``annotate``, so every writer chains, signs and
checkpoints alike.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from pathlib import Path

from otel_prov._repeated import RepeatedFailure
from otel_prov._settings import env_float, env_int, env_str
from otel_prov._signing import KeySigner
from otel_prov.environment_variables import (
    OTEL_PROV_CHECKPOINT_EVERY,
    OTEL_PROV_CHECKPOINT_FILE,
    OTEL_PROV_CHECKPOINT_INTERVAL,
    OTEL_PROV_SIGNING_KEY,
)
from otel_prov.exporters._base import ExportResult, ProvExporter
from otel_prov.prov._chain import Checkpoint
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._sealer import Sealer

__all__ = ["ChainWriter", "signer_from_settings"]

_logger = logging.getLogger(__name__)

_NO_TRACE = "0" * 32
"""The trace id of a checkpoint's record: it belongs to no trace."""


def signer_from_settings(signing_key: str | os.PathLike[str] | None) -> KeySigner | None:
    """The key ``signing_key`` names, else ``OTEL_PROV_SIGNING_KEY``'s, else none.  Raises
    :class:`~otel_prov._signing.SigningKeyError` (or ``MissingExtraError``) when it cannot
    be used: each caller decides how to say so at start."""
    path = signing_key if signing_key is not None else env_str(OTEL_PROV_SIGNING_KEY)
    return KeySigner(Path(path)) if path else None


class ChainWriter:
    """One writer's sealer, key and checkpoints.  Called from one thread at a time."""

    def __init__(
        self,
        *,
        signer: KeySigner | None,
        checkpoint_file: str | os.PathLike[str] | None = None,
        every: int | None = None,
        interval_s: float | None = None,
    ) -> None:
        """``checkpoint_file``, ``every``, ``interval_s``: else their ``OTEL_PROV_*``
        variables, else none, 100 entries, 60 seconds."""
        self.signer = signer
        file = (
            checkpoint_file if checkpoint_file is not None else env_str(OTEL_PROV_CHECKPOINT_FILE)
        )
        self._file = Path(file) if file else None
        self._every = every or env_int(OTEL_PROV_CHECKPOINT_EVERY, 100)
        self._interval_ns = int(
            (interval_s or env_float(OTEL_PROV_CHECKPOINT_INTERVAL, 60.0)) * 1e9
        )
        self._file_failures = RepeatedFailure(_logger, "cannot append to the checkpoint file")
        self.restart()

    def restart(self) -> None:
        """A new chain (a new process, or a forked child)."""
        self.sealer = Sealer(chain=uuid.uuid4().hex, signer=self.signer)
        self._checkpointed = 0
        self._checkpointed_ns = time.monotonic_ns()

    def sealed(self, exporter: ProvExporter, now_ns: int) -> None:
        """After records were sealed: a checkpoint, if one is due."""
        new = self.sealer.sequence - self._checkpointed
        waited = time.monotonic_ns() - self._checkpointed_ns
        if new >= self._every or (new and waited >= self._interval_ns):
            self.checkpoint(exporter, now_ns)

    def checkpoint(self, exporter: ProvExporter, now_ns: int, *, graph: str | None = None) -> bool:
        """State the head now (if it moved since the last checkpoint), into the store (in
        ``graph``: the chain's, a tenant's for a tenant's receiver) and the file; never
        raises.  ``False`` when the exporter refused it."""
        checkpoint = self.sealer.checkpoint(now_ns)
        if checkpoint is None or checkpoint.sequence == self._checkpointed:
            return True
        self._append(checkpoint)
        record = ProvRecord(
            _NO_TRACE,
            f"<urn:otel-prov:chain:{checkpoint.chain}>",
            tuple(checkpoint.triples()),
            graph=graph,
        )
        try:
            stored = exporter.export([record]) is ExportResult.SUCCESS
        except Exception:  # against the exporter's contract: the host must not see it
            _logger.exception("provenance exporter raised")
            stored = False
        self._checkpointed = checkpoint.sequence
        self._checkpointed_ns = time.monotonic_ns()
        return stored

    def _append(self, checkpoint: Checkpoint) -> None:
        if self._file is None:
            return
        try:
            self._file.parent.mkdir(parents=True, exist_ok=True)
            with self._file.open("a", encoding="utf-8") as out:
                out.write(checkpoint.line())
                out.flush()
                os.fsync(out.fileno())
        except OSError as exc:
            self._file_failures.failed(exc)
