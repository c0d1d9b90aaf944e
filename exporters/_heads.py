"""The agents' chain heads an exporter remembers beside its spool: what it took, stored or not.

A process that starts while the store is down cannot read the chain heads from it, and
one that starts before an earlier run's spool is replayed reads heads that miss what
waits there.  Either would seal its first bundle of an agent in the wrong place: in a
new chain, or linked past the spooled bundle, which nothing then points to and which
could be deleted unseen.  So the exporter keeps the newest first bundle per agent of
every batch it accepted (``chain-heads.json`` in its spool directory, replaced whole on
each change) and gives, per agent, the newer of that and what the store says.  When the
spool takes in the subdirectory of a process that shared it (:func:`adopt_heads`), that
process's heads join the spool's own, the newest per agent again.
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

__all__ = ["CHAIN_HEADS", "RememberedHeads", "adopt_heads"]

_logger = logging.getLogger(__name__)

CHAIN_HEADS = "chain-heads.json"


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
            write_atomically(self._directory, CHAIN_HEADS, data, fsync=self._fsync)
        except OSError:
            _logger.exception("cannot remember the bundle chains in %s", self._directory)

    def read(self) -> dict[str, dict[str, str]]:
        """Per agent, the newest head remembered in the spool or any of its subdirectories
        (a process that shared the spool kept its own)."""
        found = []
        for path in [self._root / CHAIN_HEADS, *self._root.glob(f"*/{CHAIN_HEADS}")]:
            try:
                found.append(_load(path))
            except FileNotFoundError:
                continue
            except (OSError, ValueError):
                _logger.warning("cannot read the remembered bundle chains in %s", path)
        return newest_heads(*found)


def adopt_heads(path: Path, root: Path, *, fsync: bool) -> None:
    """Join the heads a process that shared the spool remembered (``path``, in its
    subdirectory) to the spool's own (in ``root``): per agent the newest of both, as
    :meth:`RememberedHeads.read` takes them.  Raises ``OSError`` or ``ValueError`` (an
    unreadable ``path``, which then stays where it is); ``root``'s own file unreadable is
    replaced, being of no use to any reader."""
    theirs = _load(path)
    try:
        ours = _load(root / CHAIN_HEADS)
    except FileNotFoundError:
        ours = {}
    except (OSError, ValueError):
        _logger.warning("cannot read the remembered bundle chains in %s; replaced", root)
        ours = {}
    heads = newest_heads(ours, theirs)
    if heads != ours:
        data = json.dumps(heads, sort_keys=True).encode()
        write_atomically(root, CHAIN_HEADS, data, fsync=fsync)


def _load(path: Path) -> dict[str, dict[str, str]]:
    """The heads in ``path``; raises ``OSError``, or ``ValueError`` for a file that is not
    heads (not JSON, or a term or time that is not one)."""
    try:
        return _checked(json.loads(path.read_text(encoding="utf-8")))
    except (TypeError, KeyError, AttributeError) as exc:
        raise ValueError(f"not chain heads: {type(exc).__name__} {exc}") from exc


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
