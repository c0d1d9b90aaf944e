"""Instrumentors build spans from the public surface of ``otel_prov.capture``.

They may not reach into another module's private names (nor another instrumentor's):
a shared helper belongs in ``otel_prov.capture``, where every framework gets the same
span shapes.  Read with ``ast``, so a lazy import counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

INSTRUMENTATION = Path(__file__).resolve().parents[2] / "otel_prov" / "instrumentation"
ALLOWED = frozenset({"otel_prov._version:__version__"})
"""The version's only home below the instrumentation layer (``otel_prov.__version__`` is
above it), as instrumentation scopes name it."""


def private_imports(path: Path, package: str) -> list[str]:
    """``module:name`` of each private module or name ``path`` imports from outside ``package``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level or not (node.module or "").startswith("otel_prov"):
                continue  # relative: its own package; or not ours
            module = node.module or ""
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            module, names = "", [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            dotted = f"{module}.{name}" if module else name
            if not dotted.startswith("otel_prov") or dotted.startswith(package + "."):
                continue
            imported = f"{module}:{name}" if module else name
            if imported not in ALLOWED and any(p.startswith("_") for p in dotted.split(".")):
                found.append(imported)
    return found


@pytest.mark.parametrize(
    "path", sorted(INSTRUMENTATION.rglob("*.py")), ids=lambda p: str(p.relative_to(INSTRUMENTATION))
)
def test_instrumentors_import_only_public_names(path: Path) -> None:
    parts = path.relative_to(INSTRUMENTATION).parts
    # A framework's package, or the layer's own shared modules (the instrumentor base).
    package = "otel_prov.instrumentation" + (f".{parts[0]}" if len(parts) > 1 else "")
    assert private_imports(path, package) == []


def test_a_private_import_is_caught(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from otel_prov.capture._api import tool_call\n"
        "from otel_prov.capture import _content\n"
        "from otel_prov.instrumentation.smolagents import _patches\n"
        "from otel_prov.capture import put_content\n"
    )
    package = "otel_prov.instrumentation.langchain"
    assert private_imports(probe, package) == [
        "otel_prov.capture._api:tool_call",
        "otel_prov.capture:_content",
        "otel_prov.instrumentation.smolagents:_patches",
    ]
