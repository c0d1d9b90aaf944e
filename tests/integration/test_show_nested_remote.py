"""Nested sessions read the same from Oxigraph's and Virtuoso's SPARQL endpoints as from
the embedded store: the extra query for sub-sessions stays small enough for Virtuoso."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import records_of
from tests.cli import run_cli
from tests.integration.store_queries import store_both
from tests.servers import SparqlServer
from tests.test_show_nested import deep_run, flat_run, handoff_run

pytestmark = pytest.mark.integration


def test_nested_sessions_agree_between_store_and_endpoint(
    server: SparqlServer, tmp_path: Path
) -> None:
    records = records_of(handoff_run, deep_run, flat_run)
    assert len(records) == 3
    local_args, remote_args = store_both(records, server, tmp_path)
    for command in (
        ("sessions", "--format", "json"),
        ("show", "delegated"),
        ("show", "delegated", "--format", "json"),
        ("show", "deep"),
        ("show", "deep", "--format", "json"),
        ("show", "deep", "--format", "mermaid"),
        ("show", "flat", "--format", "json"),
    ):
        local, there = run_cli(*command, *local_args), run_cli(*command, *remote_args)
        assert local.returncode == there.returncode == 0, (command, there.stderr)
        assert there.stdout == local.stdout, command
    deep = run_cli("show", "deep", *remote_args).stdout
    assert "answered by  writer (sub-session " in deep
    assert "            Sub-session " in deep  # pricing, three levels down
