"""The public surface: explicit, sorted ``__all__`` that matches what the packages export."""

from __future__ import annotations

import types

import pytest
from opentelemetry.sdk.trace.export import SpanExporter

import otel_prov
import otel_prov.capture
import otel_prov.exporters


@pytest.mark.parametrize("module", [otel_prov, otel_prov.capture, otel_prov.exporters])
def test_all_is_sorted_and_complete(module: types.ModuleType) -> None:
    exported = list(module.__all__)
    assert exported == sorted(exported)
    # dir() and getattr(), not vars(): otel_prov resolves its names on first use (PEP 562).
    public = {
        name
        for name in dir(module)
        if not name.startswith("_") and not isinstance(getattr(module, name), types.ModuleType)
    }
    assert public == set(exported) - {"__version__"}


def test_contract_names_exist() -> None:
    for name in (
        "configure",
        "ProvSpanProcessor",
        "agent_session",
        "iteration",
        "tool_call",
        "model_call",
        "retrieval",
    ):
        assert callable(getattr(otel_prov, name))
    assert callable(otel_prov.Retrieval.add_document)
    for name in ("OxigraphStoreExporter", "FileExporter", "ProvExporter"):
        assert isinstance(getattr(otel_prov.exporters, name), type)


def test_users_who_build_their_own_provider_can_wrap_their_exporter() -> None:
    assert "RedactingSpanExporter" in otel_prov.__all__
    assert issubclass(otel_prov.RedactingSpanExporter, SpanExporter)


def test_each_lazy_name_of_otel_prov_is_in_all() -> None:
    """``otel_prov`` resolves its names from a table beside ``__all__``: the two agree."""
    assert set(otel_prov._HOME_OF) == set(otel_prov.__all__) - {"__version__"}


def test_each_lazy_name_of_the_exporters_is_in_all() -> None:
    """``otel_prov.exporters`` loads its concrete exporters from a table: each of them, and
    the interface it imports, make ``__all__``."""
    eager = {"DEFAULT_GRAPH", "ExportResult", "ProvExporter"}
    assert set(otel_prov.exporters._HOME_OF) == set(otel_prov.exporters.__all__) - eager
