"""``otel-prov mcp`` asked by the official MCP client over stdio and over streamable HTTP:
every tool, resource and the prompt, against a store with the demo, a failed run, a run
across two services and a run rewritten after it was sealed.  What a tool answers is
what the CLI prints for the same question (``--format json``)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyoxigraph
import pytest

from otel_prov.mcp_server._server import TOOLS
from otel_prov.mcp_server._tools import account_uri, turtle_uri
from otel_prov.read import open_store
from tests.cli import run_cli
from tests.mcp_reading.client import Connected, http_session, stdio_session
from tests.mcp_reading.store import CROSSING, FAILED, TAMPERED, Stored, build_store
from tests.serving import serving


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    return build_store(tmp_path_factory.mktemp("mcp"))


@pytest.fixture(scope="module", params=["stdio", "http"])
def client(request: pytest.FixtureRequest, stored: Stored) -> Iterator[Connected]:
    store = ("--store", str(stored.store))
    if request.param == "stdio":
        with stdio_session(*store) as connected:
            yield connected
        return
    with (
        serving(*store, command=("mcp", "--http", "127.0.0.1:0")) as served,
        http_session(served.url) as connected,
    ):
        yield connected


@functools.cache
def _cli_json(store: str, *args: str) -> Any:
    done = run_cli(*args, "--store", store, "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def cli(stored: Stored, *args: str) -> Any:
    """What ``otel-prov ARGS --format json`` prints about the test's store."""
    return _cli_json(str(stored.store), *args)


def _run_of(stored: Stored, trace: str) -> str:
    (found,) = open_store(stored.store).find(trace)
    return found


def test_every_tool_is_listed_read_only_with_its_schemas(client: Connected) -> None:
    listed = client.run(client.session.list_tools()).tools
    assert [tool.name for tool in listed] == list(TOOLS)
    for tool in listed:
        assert tool.description and len(tool.description) > 40, tool.name
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.annotations.open_world_hint is False
    schemas = {tool.name: tool.input_schema for tool in listed}
    assert schemas["show_run"]["required"] == ["run"]
    assert schemas["list_runs"]["properties"]["limit"]["maximum"] == 100
    status = json.dumps(schemas["list_runs"]["properties"]["status"])
    assert all(word in status for word in ("ok", "error", "incomplete"))
    assert schemas["sparql"]["required"] == ["query"]


def test_list_runs_is_the_session_list(client: Connected, stored: Stored) -> None:
    listed = client.ok("list_runs")
    assert listed["runs"] == cli(stored, "sessions")
    assert listed["next_cursor"] is None
    assert {run["trace_id"] for run in listed["runs"]} == {stored.demo, FAILED, CROSSING}
    failed = client.ok("list_runs", status="error")
    assert failed["runs"] == cli(stored, "sessions", "--status", "error")
    assert [run["trace_id"] for run in failed["runs"]] == [FAILED]
    found = client.ok("list_runs", text="PARIS")
    assert [run["trace_id"] for run in found["runs"]] == [stored.demo]
    assert client.ok("list_runs", agent="booker")["runs"] == cli(
        stored, "sessions", "--agent", "booker"
    )
    assert client.ok("list_runs", since="2026-01-01")["runs"] == cli(
        stored, "sessions", "--since", "2026-01-01"
    )


