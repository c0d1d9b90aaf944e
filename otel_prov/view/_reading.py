"""What a reader that runs for hours keeps between requests (``otel-prov serve``, ``otel-prov
mcp``): a backend opened again as it ages, and one text index per graph.

A read-only opening of the embedded store sees the store as it was when opened, while
agents keep writing: :class:`FreshBackend` opens it again once the last opening is more
than ``refresh_s`` old.  The listing's text search reads every run's question and answer
once into a :class:`~otel_prov.read._text_index.TextIndex` (a minute over 100,000 runs):
:class:`TextIndexes` keeps one per graph for the server's life, filled in the background
from the moment the graph is first read.  Neither imports the web stack.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path

from otel_prov.exporters._reading import QueryBackend, StoreUnavailableError
from otel_prov.read._text_index import TextIndex

__all__ = ["FreshBackend", "NoStoreYet", "TextIndexes"]


class NoStoreYet(Exception):
    """The embedded store a reader awaits does not exist yet: no agent has written it."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"no runs yet: there is no store at {path} yet")
        self.path = path


class FreshBackend:
    """A backend opened again once it is older than ``refresh_s`` (see the module).  Opens
    it once now, so that a store that cannot be read fails here (``StoreUnavailableError``).
    With ``awaited`` (the embedded store's directory), one that does not exist yet is
    opened once it does; until then :meth:`get` raises :class:`NoStoreYet`."""

    def __init__(
        self,
        open_backend: Callable[[], QueryBackend],
        refresh_s: float,
        awaited: Path | None = None,
    ) -> None:
        self._open = open_backend
        self._refresh_s = refresh_s
        self._awaited = awaited
        self._lock = threading.Lock()
        self._backend = None if self._absent() else open_backend()
        self._opened = time.monotonic()

    def _absent(self) -> bool:
        return self._awaited is not None and not self._awaited.is_dir()

    def get(self) -> QueryBackend:
        with self._lock:
            if self._backend is None or time.monotonic() - self._opened > self._refresh_s:
                if self._backend is None and self._awaited is not None and self._absent():
                    raise NoStoreYet(self._awaited)
                self._backend = self._open()
                self._opened = time.monotonic()
            return self._backend


class TextIndexes:
    """One :class:`~otel_prov.read._text_index.TextIndex` per graph, over ``fresh``."""

    def __init__(self, fresh: FreshBackend) -> None:
        self._fresh = fresh
        self._indexes: dict[str, TextIndex] = {}
        self._lock = threading.Lock()

    def of(self, graph: str) -> TextIndex:
        """The index of ``graph`` (an IRI); the first time, every run's text is read
        now, in a thread, not at the first search."""
        with self._lock:
            index = self._indexes.get(graph)
            if index is None:
                index = self._indexes[graph] = TextIndex()
                threading.Thread(
                    target=_warm, args=(index, self._fresh, graph), daemon=True
                ).start()
            return index


def _warm(index: TextIndex, fresh: FreshBackend, graph: str) -> None:
    """Fill the text index; a store that cannot be read now (or is not there yet) is
    reported by the readers, and searched when it can be."""
    with contextlib.suppress(StoreUnavailableError, ValueError, NoStoreYet):
        index.refresh(fresh.get(), graph)
