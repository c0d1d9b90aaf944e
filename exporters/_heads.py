"""The agents' chain heads an exporter remembers beside its spool: what it took, stored or not.

A process that starts while the store is down cannot read the chain heads from it, and
one that starts before an earlier run's spool is replayed reads heads that miss what
waits there.  Either would seal its first bundle of an agent in the wrong place: in a
new chain, or linked past the spooled bundle, which nothing then points to and which
could be deleted unseen.  So the exporter keeps the newest first bundle per agent of
every batch it accepted (``chain-heads.json`` in its spool directory, replaced whole on
each change) and gives, per agent, the newer of that and what the store says.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

from otel_prov.exporters._spool import write_atomically
from otel_prov.prov._rdf import instant_order, iri
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._sealer import heads_in, newest_heads

__all__ = ["RememberedHeads"]

_logger = logging.getLogger(__name__)

_NAME = "chain-heads.json"


class RememberedHeads:
    """The heads of the batches taken into ``directory``, a spool under ``root``.

    Called from the exporter's caller only (the processor's worker), never concurrently.
    """

    def __init__(self, directory: Path, root: Path, *, fsync: bool) -> None:
        self._directory = directory
        self._root = root
        self._fsync = fsync
        self._heads = self.read()

    def take(self, records: Sequence[ProvRecord]) -> None:
        """Remember the chain heads of ``records``, accepted for delivery."""
        heads = newest_heads(self._heads, *(heads_in(record.triples) for record in records))
        if heads == self._heads:
            return
        self._heads = heads
        data = json.dumps(heads, sort_keys=True).encode()
        try:
            write_atomically(self._directory, _NAME, data, fsync=self._fsync)
        except OSError:
            _logger.exception("cannot remember the bundle chains in %s", self._directory)

    def read(self) -> dict[str, dict[str, str]]:
        """Per agent, the newest head remembered in the spool or any of its subdirectories
        (a process that shared the spool kept its own)."""
        found = []
        for path in [self._root / _NAME, *self._root.glob(f"*/{_NAME}")]:
            try:
                found.append(_checked(json.loads(path.read_text(encoding="utf-8"))))
            except FileNotFoundError:
                continue
            except (OSError, ValueError, TypeError, KeyError, AttributeError):
                _logger.warning("cannot read the remembered bundle chains in %s", path)
        return newest_heads(*found)


def _checked(heads: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """``heads`` as read from a file, if every IRI is one and every time an ``xsd:dateTime``
    (they go into SPARQL updates and are compared); raises otherwise."""
    for agent, head in heads.items():
        if iri(agent[1:-1]) != agent or iri(head["bundle"][1:-1]) != head["bundle"]:
            raise ValueError(f"not an IRI term: {agent} or {head['bundle']}")
        instant_order(head["time"])
        if not isinstance(head["hash"], str):
            raise TypeError("hash")
    return heads