def test_list_runs_pages_by_cursor_through_every_run_once(client: Connected) -> None:
    seen, cursor = [], None
    while True:
        page = client.ok("list_runs", limit=1, cursor=cursor)
        seen += [run["id"] for run in page["runs"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [run["id"] for run in client.ok("list_runs")["runs"]]


@pytest.mark.parametrize("which", ["demo", "failed", "crossing"])
def test_show_run_is_show(client: Connected, stored: Stored, which: str) -> None:
    trace = {"demo": stored.demo, "failed": FAILED, "crossing": CROSSING}[which]
    shown = client.ok("show_run", run=trace)
    (expected,) = cli(stored, "show", trace)
    assert shown["run"] == expected
    assert shown["runs_named"] == [expected["id"]]
    assert shown["next_cursor"] is None and shown["steps_from"] == 1
    assert shown["account"] == account_uri(expected["id"])
    assert shown["turtle"] == turtle_uri(expected["id"])
    if which == "failed":
        assert shown["run"]["status"] == "error"
        assert shown["run"]["error_type"] == "TimeoutError"
        (step,) = shown["run"]["iterations"]
        assert step["tool_calls"][0]["status"] == "error"


def test_show_run_by_the_runs_iri_and_the_demo_tokens(client: Connected, stored: Stored) -> None:
    run = _run_of(stored, stored.demo)
    shown = client.ok("show_run", run=run)["run"]
    assert shown["id"] == run
    assert shown["tokens"]["input"] > 0 and shown["tokens"]["output"] > 0
    assert [step["number"] for step in shown["iterations"]] == [1, 2, 3, 4]


def test_why_is_why(client: Connected, stored: Stored) -> None:
    for trace in (stored.demo, FAILED, CROSSING):
        drawn = client.ok("why", id=trace)
        expected = cli(stored, "why", trace)
        assert {key: drawn[key] for key in ("root", "nodes", "edges")} == expected, trace
        assert drawn["next_cursor"] is None
    failed = client.ok("why", id=FAILED)
    # A run without an answer: why reaches its steps' calls, the failed one with its error.
    (call,) = [node for node in failed["nodes"] if node["type"] == "ToolCall"]
    assert (call["tool"], call["status"]) == ("book", "error") and call["error"]


def test_diff_runs_and_summarize_run_are_diff_and_summary(
    client: Connected, stored: Stored
) -> None:
    compared = client.ok("diff_runs", a=stored.demo, b=FAILED)
    assert compared == cli(stored, "diff", stored.demo, FAILED)
    assert compared["same"] is False and compared["first_divergence"] is not None
    assert client.ok("diff_runs", a=FAILED, b=FAILED)["same"] is True
    for trace in (stored.demo, FAILED):
        assert client.ok("summarize_run", run=trace) == cli(stored, "summary", trace)


def test_verify_says_which_run_was_rewritten_and_how(client: Connected, stored: Stored) -> None:
    checked = client.ok("verify")
    assert checked["checks"] == cli(stored, "verify")
    assert (checked["verified"], checked["failed"]) == (2, 1)
    failed = client.ok("verify", only_failed=True)
    (check,) = failed["checks"]
    assert check["session"] == _run_of(stored, CROSSING)
    assert any("answer" in problem for problem in check["problems"]), check
    assert "--trust" in checked["note"]
    one = client.ok("verify", run=FAILED)
    assert one["checks"] == cli(stored, "verify", FAILED)


def test_trace_spans_name_the_services_around_a_run(client: Connected, stored: Stored) -> None:
    spans = client.ok("trace_spans", id=CROSSING)
    assert spans["services"] == ["agent-service", "research-service"]
    assert spans["runs"] == [_run_of(stored, CROSSING)]
    expected = open_store(stored.store).trace_spans(CROSSING)
    assert [span["id"] for span in spans["spans"]] == [span.id for span in expected]
    assert {span["name"] for span in spans["spans"]} >= {"GET", "POST /run", "SELECT papers"}
    # By the run, too: the run's trace.
    by_run = client.ok("trace_spans", id=_run_of(stored, CROSSING))
    assert by_run["spans"] == spans["spans"]


QUERIES = {
    "select": "SELECT ?tool (COUNT(*) AS ?n) WHERE { ?c a oprov:ToolCall ; oprov:toolName ?tool }"
    " GROUP BY ?tool ORDER BY ?tool",
    "prefixed": "PREFIX p: <http://www.w3.org/ns/prov#>\n"
    "SELECT ?v WHERE { ?a a oprov:Answer ; p:value ?v } ORDER BY ?v",
    "limited": "SELECT ?s WHERE { ?s a prov:Activity } ORDER BY ?s LIMIT 3",
}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_sparql_answers_as_query_does(client: Connected, stored: Stored, name: str) -> None:
    answered = client.ok("sparql", query=QUERIES[name])
    assert answered["kind"] == "select"
    assert answered["rows"] == cli(stored, "query", QUERIES[name])
    assert answered["next_cursor"] is None


def test_sparql_pages_rows_ask_and_graphs(client: Connected, stored: Stored) -> None:
    query = "SELECT ?s WHERE { ?s a prov:Activity } ORDER BY ?s"
    everything = cli(stored, "query", query)
    seen, cursor = [], None
    while True:
        page = client.ok("sparql", query=query, limit=7, cursor=cursor)
        assert len(page["rows"]) <= 7
        seen += page["rows"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == everything and len(everything) > 7
    asked = client.ok("sparql", query="ASK { ?a a oprov:Answer ; prov:value ?v }")
    assert asked == {"kind": "ask", "boolean": True, "next_cursor": None}
    run = _run_of(stored, FAILED)
    graph = client.ok("sparql", query=f"DESCRIBE <{run}>")
    assert graph["kind"] == "graph" and graph["triples"] > 3
    parsed = list(pyoxigraph.parse(graph["turtle"], pyoxigraph.RdfFormat.TURTLE))
    assert len(parsed) == graph["triples"]
    assert {str(quad.subject) for quad in parsed} == {f"<{run}>"}


def test_sparql_refuses_what_it_must(client: Connected) -> None:
    for query, said in (
        ("DELETE WHERE { ?s ?p ?o }", "only SELECT, ASK, CONSTRUCT or DESCRIBE"),
        ("INSERT DATA { <urn:a> <urn:b> <urn:c> }", "an update is never sent"),
        ("SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }", "SERVICE"),
        ("SELECT * WHERE { SERVICE ?where { ?s ?p ?o } }", "variable"),
        ("SELECT ?x WHERE { ?x nope:p ?y }", "unknown prefix 'nope:'"),
        ("SELECT WHERE {", "invalid SPARQL"),
    ):
        answer = client.call("sparql", query=query)
        assert answer.error and said in answer.text, (query, answer)


def test_resources_are_the_account_and_the_turtle(client: Connected, stored: Stored) -> None:
    listed = client.run(client.session.list_resource_templates()).resource_templates
    assert {template.uri_template for template in listed} == {
        "otel-prov://runs/{run}",
        "otel-prov://runs/{run}/turtle",
    }
    run = _run_of(stored, FAILED)
    turtle = client.read(turtle_uri(run))
    shown = run_cli("show", FAILED, "--store", str(stored.store), "--format", "turtle")
    assert turtle.rstrip("\n") == shown.stdout.rstrip("\n")
    account = client.read(account_uri(run))
    assert account.startswith(f"# Run {run}\n")
    for sentence in cli(stored, "summary", FAILED)["sentences"]:
        assert f"- {sentence['text']}" in account
    assert "```mermaid\nflowchart TD" in account and "TimeoutError" in account
    # By trace id, as every tool takes it.
    assert client.read(account_uri(FAILED)) == account


def test_the_prompt_explains_a_run_with_its_account(client: Connected, stored: Stored) -> None:
    (prompt,) = client.run(client.session.list_prompts()).prompts
    assert prompt.name == "explain_run" and [a.name for a in prompt.arguments or []] == ["run"]
    got = client.run(client.session.get_prompt("explain_run", {"run": FAILED}))
    (message,) = got.messages
    text = getattr(message.content, "text", "")
    assert message.role == "user" and "failed" in text and "Book a table for two" in text


def test_the_tampered_answer_is_what_the_reader_sees(client: Connected) -> None:
    shown = client.ok("show_run", run=CROSSING)["run"]
    assert shown["answer"] == TAMPERED


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("show_run", {"run": "no-such-run"}),
        ("why", {"id": "urn:otel-prov:nothing"}),
        ("summarize_run", {"run": "0" * 32}),
        ("trace_spans", {"id": "f" * 32}),
        ("verify", {"run": "no-such-run"}),
        ("diff_runs", {"a": "no-such-run", "b": FAILED}),
    ],
)
def test_an_unknown_id_is_a_tool_error_naming_it(
    client: Connected, tool: str, arguments: dict[str, str]
) -> None:
    answer = client.call(tool, **arguments)
    assert answer.error, answer
    named = next(iter(arguments.values()))
    assert named in answer.text and "Traceback" not in answer.text


def test_bad_arguments_are_errors_that_say_what(client: Connected) -> None:
    for tool, arguments, said in (
        ("list_runs", {"status": "exploded"}, "status"),
        ("list_runs", {"limit": 0}, "limit"),
        ("list_runs", {"since": "last tuesday"}, "last tuesday"),
        ("list_runs", {"cursor": "not-a-cursor"}, "cursor"),
        ("show_run", {"run": FAILED, "cursor": "bm9wZQ"}, "cursor"),
        ("sparql", {"query": "SELECT * WHERE { ?s ?p ?o }", "limit": 100_000}, "limit"),
        ("show_run", {}, "run"),
        ("no_such_tool", {}, "no_such_tool"),
    ):
        answer = client.call(tool, **arguments)
        assert answer.error and said in answer.text, (tool, arguments, answer)
    # A cursor of one run is refused for another.
    shown_cursor = client.ok("list_runs", limit=1)["next_cursor"]
    answer = client.call("show_run", run=FAILED, cursor=shown_cursor)
    assert answer.error and "cursor" in answer.text


HOSTILE = [
    '"} } ; DROP ALL ; INSERT DATA { GRAPH <urn:pwn> { <urn:a> <urn:b> <urn:c> } } #',
    "<urn:otel-prov:x> ?p ?o } UNION { ?s ?p ?o",
    "\u0000\u2028\U0001f600 \\u0041 '''",
    "x" * 1_999,
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_are_answered_and_change_nothing(
    client: Connected, stored: Stored, text: str
) -> None:
    for tool, arguments in (
        ("show_run", {"run": text}),
        ("why", {"id": text}),
        ("trace_spans", {"id": text}),
        ("list_runs", {"agent": text, "text": text, "service": text}),
    ):
        answer = client.call(tool, **arguments)
        if tool == "list_runs":
            assert not answer.error and answer.data["runs"] == [], answer
        else:
            assert answer.error and "Traceback" not in answer.text, (tool, answer)
    assert len(client.ok("list_runs")["runs"]) == 3  # nothing dropped, nothing added


def test_every_value_comes_back_whole_when_it_fits(client: Connected, stored: Stored) -> None:
    """Nothing is cut from runs this small: no result says it cut anything."""
    for tool, arguments in (
        ("list_runs", {}),
        ("show_run", {"run": stored.demo}),
        ("why", {"id": stored.demo}),
        ("trace_spans", {"id": CROSSING}),
    ):
        assert "cut" not in client.ok(tool, **arguments), tool


def test_the_store_path_is_read_as_serve_reads_it(tmp_path: Path, stored: Stored) -> None:
    """A store that is not there stops the server at start, with one line."""
    done = run_cli("mcp", "--store", str(tmp_path / "nowhere"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"otel-prov: no provenance store at {tmp_path / 'nowhere'} (run an instrumented agent "
        "or 'otel-prov demo' first, or pass --store)"
    ]
    assert done.stdout == ""
