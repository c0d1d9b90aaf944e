"""What a reader of one tenant asks ``otel-prov mcp`` about another's runs, through every
tool, resource and the prompt (``test_tenants``, and on SPARQL servers
``tests/integration/test_mcp_remote.py``)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from otel_prov._tenants import tenant_graph
from otel_prov.exporters._base import DEFAULT_GRAPH
from otel_prov.mcp_server._tools import account_uri, turtle_uri
from otel_prov.read import open_store
from tests.mcp_reading.client import Connected
from tests.mcp_reading.store import CROSSING, FAILED, SECRET, SECRET_RUN, Stored
from tests.tenant_queries import naming, reading

__all__ = ["Tenant", "everything_asked", "leaks", "tenants_of"]


@dataclass(frozen=True)
class Tenant:
    name: str
    trace: str
    """Its run's trace id."""
    run: str
    """Its run's IRI."""
    marker: str
    """A text found in its graph only."""


def tenants_of(stored: Stored) -> dict[str, Tenant]:
    """The two tenants of the test store, with their runs' IRIs."""

    def run(name: str, trace: str) -> str:
        (found,) = open_store(stored.store, graph=tenant_graph(DEFAULT_GRAPH, name)).find(trace)
        return found

    return {
        "team-a": Tenant("team-a", stored.team_a, run("team-a", stored.team_a), stored.team_a),
        "team-b": Tenant("team-b", SECRET_RUN, run("team-b", SECRET_RUN), SECRET),
    }


def leaks(said: list[str], stored: Stored, other: Tenant) -> list[tuple[str, str]]:
    """Each text of ``other``'s (or of the graph outside the tenants) found in ``said``."""
    return [(marker, text) for text in said for marker in _foreign(stored, other) if marker in text]


def _foreign(stored: Stored, other: Tenant) -> list[str]:
    """What a reader of another tenant must never be told: the other's run, its graph,
    and the runs outside the tenants' graphs."""
    return [
        other.marker,
        other.trace,
        tenant_graph(DEFAULT_GRAPH, other.name),
        stored.demo,
        CROSSING,
        FAILED,
    ]


def everything_asked(
    client: Connected, own: Tenant, other: Tenant, *, store_may_refuse: bool = False
) -> list[str]:
    """Every tool, resource and the prompt asked about the other tenant (its ids, guessed
    IRIs, hostile queries), and about the reader's own run: each answer's text, without
    the id it was asked about (an error names what it was asked).  ``store_may_refuse``:
    a SPARQL server may refuse a hostile query (an error, which must leak nothing
    either)."""
    said: list[str] = []
    guessed = [other.trace, other.run, f"{other.run}:answer", f"{other.run}:question"]
    for ident in guessed:
        for tool, arguments in (
            ("show_run", {"run": ident}),
            ("why", {"id": ident}),
            ("summarize_run", {"run": ident}),
            ("trace_spans", {"id": ident}),
            ("verify", {"run": ident}),
            ("diff_runs", {"a": own.trace, "b": ident}),
        ):
            answer = client.call(tool, **arguments)
            assert answer.error, (tool, ident, answer)  # none of it is there for this reader
            said.append(answer.text.replace(repr(ident), "ID"))
        for uri in (account_uri(ident), turtle_uri(ident)):
            with pytest.raises(Exception) as refused:
                client.read(uri)
            said.append(str(refused.value).replace(repr(ident), "ID").replace(uri, "URI"))
        with pytest.raises(Exception) as refused:
            client.run(client.session.get_prompt("explain_run", {"run": ident}))
        said.append(str(refused.value).replace(repr(ident), "ID"))
    for tool, arguments in (
        ("list_runs", {}),
        ("list_runs", {"text": other.marker[:12]}),
        ("list_runs", {"agent": "keeper-b"}),
        ("verify", {}),
        ("show_run", {"run": own.trace}),
        ("why", {"id": own.trace}),
        ("trace_spans", {"id": own.trace}),
    ):
        answer = client.call(tool, **arguments)
        assert not answer.error, (tool, answer)
        said.append(answer.text)
    other_graph = tenant_graph(DEFAULT_GRAPH, other.name)
    for name, query in reading(other_graph, other.marker).items():
        answer = client.call("sparql", query=query, limit=1000)
        # Virtuoso answers 500 to some of these (DESCRIBE over GRAPH ?g with a dataset).
        assert store_may_refuse or not answer.error, (name, answer)
        said.append(answer.text)
    for name, query in naming(other_graph).items():
        answer = client.call("sparql", query=query)
        assert answer.error and "refused" in answer.text, (name, answer)
    return said
