"""A query someone typed never makes us fetch from another endpoint (SERVICE), unless the
endpoint was allowed by name: the check reads the parsed query, not its text.

``otel-prov query`` is run as a user runs it, over a real embedded store, with a local
HTTP server as the endpoint SERVICE names: it must get no request at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_prov.read._user_query import ServiceRefusedError, check_user_query
from tests.cli import run_cli, write_demo_store
from tests.serving import TARGET_BODY, counting_target

EP = "http://127.0.0.1:9/sparql"

CALLS_SERVICE = {
    "plain": f"SELECT * WHERE {{ SERVICE <{EP}> {{ ?s ?p ?o }} }}",
    "lower case, no space": f"select * where {{ service<{EP}> {{ ?s ?p ?o }} }}",
    "silent": f"SELECT * WHERE {{ SERVICE SILENT <{EP}> {{ ?s ?p ?o }} }}",
    "a variable": "SELECT * WHERE { VALUES ?e { <http://x/> } SERVICE ?e { ?s ?p ?o } }",
    "a prefixed IRI": "PREFIX ex: <http://127.0.0.1:9/>\nASK { SeRvIcE ex:sparql { ?s ?p ?o } }",
    "a predeclared prefix": "ASK { SERVICE oprov:x { ?s ?p ?o } }",
    "a relative IRI under BASE": "BASE <http://127.0.0.1:9/>\nASK { SERVICE <sparql> { } }",
    "after comments": f"# SELECT\n#{{ }}\nSELECT * {{ # SERVICE\n SERVICE <{EP}> {{ }} }}",
    "in a nested subquery": (
        f"SELECT * {{ {{ SELECT ?s {{ OPTIONAL {{ {{ SELECT * {{ SERVICE <{EP}> {{ ?s ?p ?o }} "
        "} } } } } }"
    ),
    "in FILTER EXISTS": f"ASK {{ ?s ?p ?o FILTER NOT EXISTS {{ SERVICE <{EP}> {{ }} }} }}",
    "in BIND EXISTS": f"SELECT * {{ BIND(EXISTS {{ SERVICE <{EP}> {{ }} }} AS ?b) }}",
    "in a UNION, in a CONSTRUCT": (
        f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ {{ ?s ?p ?o }} UNION "
        f"{{ SERVICE <{EP}> {{ ?s ?p ?o }} }} }}"
    ),
    # Decoded before keywords are read, as SPARQL 1.1 (19.2) has it and some stores do.
    "a \\u escape": f"SELECT * WHERE {{ \\u0053ERVICE <{EP}> {{ ?s ?p ?o }} }}",
    "in DESCRIBE": f"DESCRIBE ?s WHERE {{ MINUS {{ SERVICE <{EP}> {{ ?s ?p ?o }} }} }}",
}

MENTIONS_SERVICE_ONLY = {
    "a comment": f"SELECT * WHERE {{ ?s ?p ?o }} # SERVICE <{EP}> {{ }}",
    "a string": f'SELECT * WHERE {{ ?s ?p "SERVICE <{EP}> {{ }}" }}',
    "an IRI": "SELECT * WHERE { ?s <urn:SERVICE> ?o }",
    "a prefixed name": "PREFIX ex: <urn:x:>\nSELECT * WHERE { ?s ex:SERVICE ?service }",
    "a \\u escape in a string": 'SELECT * WHERE { ?s oprov:serviceName "caf\\u00e9" }',
}


@pytest.mark.parametrize("text", CALLS_SERVICE.values(), ids=CALLS_SERVICE.keys())
def test_every_spelling_and_place_of_service_is_refused(text: str) -> None:
    with pytest.raises(ServiceRefusedError, match=r"^SERVICE .* is refused"):
        check_user_query(text)


@pytest.mark.parametrize("text", MENTIONS_SERVICE_ONLY.values(), ids=MENTIONS_SERVICE_ONLY.keys())
def test_the_word_service_outside_the_grammar_is_no_service(text: str) -> None:
    check_user_query(text)


def test_an_allowed_endpoint_is_the_iri_the_query_resolves_to_and_nothing_else() -> None:
    allowed = (EP,)
    check_user_query(CALLS_SERVICE["silent"], allow_service=allowed)
    check_user_query(CALLS_SERVICE["a prefixed IRI"], allow_service=allowed)
    check_user_query(CALLS_SERVICE["a relative IRI under BASE"], allow_service=allowed)
    with pytest.raises(ServiceRefusedError, match=r"SERVICE <http://127\.0\.0\.1:9/other>"):
        check_user_query(CALLS_SERVICE["plain"].replace("/sparql", "/other"), allow_service=allowed)
    with pytest.raises(ServiceRefusedError, match=r"SERVICE \?e .*variable"):
        check_user_query(CALLS_SERVICE["a variable"], allow_service=allowed)


def test_a_query_the_check_cannot_read_is_not_sent() -> None:
    """rdflib's parser knows no SPARQL 1.2 and nests only so deep: such a query that might
    call SERVICE is refused as unreadable, not sent unchecked."""
    with pytest.raises(ValueError, match=r"^invalid SPARQL"):
        check_user_query("SELECT * WHERE { << ?s ?p ?o >> ?q ?r . SERVICE <urn:x> {} }")
    deep = "SELECT * WHERE { FILTER(" + "(" * 200 + "1" + ")" * 200 + ") SERVICE <urn:x> {} }"
    with pytest.raises(ValueError, match=r"^invalid SPARQL"):
        check_user_query(deep)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_demo_store(tmp_path_factory.mktemp("service"))


def test_query_refuses_service_and_the_endpoint_gets_no_request(store: Path) -> None:
    with counting_target() as target:
        query = f"SELECT * WHERE {{ ?c oprov:toolName ?t . SERVICE <{target.url}> {{ ?s ?p ?o }} }}"
        refused = run_cli("query", query, "--store", str(store))
        assert refused.returncode == 2, refused.stderr
        assert f"SERVICE <{target.url}> is refused" in refused.stderr
        assert "--allow-service" in refused.stderr and TARGET_BODY not in refused.stderr
        assert target.requests == []
        # Allowed by name, the same query does reach it: the count above can see a request.
        allowed = run_cli("query", query, "--store", str(store), "--allow-service", target.url)
        assert allowed.returncode == 2 and target.requests, allowed.stderr
