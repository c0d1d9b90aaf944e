"""The instrumentor of a framework that is instrumented by patching it from one module.

LangChain, smolagents and MCP are each instrumented by a module with ``install(tracer)``
and ``uninstall()``.  That module imports the framework, so it is imported only when
``instrument()`` runs: importing otel-prov never needs a framework the application does
not use.  The tracer is named after the instrumentor's package, as OTel instrumentations
name theirs.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection
from typing import Any, ClassVar

from opentelemetry import trace

# The upstream module starts with ``# type: ignore``, so mypy sees BaseInstrumentor as Any.
from opentelemetry.instrumentation.instrumentor import (  # type: ignore[attr-defined]
    BaseInstrumentor,
)

from otel_prov._version import __version__

__all__ = ["PatchingInstrumentor"]


class PatchingInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Subclasses name the distributions they support and their patching module."""

    instruments: ClassVar[Collection[str]] = ()
    """The distributions ``BaseInstrumentor`` checks before instrumenting."""
    patches: ClassVar[str] = "_patches"
    """The module beside the subclass's package that installs and removes the patches."""

    def instrumentation_dependencies(self) -> Collection[str]:
        return self.instruments

    def _patch_module(self) -> Any:
        return importlib.import_module(f"{type(self).__module__}.{self.patches}")

    def _instrument(self, **kwargs: Any) -> None:
        tracer = trace.get_tracer(
            type(self).__module__, __version__, tracer_provider=kwargs.get("tracer_provider")
        )
        self._patch_module().install(tracer)

    def _uninstrument(self, **kwargs: Any) -> None:
        self._patch_module().uninstall()
