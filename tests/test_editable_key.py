"""The side venvs' stamp of this checkout (``scripts/editable_key.py``): it changes with what
pip installs otel-prov from, and only with that, so that a new pin of the dev extra does not
reinstall five venvs (a gigabyte and minutes) that install no extra."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _checkout(directory: Path) -> Path:
    """A copy of what the script reads: itself, pyproject.toml and the version."""
    (directory / "scripts").mkdir(parents=True)
    (directory / "otel_prov").mkdir()
    for part in ("scripts/editable_key.py", "pyproject.toml", "otel_prov/_version.py"):
        shutil.copy(ROOT / part, directory / part)
    return directory


def _key(checkout: Path) -> str:
    done = subprocess.run(
        [sys.executable, str(checkout / "scripts" / "editable_key.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _edit(checkout: Path, part: str, old: str, new: str) -> None:
    path = checkout / part
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} not once in {part}"
    path.write_text(text.replace(old, new), encoding="utf-8")


UNCHANGED = {
    "a pin of the dev extra": ('    "pytest==9.2.0",', '    "pytest==9.1.0",'),
    "a new extra": ("\ndev = [", '\nnew = ["rich"]\ndev = ['),
    "ruff's settings": ("line-length = 100", "line-length = 99"),
}
CHANGED = {
    "a dependency": ('    "rdflib>=7.0",', '    "rdflib>=7.1",'),
    "an entry point": (
        'otel-prov = "otel_prov.cli:main"',
        'otel-prov = "otel_prov.cli:main"\notel-prov-2 = "otel_prov.cli:main"',
    ),
    "the package list": ('    "otel_prov.view",', '    "otel_prov.view",\n    "otel_prov.new",'),
    "the build system": ('requires = ["setuptools>=68", "wheel"]', 'requires = ["setuptools>=70"]'),
}


@pytest.mark.parametrize("what", sorted(UNCHANGED))
def test_the_key_stays_when_pip_would_install_the_same(tmp_path: Path, what: str) -> None:
    checkout = _checkout(tmp_path)
    before = _key(checkout)
    _edit(checkout, "pyproject.toml", *UNCHANGED[what])
    assert _key(checkout) == before


@pytest.mark.parametrize("what", sorted(CHANGED))
def test_the_key_changes_with_what_pip_installs_from(tmp_path: Path, what: str) -> None:
    checkout = _checkout(tmp_path)
    before = _key(checkout)
    _edit(checkout, "pyproject.toml", *CHANGED[what])
    assert _key(checkout) != before


def test_the_key_changes_with_the_version(tmp_path: Path) -> None:
    checkout = _checkout(tmp_path)
    before = _key(checkout)
    version = (checkout / "otel_prov" / "_version.py").read_text(encoding="utf-8")
    (checkout / "otel_prov" / "_version.py").write_text(version + "# 0.1.1\n", encoding="utf-8")
    assert _key(checkout) != before
