"""The docs build, link only to pages and anchors that exist, and stay generated.

``mkdocs build --strict`` fails on a broken link or anchor and on a page left out of the
navigation; the configuration tables and the support matrix are generated and must be the
ones committed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    built = subprocess.run(
        [str(BIN / "mkdocs"), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "configuration" / "index.html").is_file()


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# x\n\n[gone](no-such-page.md)\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[0] + "\n",
        encoding="utf-8",
    )
    built = subprocess.run(
        [str(BIN / "mkdocs"), "build", "--strict"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode != 0 and "no-such-page.md" in built.stderr


@pytest.mark.parametrize(
    "script", ["configuration_doc.py", "support_matrix.py", "sparql_recipes.py"]
)
def test_a_generated_page_is_the_one_committed(script: str) -> None:
    """The configuration tables (from environment_variables.py), the support matrix (from
    the conformance suite's scenarios) and the SPARQL recipes (from the module the web
    view's query box offers them from) are what their scripts write today."""
    checked = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / script), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
