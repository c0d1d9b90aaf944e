"""The instrumentor of a framework that is instrumented by patching it from one module.

LangChain, smolagents and MCP are each instrumented by a module with ``install(tracer)``
and ``uninstall()``; smolagents and MCP keep what they replaced in :class:`Patches`.  That
module imports the framework, so it is imported only when
``instrument()`` runs: importing otel-prov never needs a framework the application does
not use.  The tracer is named after the instrumentor's package, as OTel instrumentations
name theirs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection
from typing import Any, ClassVar

from opentelemetry import trace

# The upstream module starts with ``# type: ignore``, so mypy sees BaseInstrumentor as Any.
from opentelemetry.instrumentation.instrumentor import (  # type: ignore[attr-defined]
    BaseInstrumentor,
)

from otel_prov._version import __version__

__all__ = ["Patches", "PatchingInstrumentor"]


class Patches:
    """The attributes a patching module replaced and what they were, to put back."""

    def __init__(self) -> None:
        self._originals: list[tuple[Any, str, Any]] = []

    def __bool__(self) -> bool:
        return bool(self._originals)

    def replace(self, owner: Any, attribute: str, wrap: Callable[[Any], Any]) -> Any:
        """Set ``owner.attribute`` (a class's method, a module's function) to
        ``wrap(original)``; the wrapper."""
        original = getattr(owner, attribute)
        self._originals.append((owner, attribute, original))
        wrapper = wrap(original)
        setattr(owner, attribute, wrapper)
        return wrapper

    def restore(self) -> None:
        """Put every original back, the last replaced first."""
        while self._originals:
            owner, attribute, original = self._originals.pop()
            setattr(owner, attribute, original)


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
