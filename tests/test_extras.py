"""A slim core: the instrumentors import light, and a command whose extra is missing says
which ``pip install`` to run.

Each check runs in a fresh interpreter, because what a test process has already imported
says nothing about what an import costs.  A package of an extra is made "not installed"
by ``sys.modules[name] = None``, which makes every import of it fail as a missing one does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.bench_import import HEAVY
from otel_prov._extras import EXTRAS

WEB_STACK = EXTRAS["serve"]


def _python(code: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def _cli_without(
    blocked: tuple[str, ...], argv: list[str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``otel-prov ARGV`` in a process where the packages ``blocked`` are not installed."""
    return _python(
        "import sys\n"
        f"for name in {blocked!r}:\n"
        "    sys.modules[name] = None\n"
        "from otel_prov.cli import main\n"
        f"code = main({argv!r})\n"
        f"loaded = [name for name in {HEAVY!r} if sys.modules.get(name) is not None]\n"
        "print('loaded:', ','.join(loaded), file=sys.stderr)\n"
        "sys.exit(code)\n",
        cwd=cwd,
    )


@pytest.mark.parametrize("framework", ["langchain", "openai_agents", "smolagents", "mcp"])
def test_an_instrumentor_imports_nothing_heavy(framework: str) -> None:
    result = _python(
        "import json, sys\n"
        f"import otel_prov.instrumentation.{framework}\n"
        f"print(json.dumps([name for name in {HEAVY!r} if name in sys.modules]))\n"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_import_otel_prov_imports_nothing_heavy_until_a_name_is_used() -> None:
    result = _python(
        "import json, sys\n"
        "import otel_prov\n"
        f"before = [name for name in {HEAVY!r} if name in sys.modules]\n"
        "otel_prov.configure\n"
        "print(json.dumps([before, 'otel_prov.setup' in sys.modules]))\n"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [[], True]


def test_a_subpackage_loads_on_first_use_after_import_otel_prov() -> None:
    """``import otel_prov`` then ``otel_prov.exporters.OxigraphStoreExporter``, as when the
    package imported everything; a name that is neither is still an AttributeError."""
    result = _python(
        "import otel_prov\n"
        "print(otel_prov.exporters.OxigraphStoreExporter.__name__)\n"
        "print(hasattr(otel_prov, 'no_such_name'))\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["OxigraphStoreExporter", "False"]


@pytest.mark.parametrize(
    ("command", "extra", "blocked"),
    [
        ("serve", "serve", "starlette"),
        ("serve", "serve", "uvicorn"),
        ("serve", "serve", "jinja2"),
        ("receive", "receive", "starlette"),
        ("receive", "receive", "uvicorn"),
        ("mcp", "mcp", "mcp"),
    ],
)
def test_a_command_without_its_extra_says_what_to_install(
    tmp_path: Path, command: str, extra: str, blocked: str
) -> None:
    result = _cli_without((blocked,), [command, "--store", str(tmp_path / "store")], tmp_path)
    assert result.returncode == 2, result.stderr
    message, loaded = result.stderr.splitlines()
    assert message == (
        f"otel-prov: {command} needs {blocked}, which the core install leaves out: "
        f"pip install 'otel-prov[{extra}]'"
    )
    assert loaded.startswith("loaded:")
    assert not (tmp_path / "store").exists()  # refused before it opened anything


def test_the_demo_and_show_run_on_the_core_install(tmp_path: Path) -> None:
    """``make demo`` installs the core only; ``show`` prints text there, and its HTML page
    (Jinja2) names the extra."""
    store = str(tmp_path / "store")
    demo = _cli_without(WEB_STACK, ["demo", "--store", store], tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert "Provenance stored in" in demo.stdout
    assert demo.stderr.splitlines()[-1].startswith("loaded:")
    assert not set(demo.stderr.splitlines()[-1][len("loaded:") :].split(",")) & set(WEB_STACK)

    listed = _cli_without(WEB_STACK, ["sessions", "--store", store, "--format", "json"], tmp_path)
    assert listed.returncode == 0, listed.stderr
    (session,) = json.loads(listed.stdout)
    text = _cli_without(WEB_STACK, ["show", session["id"], "--store", store], tmp_path)
    assert text.returncode == 0, text.stderr
    html = _cli_without(
        WEB_STACK, ["show", session["id"], "--store", store, "--format", "html"], tmp_path
    )
    assert html.returncode == 2
    assert html.stderr.splitlines()[0] == (
        "otel-prov: show --format html needs jinja2, which the core install leaves out: "
        "pip install 'otel-prov[serve]'"
    )
