"""A regular (non-editable) install lays the three source folders out as one package, and
the core install brings only what writing and reading provenance needs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from otel_prov._extras import EXTRAS

ROOT = Path(__file__).resolve().parents[1]


def _project() -> dict[str, Any]:
    """pyproject.toml's ``[project]`` table."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        tomllib = pytest.importorskip("tomli")
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    project: dict[str, Any] = tomllib.loads(text)["project"]
    return project


def _name(requirement: str) -> str:
    """The normalised distribution name a requirement line starts with."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match is not None, requirement
    return re.sub(r"[-_.]+", "-", match.group()).lower()


def test_the_core_is_what_the_design_card_names() -> None:
    """OpenTelemetry API, SDK and OTLP exporter, rdflib, SPARQLWrapper and pyoxigraph, and
    requests, which the SPARQL exporter imports; no web stack."""
    assert {_name(r) for r in _project()["dependencies"]} == {
        "opentelemetry-api",
        "opentelemetry-sdk",
        "opentelemetry-exporter-otlp",
        "rdflib",
        "sparqlwrapper",
        "pyoxigraph",
        "requests",
    }


def test_serve_and_receive_extras_install_what_their_commands_import() -> None:
    extras = _project()["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        assert set(modules) <= {_name(r) for r in extras[extra]}, extra
    (own,) = [r for r in extras["dev"] if r.startswith("otel-prov[")]
    assert set(own[len("otel-prov[") : -1].split(",")) == set(EXTRAS)  # the suite needs all


def test_wheel_maps_exporters_and_semconv_into_otel_prov(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("otel_prov-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in (
        "otel_prov/__init__.py",
        "otel_prov/py.typed",
        "otel_prov/exporters/__init__.py",
        "otel_prov/exporters/oxigraph/_exporter.py",
        "otel_prov/exporters/sparql/_exporter.py",
        "otel_prov/exporters/files/_exporter.py",
        "otel_prov/semconv/__init__.py",
        "otel_prov/semconv/ontology.ttl",
        "otel_prov/semconv/shapes.ttl",
        "otel_prov/semconv/registry/otel_prov.yaml",
        "otel_prov/view/static/app.js",
        "otel_prov/view/static/vendor/dagre/dagre.min.js",
        "otel_prov/view/static/vendor/dagre/LICENSE",
    ):
        assert expected in names, expected
    assert not any(name.startswith(("exporters/", "semconv/", "tests/")) for name in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "otel-prov = otel_prov.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()

    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)
    probe = (
        "import otel_prov, otel_prov.exporters, otel_prov.semconv;"
        "print(otel_prov.exporters.__file__); print(otel_prov.semconv.ONTOLOGY_PATH.is_file())"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(target)!r}); {probe}"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=tmp_path,
    ).stdout
    first, second = out.splitlines()
    assert first.startswith(str(target)) and second == "True"
