"""The configuration page and ``configure()`` agree: every variable it lists for
``configure()`` is a keyword of it, every keyword the docs pass to it exists, and every
variable the package reads is documented."""

from __future__ import annotations

import inspect
import logging
import re
from pathlib import Path

import pytest

import otel_prov
from otel_prov import environment_variables
from otel_prov._settings import env_choice

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOCS = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
CONFIGURE_TABLE, CLI_TABLE = CONFIGURATION.split("### Read by the `otel-prov` command", 1)
ROW = re.compile(r"^\| `(OTEL_PROV_\w+)`", re.M)


def test_every_variable_in_the_configure_table_is_a_keyword_of_configure() -> None:
    keywords = set(inspect.signature(otel_prov.configure).parameters)
    variables = ROW.findall(CONFIGURE_TABLE)
    assert len(variables) >= 10
    missing = [v for v in variables if v.removeprefix("OTEL_PROV_").lower() not in keywords]
    assert missing == []


def test_every_keyword_the_docs_pass_to_configure_exists() -> None:
    keywords = set(inspect.signature(otel_prov.configure).parameters)
    named = set(re.findall(r"configure\(([^)]*)\)", DOCS))
    passed = {k for call in named for k in re.findall(r"(\w+)=", call)}
    assert passed and passed <= keywords


def test_every_variable_the_package_reads_is_documented() -> None:
    documented = set(ROW.findall(CONFIGURE_TABLE)) | set(ROW.findall(CLI_TABLE))
    defined = {
        value
        for name, value in vars(environment_variables).items()
        if name.startswith("OTEL_PROV_") and isinstance(value, str)
    }
    assert sorted(defined - documented) == []


def test_a_bad_wal_fsync_value_warns_and_keeps_the_default(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OTEL_PROV_WAL_FSYNC", "sometimes")
    with caplog.at_level(logging.WARNING):
        assert env_choice("OTEL_PROV_WAL_FSYNC", ("always", "never"), "never") == "never"
    assert "OTEL_PROV_WAL_FSYNC='sometimes' is not one of always/never" in caplog.text


def test_configure_takes_the_wal_and_blob_keywords(tmp_path: Path) -> None:
    handle = otel_prov.configure(
        store=tmp_path / "store",
        wal_dir=tmp_path / "wal",
        wal_fsync=True,
        blob_dir=tmp_path / "blobs",
        blob_threshold=16,
        set_global=False,
    )
    tp = handle.tracer_provider
    with otel_prov.agent_session("a", question="q" * 100, tracer_provider=tp):
        pass
    handle.shutdown()
    assert list((tmp_path / "blobs").rglob("*"))  # the 100-byte question went to the blobs
