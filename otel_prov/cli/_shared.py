"""What the commands share when they run: the store or endpoint their flags name, the
graph, the trace backends' links (their messages: ``_messages``)."""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path

from otel_prov._extras import MissingExtraError
from otel_prov._settings import env_str
from otel_prov._signing import KeySigner, SigningKeyError
from otel_prov._tenants import Tenants, check_name, tenant_graph
from otel_prov.cli._exit import UsageError
from otel_prov.environment_variables import (
    OTEL_PROV_GRAPH,
    OTEL_PROV_JAEGER_URL,
    OTEL_PROV_SIGNING_KEY,
    OTEL_PROV_SPARQL_UPDATE_ENDPOINT,
    OTEL_PROV_TEMPO_URL,
    OTEL_PROV_TENANT,
    OTEL_PROV_TENANTS,
    OTEL_PROV_TRACE_LABEL,
    OTEL_PROV_TRACE_URL,
)
from otel_prov.exporters._base import graph_term
from otel_prov.exporters._reading import QueryBackend, StoreUnavailableError
from otel_prov.processing._chain_writer import ChainWriter, signer_from_settings
from otel_prov.prov._chain import Checkpoint
from otel_prov.read._chains import read_checkpoint_file
from otel_prov.read._confinement import Confinement
from otel_prov.read._reader import ProvenanceReader
from otel_prov.setup._destination import (
    Destination,
    destination_from_settings,
    reader_from_settings,
)

__all__ = [
    "backend",
    "base_graph",
    "chain_writer",
    "confinement",
    "destination",
    "graph",
    "open_destination",
    "read_checkpoints",
    "reader",
    "reload_on_hangup",
    "signer",
    "tenant",
    "tenants_from",
    "token_text",
    "trace_links",
]


def backend(args: argparse.Namespace) -> QueryBackend:
    """Where ``--store``/``--endpoint`` (or the settings) say provenance is read."""
    if args.store is not None and args.endpoint:
        raise UsageError("give --store or --endpoint, not both")
    try:
        return reader_from_settings(store=args.store, sparql_query_endpoint=args.endpoint)
    except ValueError as exc:  # a backend name that is none (OTEL_PROV_BACKEND)
        raise UsageError(str(exc)) from exc


def reader(args: argparse.Namespace) -> ProvenanceReader:
    """The read API over :func:`backend` and the graph of :func:`graph`."""
    return ProvenanceReader(backend(args), graph=graph(args)[1:-1])


def graph(args: argparse.Namespace) -> str:
    """The graph of ``--graph`` (checked by the parser), else of ``OTEL_PROV_GRAPH``; of
    the tenant of :func:`tenant`, when there is one, under it."""
    base = base_graph(args)
    named = tenant(args)
    return base if named is None else f"<{tenant_graph(base[1:-1], named)}>"


def confinement(args: argparse.Namespace) -> Confinement:
    """What the command's reader may see: the graph of :func:`base_graph`, or of the
    tenant of :func:`tenant` under it, and the dataset of a query it runs."""
    return Confinement.of(base_graph(args)[1:-1], tenant(args))


def base_graph(args: argparse.Namespace) -> str:
    """The graph of ``--graph``, else of ``OTEL_PROV_GRAPH``, whatever the tenant."""
    try:
        return graph_term(args.graph)
    except ValueError as exc:
        raise UsageError(f"{OTEL_PROV_GRAPH}: {exc}") from exc


def tenant(args: argparse.Namespace) -> str | None:
    """The tenant of ``--tenant``, else of ``OTEL_PROV_TENANT``; None: no tenant."""
    named = getattr(args, "tenant", None) or env_str(OTEL_PROV_TENANT)
    if named is None:
        return None
    try:
        return check_name(named)
    except ValueError as exc:
        raise UsageError(f"--tenant: {exc}") from exc


