"""Imports point down the pipeline's stack, never up (ARCHITECTURE.md draws the stack).

A module may import from its own layer and the layers below it.  The check reads the
source with ``ast`` (lazy imports inside functions count too), so an upward import fails
here even when it would only run on some code path.  Only ``otel_prov.setup`` (and the
exporters themselves) may name a concrete exporter: everything else sees the interface.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "otel_prov._version",
        "otel_prov._settings",
        "otel_prov._tls",
        "otel_prov._tokens",
        "otel_prov._tenants",
        "otel_prov._extras",
        "otel_prov._forks",
        "otel_prov._repeated",
        "otel_prov._signing",
        "otel_prov._files",
        "otel_prov.environment_variables",
        "otel_prov.semconv",
    ),
    ("otel_prov.prov",),
    ("otel_prov.capture",),
    ("otel_prov.exporters",),
    ("otel_prov.processing",),
    ("otel_prov.read",),
    ("otel_prov.ingest",),
    ("otel_prov.instrumentation",),
    ("otel_prov.setup",),
    ("otel_prov.view",),
    ("otel_prov.cli", "otel_prov.demo", "otel_prov.mcp_server"),
    ("otel_prov", "otel_prov.__main__"),
)
"""Bottom first.  A module belongs to the layer of the longest prefix that names it."""

SOURCE_DIRS = {
    "otel_prov": ROOT / "otel_prov",
    "otel_prov.exporters": ROOT / "exporters",
    "otel_prov.semconv": ROOT / "semconv",
}


def layer_of(module: str) -> int:
    best, found = -1, -1
    for index, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best:
                best, found = len(name), index
    if found < 0:
        raise LookupError(f"{module} is in no layer: add it to LAYERS and ARCHITECTURE.md")
    return found


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, folder in SOURCE_DIRS.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if package == "otel_prov" and parts[0] in ("exporters", "semconv"):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


def imported(module: str, path: Path) -> list[tuple[int, str]]:
    """Every ``otel_prov`` module named by an import in ``path``, with its line."""
    names: list[tuple[int, str]] = []
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # ``from otel_prov import semconv`` imports the submodule, not the package.
            names += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return [(line, name) for line, name in names if name.split(".")[0] == "otel_prov"]


def resolve(name: str, known: dict[str, Path]) -> str:
    """The module an imported name lives in: the longest known module that prefixes it."""
    while name not in known and "." in name:
        name = name.rpartition(".")[0]
    return name


@pytest.mark.parametrize("module", sorted(modules()))
def test_imports_point_down(module: str) -> None:
    known = modules()
    own = layer_of(module)
    upward = []
    for line, name in imported(module, known[module]):
        target = resolve(name, known)
        if layer_of(target) > own:
            upward.append(f"{known[module].relative_to(ROOT)}:{line} imports {target}")
    assert not upward, "imports that point up the stack:\n" + "\n".join(upward)


def test_every_module_has_a_layer() -> None:
    for module in modules():
        layer_of(module)


def test_an_upward_import_is_caught(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text("from otel_prov.cli import main\nimport otel_prov.setup\n")
    probe = "otel_prov.prov.probe"  # doc-reference: ignore - a module that is not there
    names = [resolve(n, modules()) for _, n in imported(probe, source)]
    assert [layer_of(n) > layer_of("otel_prov.prov") for n in names] == [True, True]


CONCRETE_EXPORTERS = frozenset(
    f"otel_prov.exporters.{name}"
    for name in ("oxigraph._exporter", "sparql._exporter", "sparql._spool", "files._exporter")
)
"""The writers of the store backends; their readers are asked for by name (the registry)
or, where a reader's kind matters (the embedded store's snapshots), used as they are."""
MAY_NAME_CONCRETE_EXPORTERS = ("otel_prov.setup", "otel_prov.exporters")


def reexported() -> dict[str, str]:
    """Name -> module of each name ``otel_prov.exporters`` imports from its modules, so that
    ``from otel_prov.exporters import OxigraphStoreExporter`` counts as naming
    ``oxigraph._exporter`` (they are imported there for type checkers, and loaded lazily)."""
    known = modules()
    package = known["otel_prov.exporters"]
    return {
        f"otel_prov.exporters.{alias}": resolve(name.rpartition(".")[0], known)
        for _, name in imported("otel_prov.exporters", package)
        for alias in [name.rpartition(".")[2]]
    }


def concrete_exporters_named(module: str, path: Path) -> list[str]:
    """``module:line imports target`` for each concrete exporter module ``path`` names."""
    known, names = modules(), reexported()
    targets = [
        (line, names.get(name) or resolve(name, known)) for line, name in imported(module, path)
    ]
    return [
        f"{module}:{line} imports {target}"
        for line, target in targets
        if target in CONCRETE_EXPORTERS
    ]


@pytest.mark.parametrize(
    "module",
    sorted(
        module
        for module in modules()
        if not any(module == m or module.startswith(m + ".") for m in MAY_NAME_CONCRETE_EXPORTERS)
    ),
)
def test_only_setup_knows_the_concrete_exporters(module: str) -> None:
    named = concrete_exporters_named(module, modules()[module])
    assert not named, "only otel_prov.setup picks an exporter:\n" + "\n".join(named)


def test_naming_a_concrete_exporter_is_caught(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text(
        "from otel_prov.exporters.sparql._exporter import SparqlUpdateExporter\n"
        "from otel_prov.exporters import OxigraphStoreExporter, ProvExporter\n"
        "import otel_prov.exporters.files._exporter\n"
        "from otel_prov.exporters._base import graph_term\n"
        "from otel_prov.exporters._registry import get\n"
    )
    probe = "otel_prov.cli.probe"  # doc-reference: ignore - a module that is not there
    assert concrete_exporters_named(probe, source) == [
        f"{probe}:1 imports otel_prov.exporters.sparql._exporter",
        f"{probe}:2 imports otel_prov.exporters.oxigraph._exporter",
        f"{probe}:3 imports otel_prov.exporters.files._exporter",
    ]


WRITE_PATH = ("otel_prov.processing", "otel_prov.ingest")


@pytest.mark.parametrize(
    "module",
    sorted(m for m in modules() if any(m == p or m.startswith(p + ".") for p in WRITE_PATH)),
)
def test_the_write_path_reads_the_store_through_the_store_layer(module: str) -> None:
    """What the writers ask of the store (the runs it holds, their content) are queries
    of the store layer (``otel_prov.exporters``), not of the read API: ``ingest`` and
    ``processing`` import nothing of ``otel_prov.read``."""
    known = modules()
    reads = [
        f"{known[module].relative_to(ROOT)}:{line} imports {target}"
        for line, name in imported(module, known[module])
        if (target := resolve(name, known)) == "otel_prov.read"
        or target.startswith("otel_prov.read.")
    ]
    assert not reads, "the write path imports the read API:\n" + "\n".join(reads)
