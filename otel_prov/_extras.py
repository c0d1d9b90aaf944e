"""The optional extras, and the one line that says which to install when one is missing.

The core install writes and reads provenance (OpenTelemetry, rdflib, SPARQLWrapper,
pyoxigraph).  The web view and the OTLP receiver need a web stack that a traced
application does not, so it comes with ``otel-prov[serve]`` and ``otel-prov[receive]``;
signing and checking signatures (``OTEL_PROV_SIGNING_KEY``, ``keygen``,
``verify --trust``) with ``otel-prov[sign]``; the MCP server (``otel-prov mcp``) with
``otel-prov[mcp]`` (the MCP SDK brings its own web stack; the extra also carries what the
MCP instrumentor needs). pyproject.toml's extra of each name installs at least these
packages, under these names.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["EXTRAS", "MissingExtraError", "needs_extra"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "serve": ("starlette", "uvicorn", "jinja2"),
    "receive": ("starlette", "uvicorn"),
    "sign": ("cryptography",),
    "mcp": ("mcp",),
}
"""Each extra, by name, and the import names of the packages it installs."""


class MissingExtraError(ImportError):
    """A package of an extra is not installed; the message (one line) names the extra."""


@contextlib.contextmanager
def needs_extra(extra: str, purpose: str) -> Iterator[None]:
    """Imports in the ``with`` block that fail on a package of ``extra`` become a
    :class:`MissingExtraError` that says ``purpose`` needs it; other import errors (a
    defect, or a package that is there but broken) pass unchanged."""
    try:
        yield
    except ModuleNotFoundError as exc:
        package = (exc.name or "").partition(".")[0]
        if package not in EXTRAS[extra]:
            raise
        raise MissingExtraError(
            f"{purpose} needs {package}, which the core install leaves out: "
            f"pip install 'otel-prov[{extra}]'",
            name=exc.name,
        ) from exc
