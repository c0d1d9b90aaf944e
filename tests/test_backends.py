"""The store backends by name (``otel_prov.exporters._registry``), and what loading the
interface and the CLI's table costs: no store, no HTTP client, no RDF library."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from otel_prov.exporters import _registry
from otel_prov.exporters._registry import StoreOptions, UnknownBackendError

HEAVY = ("pyoxigraph", "requests", "rdflib", "SPARQLWrapper", "starlette", "urllib3")
"""What the interface and ``otel-prov --help`` must not load (a concrete backend, a
command's own dependencies)."""


def loaded_after(code: str, *, env: dict[str, str] | None = None) -> list[str]:
    """The heavy modules a fresh interpreter holds after running ``code``."""
    probe = (
        code + f"\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    )
    found: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_the_interface_loads_no_concrete_backend() -> None:
    assert (
        loaded_after(
            "import otel_prov.exporters\n"
            "from otel_prov.exporters import ProvExporter, ExportResult, DEFAULT_GRAPH\n"
            "from otel_prov.exporters._reading import QueryBackend, StoreUnavailableError\n"
            "from otel_prov.exporters._registry import names\n"
            "assert 'embedded' in names()\n"
        )
        == []
    )


def test_a_concrete_exporter_loads_when_named() -> None:
    assert "pyoxigraph" in loaded_after(
        "from otel_prov.exporters import OxigraphStoreExporter\n"
        "from otel_prov.exporters.oxigraph._exporter import OxigraphStoreExporter as home\n"
        "assert OxigraphStoreExporter is home\n"
    )


def test_the_help_loads_no_command_module() -> None:
    assert (
        loaded_after(
            "from otel_prov.cli._commands import main\n"
            "import contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n"
            "        main(['--help'])\n"
            "    except SystemExit:\n"
            "        pass\n"
        )
        == []
    )


def test_the_table_lists_every_command_its_module_declares() -> None:
    from otel_prov.cli._commands import COMMANDS, command

    modules = {listed.module for listed in COMMANDS.values()}
    declared = {
        each.name: module
        for module in modules
        for each in __import__(f"otel_prov.cli.{module}", fromlist=["COMMANDS"]).COMMANDS
    }
    assert declared == {name: listed.module for name, listed in COMMANDS.items()}
    assert all(command(name).name == name for name in COMMANDS)


def test_the_built_in_backends_by_name() -> None:
    names = _registry.names()
    assert {"embedded", "oxigraph", "sparql", "file"} <= set(names)
    assert _registry.get("embedded") is _registry.get("OXIGRAPH ")
    assert _registry.get("sparql").name == "sparql"


def test_an_unknown_name_says_which_are_known() -> None:
    with pytest.raises(UnknownBackendError, match=r"no store backend named 'nosuch'.*embedded"):
        _registry.get("nosuch")


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("otel_prov_no_such_module:Store", "cannot be loaded"),
        ("otel_prov.exporters._base:NoSuchName", "cannot be loaded"),
        ("otel_prov.exporters._base:DEFAULT_GRAPH", "is not a StoreBackend"),
    ],
)
def test_a_backend_that_cannot_load_is_a_clear_error(target: str, says: str) -> None:
    _registry.register("broken-probe", target)
    try:
        with pytest.raises(UnknownBackendError, match=rf"'broken-probe'.*{says}"):
            _registry.get("broken-probe")
    finally:
        _registry._registered.pop("broken-probe")


def test_a_target_without_attribute_is_refused() -> None:
    with pytest.raises(ValueError, match=r"package\.module:attribute"):
        _registry.register("x", "just_a_module")


def test_the_file_backend_needs_its_file() -> None:
    with pytest.raises(ValueError, match="the file backend writes to a file"):
        _registry.get("file").writer(StoreOptions(backend="file"))


THIRD_PARTY = '''
from otel_prov.exporters import ExportResult, ProvExporter
from otel_prov.exporters._registry import StoreBackend


class Recording(ProvExporter):
    """Keeps the quads it is given, in a file (so that the test sees them)."""

    def __init__(self, path):
        self.path = path

    def export(self, records):
        with open(self.path, "a", encoding="utf-8") as out:
            for record in records:
                out.write(f"{len(record.triples)}\\n")
        return ExportResult.SUCCESS

    def shutdown(self):
        pass


class MyStore(StoreBackend):
    def writer(self, options):
        return Recording(options.store)
'''


def test_an_installed_package_adds_a_backend_by_entry_point(tmp_path: Path) -> None:
    """A store is one module and one entry point: ``OTEL_PROV_BACKEND`` names it, and
    provenance of a real span goes to it through ``configure``."""
    (tmp_path / "mystore.py").write_text(THIRD_PARTY, encoding="utf-8")
    info = tmp_path / "mystore-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mystore\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[otel_prov.backends]\nMyStore = mystore:MyStore\n")
    written = tmp_path / "written.txt"
    code = textwrap.dedent(
        f"""
        import otel_prov
        from otel_prov.exporters._registry import names
        assert "mystore" in names(), names()
        handle = otel_prov.configure(store={str(written)!r}, set_global=False)
        tracer = handle.tracer_provider.get_tracer("probe")
        with tracer.start_as_current_span("invoke_agent probe") as span:
            span.set_attribute("gen_ai.operation.name", "invoke_agent")
        handle.shutdown()
        """
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(tmp_path),
        "OTEL_PROV_BACKEND": "mystore",
    }
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120, cwd=tmp_path)
    counts = [int(line) for line in written.read_text(encoding="utf-8").split()]
    assert counts and all(count > 0 for count in counts)