def signer() -> KeySigner | None:
    """``OTEL_PROV_SIGNING_KEY``'s key, none when it is not set: a key that cannot be used
    stops the command at start (a usage error naming the file)."""
    try:
        return signer_from_settings(None)
    except (SigningKeyError, MissingExtraError) as exc:
        raise UsageError(f"{OTEL_PROV_SIGNING_KEY}: {exc}") from exc


def chain_writer() -> ChainWriter:
    """A writing command's chain, signed with ``OTEL_PROV_SIGNING_KEY`` when it is set."""
    return ChainWriter(signer=signer())


def read_checkpoints(path: Path | None) -> list[Checkpoint]:
    """The checkpoints of ``--checkpoints FILE`` (none without it); a file that cannot be
    read, or a line that is no checkpoint, is a usage error."""
    if path is None:
        return []
    try:
        return read_checkpoint_file(path.read_text(encoding="utf-8"), str(path))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(str(exc)) from exc


def destination(args: argparse.Namespace) -> Destination:
    """Where ``configure()`` would write (a SPARQL update endpoint when one is set, else the
    embedded store), flags first."""
    if args.store is not None and (args.endpoint or args.endpoint_update):
        raise UsageError("give --store or --endpoint-update/--endpoint, not both")
    if args.endpoint and not (args.endpoint_update or env_str(OTEL_PROV_SPARQL_UPDATE_ENDPOINT)):
        raise UsageError(
            f"{args.command} writes: give the update endpoint with --endpoint-update "
            "(or OTEL_PROV_SPARQL_UPDATE_ENDPOINT); --endpoint is where it reads"
        )
    return open_destination(
        store=args.store,
        update_endpoint=args.endpoint_update,
        query_endpoint=args.endpoint,
        graph=args.graph,
    )


def open_destination(
    *,
    store: Path | None,
    graph: str | None,
    update_endpoint: str | None = None,
    query_endpoint: str | None = None,
) -> Destination:
    """:func:`~otel_prov.setup._destination.destination_from_settings`, its errors as the
    CLI says them: a bad endpoint is a usage error, a store that cannot open a store error."""
    try:
        return destination_from_settings(
            store=store,
            sparql_update_endpoint=update_endpoint,
            sparql_query_endpoint=query_endpoint,
            graph=graph,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    except OSError as exc:
        raise StoreUnavailableError(str(exc)) from exc


def trace_links() -> dict[str, str]:
    """Backend name -> URL template (``{trace_id}``) of each trace backend configured:
    Jaeger's and Tempo's by their variables' names, any other by the label it is given."""
    links = {
        "jaeger": env_str(OTEL_PROV_JAEGER_URL),
        "tempo": env_str(OTEL_PROV_TEMPO_URL),
        env_str(OTEL_PROV_TRACE_LABEL) or "traces": env_str(OTEL_PROV_TRACE_URL),
    }
    return {name: template for name, template in links.items() if template}


def token_text(
    path: Path | None, variable: str | None = None, flag: str = "--token-file"
) -> str | None:
    """A bearer token's text, from ``flag`` (``path``) else the environment
    ``variable``; None: no token.  ``ValueError`` for a file that cannot be read."""
    if path is not None:
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot read {flag} {path}: {exc.strerror or exc}") from exc
    return (env_str(variable) if variable is not None else None) or None


def tenants_from(path: Path | None) -> Tenants | None:
    """The tenants file of ``--tenants`` (``path``), else ``OTEL_PROV_TENANTS``; None: no
    tenants.  ``ValueError`` says what is wrong with the file."""
    named = path or env_str(OTEL_PROV_TENANTS)
    return None if not named else Tenants.read(Path(named))


def reload_on_hangup(tenants: Tenants) -> None:
    """SIGHUP reads the tenants file again, rather than stop the server (``serve``,
    ``mcp``): off the thread the signal lands on, which may be asking the tenants."""
    signal.signal(
        signal.SIGHUP,
        lambda signum, frame: threading.Thread(target=tenants.reload, daemon=True).start(),
    )
