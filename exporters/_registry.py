"""Store backends by name: each one holds its writer, its reader and its settings.

Modelled on rdflib's plugin registry: a backend is registered by name with where it
lives (``"package.module:attribute"``), and its module is imported when it is first
asked for, so naming or listing backends loads none of them.  The built-in ones:

* ``embedded`` (also ``oxigraph``): the pyoxigraph store on local disk (the default);
* ``sparql``: any SPARQL 1.1 store over HTTP, with a durable spool;
* ``file``: N-Quads, N-Triples, TriG or Turtle appended to a file (written, not read).

A package adds its own store as rdflib's plugins do, with an entry point::

    [project.entry-points."otel_prov.backends"]
    mystore = "mypackage.store:MyStore"

where ``MyStore`` is a :class:`StoreBackend` (a subclass, or an instance); then
``OTEL_PROV_BACKEND=mystore`` (or ``configure(backend="mystore")``) writes to it, and the
``otel-prov`` commands read it.  Without a name, the settings choose as they always have:
the SPARQL store when an endpoint is set, else the embedded store.
"""

from __future__ import annotations

import abc
import importlib
import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from otel_prov._settings import env_str
from otel_prov.environment_variables import OTEL_PROV_BACKEND
from otel_prov.exporters._base import ProvExporter, graph_term
from otel_prov.exporters._reading import QueryBackend, StoreUnavailableError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = [
    "ENTRY_POINT_GROUP",
    "Destination",
    "StoreBackend",
    "StoreOptions",
    "UnknownBackendError",
    "chosen",
    "get",
    "names",
    "reader_of",
    "register",
]

ENTRY_POINT_GROUP = "otel_prov.backends"
"""The entry point group third-party store backends are registered under."""


class UnknownBackendError(ValueError):
    """No backend is registered under the name asked for, or it cannot be loaded."""


@dataclass(frozen=True)
class StoreOptions:
    """Where provenance goes and is read from, as given in code or on the command line; a
    field left ``None`` falls back to its ``OTEL_PROV_*`` variable, then to its default
    (each backend reads the fields and variables it needs: its settings)."""

    backend: str | None = None
    """The backend's registered name; ``None``: ``OTEL_PROV_BACKEND``, else chosen by
    the other settings (:func:`chosen`)."""
    store: str | os.PathLike[str] | None = None
    """The embedded store's directory (``OTEL_PROV_STORE``), or the ``file`` backend's
    file."""
    sparql_update_endpoint: str | None = None
    sparql_query_endpoint: str | None = None
    sparql_headers: Mapping[str, str] | None = None
    spool_dir: str | os.PathLike[str] | None = None
    graph: str | None = None
    sparql_graph_store_endpoint: str | None = None
    tenant: str | None = None
    """The tenant whose graph (``<graph>/tenants/<tenant>``) is written; None: ``graph``."""

    def tenant_graph(self) -> str | None:
        """The graph written to: ``graph``, or the tenant's under it."""
        if self.tenant is None:
            return self.graph
        # The tenants' rules load with the first tenant named (their module is 40 ms).
        from otel_prov._tenants import tenant_graph

        return tenant_graph(graph_term(self.graph)[1:-1], self.tenant)


@dataclass(frozen=True)
class Destination:
    """Where provenance goes, and how to read back what is there."""

    exporter: ProvExporter
    reader: QueryBackend
    """Reads what ``exporter`` writes (through this process's writer where it must)."""
    spool: Path | None = None
    """Where batches wait that the store has not taken, for any process to count (the
    SPARQL spool); ``None``: ``exporter.waiting()`` counts them."""


class StoreBackend(abc.ABC):
    """One kind of store: its settings, its writer and its reader, in one place.

    Subclass it in the store's own module and register it (:func:`register`, or the
    entry point group :data:`ENTRY_POINT_GROUP`).  Only :meth:`writer` must be written;
    a store that can be read back gives :meth:`reader` and :meth:`reader_of` too.
    """

    name: str = ""
    """The name it is known by, for messages."""

    def asked_for(self, options: StoreOptions, *, reading: bool = False) -> bool:
        """Whether ``options`` (and the environment) ask for this store without naming a
        backend; asked of the built-in stores only, the SPARQL store first."""
        return False

    @abc.abstractmethod
    def writer(self, options: StoreOptions) -> ProvExporter:
        """The exporter that writes to the store ``options`` (and the environment) name.

        Raises ``ValueError`` for settings that cannot work (naming the setting) and
        ``OSError`` for a store that cannot be opened."""

    def reader(self, options: StoreOptions) -> QueryBackend:
        """A reader of the store ``options`` name, for a process that does not write it;
        raises :class:`StoreUnavailableError` when it cannot be read."""
        raise StoreUnavailableError(f"the {self.name} backend keeps nothing it can read back")

    def reader_of(self, writer: ProvExporter) -> tuple[QueryBackend, str] | None:
        """A reader of what ``writer`` writes, in this process, and the graph it writes
        to (an IRI term); ``None`` when ``writer`` is not this backend's."""
        return None

    def destination(self, options: StoreOptions) -> Destination:
        """The writer of :meth:`writer` and the reader of what it writes."""
        exporter = self.writer(options)
        read = self.reader_of(exporter)
        if read is None:
            exporter.shutdown()
            raise StoreUnavailableError(
                f"the {self.name} backend keeps nothing it can read back, which this needs"
            )
        return Destination(exporter, read[0])


