"""Auto-instrumentation of agent frameworks: OTel ``BaseInstrumentor`` subclasses.

Each framework has its own subpackage (``langchain``, ``openai_agents``,
``smolagents``, ``mcp``), imported lazily so that otel-prov never needs a framework installed
that the application does not use.
"""

from otel_prov.instrumentation._patching import Patches, PatchingInstrumentor

__all__ = ["Patches", "PatchingInstrumentor"]
