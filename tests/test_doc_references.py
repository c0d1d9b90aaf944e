"""Docs and comments name only files and modules that exist.

A moved or deleted module leaves its name behind in READMEs, docstrings and comments;
a newcomer who follows one finds nothing.  This reads every tracked text file for paths
under the repository's folders and for dotted ``otel_prov`` module names, and checks each.
"""

from __future__ import annotations

import importlib
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SELF = "tests/test_doc_references.py"
"""Left out: it names stale things on purpose, to show they are caught."""
FOLDERS = (
    "otel_prov",
    "exporters",
    "semconv",
    "tests",
    "deploy",
    "benchmarks",
    "examples",
    "scripts",
    ".ci",
)
PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(re.escape(f) for f in FOLDERS) + r")/[\w./-]*\w)")
PACKAGES = (
    "prov",
    "capture",
    "exporters",
    "processing",
    "read",
    "ingest",
    "instrumentation",
    "setup",
    "cli",
    "view",
    "semconv",
    "demo",
)
MODULE = re.compile(r"(?<![\w.])(otel_prov\.(?:_(?!_)\w+|" + "|".join(PACKAGES) + r")\b(?:\.\w+)*)")
"""Dotted names of our modules.  ``otel_prov.question`` and the like are attribute names of
our semantic conventions, not modules, so only names under a package or a private
module are checked."""
INSTALLED = {"otel_prov/exporters": "exporters", "otel_prov/semconv": "semconv"}
"""Paths as installed (setuptools ``package-dir``) and where they live in the repository."""


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    suffixes = (".py", ".md", ".yaml", ".yml", ".toml", ".sh", ".cfg", "Makefile")
    return [
        ROOT / name
        for name in listed
        if name.endswith(suffixes) and (ROOT / name).is_file() and name != SELF
    ]


def in_repository(path: str) -> bool:
    for installed, source in INSTALLED.items():
        if path.startswith(installed):
            path = source + path.removeprefix(installed)
    return (ROOT / path).exists() or bool(list(ROOT.glob(path + "*")))


def importable(name: str) -> bool:
    """A module, or attributes of one (``otel_prov.semconv.ONTOLOGY_PATH.is_file``)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        target: object = module
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def missing(files: list[Path]) -> list[str]:
    found = []
    for file in files:
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if "doc-reference: ignore" in line:
                continue  # names something that does not exist on purpose
            where = f"{file.relative_to(ROOT)}:{number}"
            for match in PATH.finditer(line):
                path = match.group(1).rstrip(".")
                if not in_repository(path):
                    found.append(f"{where} names {path}")
            for match in MODULE.finditer(line):
                if not importable(match.group(1)):
                    found.append(f"{where} names {match.group(1)}")
    return found


def test_every_named_file_and_module_exists() -> None:
    assert missing(tracked_text_files()) == []


def test_a_stale_name_is_caught(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("see otel_prov/_mapper.py and otel_prov._third_party, not otel_prov.prov\n")
    stale = [line.rpartition(" names ")[2] for line in missing_outside(doc)]
    assert stale == ["otel_prov/_mapper.py", "otel_prov._third_party"]


def missing_outside(file: Path) -> list[str]:
    link = ROOT / "build" / "doc-probe.md"
    link.parent.mkdir(exist_ok=True)
    link.write_text(file.read_text(encoding="utf-8"), encoding="utf-8")
    try:
        return missing([link])
    finally:
        link.unlink()