_BUILT_IN = {
    "embedded": "otel_prov.exporters.oxigraph:EmbeddedStore",
    "oxigraph": "otel_prov.exporters.oxigraph:EmbeddedStore",
    "sparql": "otel_prov.exporters.sparql:SparqlStore",
    "file": "otel_prov.exporters.files:FileStore",
}
_CHOSEN_BY_SETTINGS = ("sparql", "embedded")
"""Asked in this order (:meth:`StoreBackend.asked_for`) when no backend is named."""

_lock = threading.Lock()
_registered: dict[str, str] = dict(_BUILT_IN)
_loaded: dict[str, StoreBackend] = {}
"""By target (``module:attribute``): one object for every name of a backend."""
_entry_points: dict[str, str] | None = None


def register(name: str, target: str) -> None:
    """Register the backend at ``target`` (``"package.module:attribute"``, a
    :class:`StoreBackend` subclass or instance) as ``name``, replacing any of that name.
    Nothing is imported until it is asked for."""
    module, _, attribute = target.partition(":")
    if not module or not attribute:
        raise ValueError(f"a backend is registered as 'package.module:attribute', not {target!r}")
    with _lock:
        _registered[_key(name)] = target


def names() -> list[str]:
    """Every name a backend can be asked for by, built-in, registered or installed."""
    return sorted({*_registered, *_installed()})


def get(name: str) -> StoreBackend:
    """The backend registered as ``name``, its module imported on first use.

    Raises :class:`UnknownBackendError` naming the backends known for a name that is
    none of them, or saying why a registered backend cannot be loaded."""
    key = _key(name)
    target = _registered.get(key) or _installed().get(key)
    if target is None:
        raise UnknownBackendError(
            f"no store backend named {name!r}: known are {', '.join(names())} (a package "
            f"adds one through the entry point group {ENTRY_POINT_GROUP!r})"
        )
    with _lock:
        backend = _loaded.get(target)
        if backend is None:
            backend = _loaded[target] = _load(key, target)
    return backend


def chosen(options: StoreOptions, *, reading: bool = False) -> StoreBackend:
    """The backend ``options`` name, else ``OTEL_PROV_BACKEND``'s, else the first built-in
    store the settings ask for (:meth:`StoreBackend.asked_for`: the SPARQL store when an
    endpoint is given or set, else the embedded store)."""
    name = options.backend or env_str(OTEL_PROV_BACKEND)
    if name:
        return get(name)
    for default in _CHOSEN_BY_SETTINGS:
        backend = get(default)
        if backend.asked_for(options, reading=reading):
            return backend
    return get(_CHOSEN_BY_SETTINGS[-1])


def reader_of(writer: ProvExporter) -> tuple[QueryBackend, str] | None:
    """A reader of what ``writer`` writes, and its graph, from the backend it belongs to
    (:meth:`StoreBackend.reader_of`); ``None`` for a writer no backend knows as its own.
    Only backends already imported are asked: a writer's backend was imported with it."""
    with _lock:
        loaded = list(_loaded.values())
        registered = dict(_registered)
    loaded += [get(name) for name, target in registered.items() if _imported(target)]
    for backend in dict.fromkeys(loaded):
        found = backend.reader_of(writer)
        if found is not None:
            return found
    return None


def _key(name: str) -> str:
    return name.strip().lower()


def _imported(target: str) -> bool:
    return target.partition(":")[0] in sys.modules


def _installed() -> dict[str, str]:
    """Name -> target of the backends installed packages declare (read once, when a name
    is not a registered one: reading the installed distributions costs tens of ms)."""
    global _entry_points
    if _entry_points is None:
        from importlib.metadata import entry_points

        found: list[EntryPoint] = list(entry_points(group=ENTRY_POINT_GROUP))
        _entry_points = {_key(point.name): point.value for point in found}
    return _entry_points


def _load(name: str, target: str) -> StoreBackend:
    module_name, _, attribute = target.partition(":")
    try:
        value: object = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise UnknownBackendError(
            f"store backend {name!r} ({target}) cannot be loaded: {exc}"
        ) from exc
    backend = value() if isinstance(value, type) and issubclass(value, StoreBackend) else value
    if not isinstance(backend, StoreBackend):
        raise UnknownBackendError(
            f"store backend {name!r} ({target}) is not a StoreBackend: {type(value).__name__}"
        )
    if not backend.name:
        backend.name = name
    return backend
