"""Print a short hash of what an editable install of this checkout depends on.

The side venvs (``scripts/*-venv.sh``) install otel-prov with ``pip install -e``: its
code is read from the checkout, so only what pip itself acted on needs a reinstall when
it changes: the build system, the ``[project]`` table (dependencies, entry points,
Python), setuptools' package layout and the version.  ``[project.optional-dependencies]``
is left out (the side venvs install no extra: the dev extra's pins are ``.venv``'s), and
so is the rest of ``[tool]`` (pytest, ruff, mypy).  Usage: ``python3 scripts/editable_key.py``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: no TOML reader, so every change counts
    tomllib = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parent.parent


def install_inputs(pyproject: dict[str, Any], version_source: str) -> dict[str, Any]:
    """The parts of ``pyproject`` (parsed) and of ``_version.py`` pip installs from."""
    project = {
        key: value
        for key, value in pyproject.get("project", {}).items()
        if key != "optional-dependencies"
    }
    return {
        "build-system": pyproject.get("build-system"),
        "project": project,
        "setuptools": pyproject.get("tool", {}).get("setuptools"),
        "version": version_source,
    }


def editable_key(root: Path) -> str:
    """16 hex digits that change exactly when :func:`install_inputs` of ``root`` does."""
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    version = (root / "otel_prov" / "_version.py").read_text(encoding="utf-8")
    if tomllib is None:
        inputs: object = {"pyproject.toml": text, "version": version}
    else:
        inputs = install_inputs(tomllib.loads(text), version)
    canonical = json.dumps(inputs, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


if __name__ == "__main__":
    print(editable_key(ROOT))
