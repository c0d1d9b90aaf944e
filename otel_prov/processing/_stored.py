"""What a writer asks of the store it writes before it seals: the runs it holds already.

A writer that seals spans the store may hold already must go on from what is stored, not
seal a second time: ``import`` of a file imported before (or of more spans of its trace),
a receiver started again on its journal, the next writer of a run a dead process was
streaming.  Sealing anew would give a stored session a second first bundle, a fork of its
chain.  So the writer asks, trace by trace, which sessions the store holds, with their
newest entry, and reads what is stored of each (``WritePipeline.continue_stored``).  The
queries are the store's (``StoredRuns``); the writer only names what it needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from otel_prov.prov._rdf import Triple

__all__ = ["OpenStoredRun", "StoredRuns", "StoredSession"]


@dataclass(frozen=True)
class StoredSession:
    """A session the store holds, as the writer needs it to go on from there."""

    session: str
    """Its IRI (plain)."""
    bundle: str
    """Its newest entry's bundle (plain IRI)."""
    revision: int
    """How many bundles it has (the newest is the ``revision``-th)."""
    streamed: bool
    """The newest entry is a streamed one (``_stream``): the run was still open."""


@dataclass(frozen=True)
class OpenStoredRun:
    """A run the store holds streamed and not ended."""

    stored: StoredSession
    chain: str
    """The chain its newest entry is in: its writer's."""
    last_ns: int
    """When that entry was sealed (ns since the epoch)."""


class StoredRuns(Protocol):
    """Reads of the store a writer goes on from."""

    def sessions(self, trace_ids: Sequence[str]) -> dict[str, list[StoredSession]]:
        """Trace id (32 hex digits) -> the sessions the store holds of it."""

    def content(self, session: StoredSession) -> list[Triple]:
        """What the store holds of ``session``'s content, in the mapper's syntax."""

    def open_runs(self) -> list[OpenStoredRun]:
        """The runs whose newest entry is a streamed one: still open, as far as the store
        knows (their writer at work, or gone)."""
