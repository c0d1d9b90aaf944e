"""The store the MCP server's tests read: the demo's run, a run that failed, a run whose
trace crosses two services, and two tenants (team-a: the demo again; team-b: a run
holding a secret), with the tenants file of their tokens."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph

from otel_prov._tenants import tenant_graph
from otel_prov.exporters._base import DEFAULT_GRAPH
from otel_prov.prov._span_record import SpanRecord
from tests.builders import TRACE, make_span, store_runs
from tests.cli import run_cli
from tests.test_downstream import crossing_run

__all__ = ["SECRET", "TOKENS", "Stored", "build_store", "failed_run", "secret_run"]

TOKENS = {"team-a": "token-of-team-a", "team-b": "token-of-team-b"}
SECRET = "said-only-to-team-b"
"""In team-b's run only (its question, a tool's name and arguments, its answer)."""
FAILED_TRACE = TRACE + 1
SECRET_TRACE = TRACE + 2


def failed_run() -> list[SpanRecord]:
    """A run that raised: its tool call timed out, and so did the run."""
    return [
        make_span(
            1, None, name="invoke_agent booker", start_ms=0, end_ms=50, trace_id=FAILED_TRACE,
            status="error", message="TimeoutError: the booking service did not answer",
            gen_ai__operation__name="invoke_agent", gen_ai__agent__name="booker",
            otel_prov__question="Book a table for two at 8pm.", error__type="TimeoutError",
        ),
        make_span(2, 1, name="iteration 1", start_ms=1, end_ms=49, trace_id=FAILED_TRACE,
                  otel_prov__iteration__number=1, otel_prov__action="book",
                  otel_prov__thought="I will book it.", otel_prov__arguments='{"seats": 2}'),
        make_span(3, 2, name="execute_tool book", start_ms=2, end_ms=48, trace_id=FAILED_TRACE,
                  status="error", message="the booking service did not answer",
                  gen_ai__operation__name="execute_tool", gen_ai__tool__name="book",
                  error__type="TimeoutError"),
    ]  # fmt: skip


def secret_run() -> list[SpanRecord]:
    return [
        make_span(
            1, None, name="invoke_agent keeper", start_ms=0, end_ms=30, trace_id=SECRET_TRACE,
            gen_ai__operation__name="invoke_agent", gen_ai__agent__name="keeper-b",
            otel_prov__question=f"What is {SECRET}?", otel_prov__answer=f"It is {SECRET}.",
        ),
        make_span(2, 1, name="iteration 1", start_ms=1, end_ms=29, trace_id=SECRET_TRACE,
                  otel_prov__iteration__number=1, otel_prov__action=f"tool-{SECRET}"),
        make_span(3, 2, name=f"execute_tool tool-{SECRET}", start_ms=2, end_ms=28,
                  trace_id=SECRET_TRACE, gen_ai__operation__name="execute_tool",
                  gen_ai__tool__name=f"tool-{SECRET}",
                  gen_ai__tool__call__arguments=json.dumps({"q": SECRET})),
    ]  # fmt: skip


@dataclass(frozen=True)
class Stored:
    store: Path
    tenants: Path
    demo: str
    """The trace id of the demo's run in the provenance graph."""
    team_a: str
    """The trace id of team-a's run (the demo, in its graph)."""


def _hex(trace: int) -> str:
    return f"{trace:032x}"


def _demo(store: Path, *tenant: str) -> str:
    done = run_cli("demo", "--store", str(store), *tenant)
    assert done.returncode == 0, done.stderr
    listed = run_cli("sessions", "--store", str(store), "--format", "json", *tenant)
    return str(json.loads(listed.stdout)[0]["trace_id"])


TAMPERED = "Not enough, said someone who rewrote the store."


def _tamper(store: Path) -> None:
    """The crossing run's answer rewritten after it was sealed: what verify must catch."""
    opened = pyoxigraph.Store(str(store))
    opened.update(
        f"""PREFIX prov: <http://www.w3.org/ns/prov#>
DELETE {{ GRAPH ?g {{ ?a prov:value "Enough." }} }}
INSERT {{ GRAPH ?g {{ ?a prov:value "{TAMPERED}" }} }}
WHERE {{ GRAPH ?g {{ ?a prov:value "Enough." }} }}"""
    )
    opened.flush()
    del opened


def build_store(folder: Path) -> Stored:
    store = folder / "store"
    demo = _demo(store)
    store_runs(store, failed_run(), crossing_run(), chain="mcp-tests")
    _tamper(store)
    team_a = _demo(store, "--tenant", "team-a")
    store_runs(store, secret_run(), graph=tenant_graph(DEFAULT_GRAPH, "team-b"), chain="team-b")
    tenants = folder / "tenants.json"
    tenants.write_text(
        json.dumps({"tenants": {name: {"tokens": [token]} for name, token in TOKENS.items()}})
    )
    return Stored(store, tenants, demo, team_a)


FAILED = _hex(FAILED_TRACE)
CROSSING = _hex(TRACE)
SECRET_RUN = _hex(SECRET_TRACE)
