"""The ``otel-prov`` command: run as users run it, exit codes and output formats."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

import pyoxigraph
import pytest

from otel_prov.cli._commands import COMMANDS, parser
from otel_prov.cli._exit import ExitCode
from tests.cli import run_cli


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "store"
    result = run_cli("demo", "--store", str(path))
    assert result.returncode == 0, result.stderr
    assert "tool call    get_weather [call_1] FAILED TimeoutError" in result.stdout
    assert "get_weather  call_2  Paris: 18 °C, light rain" in result.stdout
    return path


def test_demo_in_a_fresh_directory_uses_the_default_store(tmp_path: Path) -> None:
    result = run_cli("demo", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / ".otel-prov" / "store").is_dir()
    assert "answer       It is 64.4 °F (18 °C) in Paris, with light rain." in result.stdout


def test_sessions_table_and_json(store: Path) -> None:
    table = run_cli("sessions", "--store", str(store))
    assert table.returncode == 0
    header, row = table.stdout.splitlines()
    assert header.split() == [
        "ID",
        "START",
        "AGENT",
        "SERVICE",
        "QUESTION",
        "ITER",
        "TOOLS",
        "FAILED",
        "STATUS",
        "TRACE",
    ]
    assert "weather-assistant  otel-prov-demo  What" in row and " 4 " in row and " 3 " in row
    (session,) = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    assert session["service"] == "otel-prov-demo"  # what --service filters on
    assert run_cli("sessions", "--store", str(store), "--service", "otel-prov-demo").stdout == (
        table.stdout
    )
    assert session["iterations"] == 4 and session["tool_calls"] == 3
    # The demo's weather tool fails once and the agent carries on: the session says both.
    assert session["status"] == "ok" and session["failed_calls"] == 1
    assert len(session["trace_id"]) == 32


def test_show_by_session_trace_and_conversation_id(store: Path) -> None:
    (session,) = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    outputs = {
        ident: run_cli("show", ident, "--store", str(store), "--format", "json")
        for ident in (session["id"], session["trace_id"], "demo-conversation")
    }
    for result in outputs.values():
        assert result.returncode == 0, result.stderr
    (view,) = json.loads(outputs["demo-conversation"].stdout)
    assert view["question"].startswith("What is the temperature in Paris")
    assert [it["number"] for it in view["iterations"]] == [1, 2, 3, 4]
    first_call = view["iterations"][0]["tool_calls"][0]
    assert first_call["status"] == "error" and first_call["error_type"] == "TimeoutError"
    assert (view["status"], view["failed_calls"]) == ("ok", 1)
    text = run_cli("show", "demo-conversation", "--store", str(store)).stdout
    assert "  status       ok\n  failed calls 1\n" in text
    assert first_call["observation"] is None
    assert view["iterations"][1]["tool_calls"][0]["observation"] == "Paris: 18 °C, light rain"
    assert json.loads(outputs[session["trace_id"]].stdout) == [view]


def test_show_turtle_parses_and_mermaid_draws(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    turtle = run_cli("show", "demo-conversation", "--store", str(store), "--format", "turtle")
    assert turtle.returncode == 0
    triples = list(pyoxigraph.parse(turtle.stdout, pyoxigraph.RdfFormat.TURTLE))
    assert len(triples) > 100
    assert "@prefix prov: <http://www.w3.org/ns/prov#>" in turtle.stdout
    mermaid = run_cli("show", "demo-conversation", "--store", str(store), "--format", "mermaid")
    assert mermaid.stdout.startswith("flowchart TD") and "get_weather (failed)" in mermaid.stdout


def test_show_prints_jaeger_and_tempo_links_when_configured(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_PROV_JAEGER_URL", "http://jaeger.local/trace/{trace_id}")
    monkeypatch.setenv("OTEL_PROV_TEMPO_URL", "http://grafana.local/explore?traceId={trace_id}")
    result = run_cli("show", "demo-conversation", "--store", str(store))
    lines = {
        line.split()[0]: line.split()[1]
        for line in result.stdout.splitlines()
        if line.startswith(("trace", "jaeger", "tempo"))
    }
    trace_id = lines["trace"]
    assert len(trace_id) == 32
    assert lines["jaeger"] == f"http://jaeger.local/trace/{trace_id}"
    assert lines["tempo"] == f"http://grafana.local/explore?traceId={trace_id}"


def test_sessions_json_rows_link_their_traces_when_configured(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    assert all("trace_links" not in row for row in plain)
    monkeypatch.setenv("OTEL_PROV_JAEGER_URL", "http://jaeger.local/trace/{trace_id}")
    monkeypatch.setenv("OTEL_PROV_TEMPO_URL", "http://grafana.local/explore?traceId={trace_id}")
    rows = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    assert rows and all(
        row["trace_links"]
        == {
            "jaeger": f"http://jaeger.local/trace/{row['trace_id']}",
            "tempo": f"http://grafana.local/explore?traceId={row['trace_id']}",
        }
        for row in rows
    )


def test_unknown_id_is_exit_1_with_a_message(store: Path) -> None:
    result = run_cli("show", "no-such-session", "--store", str(store))
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip() == (
        "otel-prov: no session with id, trace id or conversation id 'no-such-session'"
    )


def test_missing_store_is_exit_2(tmp_path: Path) -> None:
    result = run_cli("sessions", "--store", str(tmp_path / "nowhere"))
    assert result.returncode == 2
    assert result.stderr.startswith("otel-prov: no provenance store at")
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_query_formats_and_stdin(store: Path, fmt: str) -> None:
    sparql = (
        "PREFIX oprov: <https://w3id.org/otel-prov/ns#> "
        "SELECT ?tool (COUNT(*) AS ?calls) WHERE { ?c oprov:toolName ?tool ; a oprov:ToolCall } "
        "GROUP BY ?tool ORDER BY ?tool"
    )
    result = run_cli("query", "-", "--store", str(store), "--format", fmt, stdin=sparql)
    assert result.returncode == 0, result.stderr
    if fmt == "json":
        assert json.loads(result.stdout) == [
            {"tool": "calculator", "calls": 1},
            {"tool": "get_weather", "calls": 2},
        ]
    elif fmt == "csv":
        assert result.stdout == "tool,calls\ncalculator,1\nget_weather,2\n"
    else:
        assert result.stdout.split() == ["tool", "calls", "calculator", "1", "get_weather", "2"]


TYPED = (
    "SELECT (COUNT(*) AS ?n) (SUM(?one) AS ?sum) (1.5 AS ?decimal) (1e3 AS ?double) "
    '(true AS ?yes) ("7" AS ?text) ("NaN"^^xsd:double AS ?nan) ("x"^^xsd:integer AS ?bad) '
    "(<urn:x> AS ?iri) (SAMPLE(?none) AS ?unbound) WHERE { ?c a oprov:ToolCall BIND(1 AS ?one) }"
)
"""A literal of each JSON type, and values JSON has no number for (kept as their text)."""


def test_query_json_gives_numbers_and_booleans_their_json_types(store: Path) -> None:
    result = run_cli("query", TYPED, "--store", str(store), "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [
        {
            "n": 3,
            "sum": 3,
            "decimal": 1.5,
            "double": 1000.0,
            "yes": True,
            "text": "7",
            "nan": "NaN",
            "bad": "x",
            "iri": "urn:x",
            "unbound": None,
        }
    ]
    csv = run_cli("query", TYPED, "--store", str(store), "--format", "csv")
    assert csv.stdout.splitlines()[1] == "3,3,1.5,1000,true,7,NaN,x,urn:x,"  # the store's text


def test_the_query_help_example_has_one_row_per_tool_call(store: Path) -> None:
    """The example as ``query --help`` prints it, run on the demo run: tools carry
    ``oprov:toolName`` too, so a pattern matching anything with a tool name over-counts."""
    helped = run_cli("query", "--help").stdout
    example = helped[helped.index("\nexample: ") :].removeprefix("\nexample: ")
    program, command, sparql = shlex.split(example)  # argparse wraps it: newlines in quotes
    assert (program, command) == ("otel-prov", "query")
    result = run_cli("query", sparql, "--store", str(store), "--format", "json")
    assert result.returncode == 0, result.stderr
    (session,) = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    assert len(json.loads(result.stdout)) == session["tool_calls"] == 3


def test_query_with_no_answer_is_exit_1_and_bad_sparql_exit_2(store: Path) -> None:
    empty = run_cli("query", "SELECT * WHERE { ?s <urn:nothing> ?o }", "--store", str(store))
    assert empty.returncode == 1
    bad = run_cli("query", "SELECT WHERE {", "--store", str(store))
    assert bad.returncode == 2 and bad.stderr.startswith("otel-prov: invalid SPARQL")


def test_usage_errors_are_exit_2() -> None:
    bare = run_cli()
    assert bare.returncode == 2 and "COMMAND" in bare.stderr and "sessions" in bare.stderr
    assert run_cli("show").returncode == 2
    assert run_cli("sessions", "--format", "xml").returncode == 2
    helped = run_cli("--help")
    assert helped.returncode == 0 and "sessions" in helped.stdout


def test_exit_codes_have_the_three_documented_values() -> None:
    assert {code.name: int(code) for code in ExitCode.__members__.values()} == {
        "OK": 0,
        "NOTHING_FOUND": 1,
        "USAGE_ERROR": 2,
    }
    assert ExitCode.CHECK_FAILED is ExitCode.NOTHING_FOUND
    assert ExitCode.STORE_ERROR is ExitCode.USAGE_ERROR


def test_every_command_the_parser_offers_has_a_handler() -> None:
    assert set(subcommands(parser())) == set(COMMANDS)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("sessions",), ExitCode.OK),
        (("verify",), ExitCode.OK),
        (("query", "ASK { ?s a ?type }"), ExitCode.OK),
        (("show", "no-such-session"), ExitCode.NOTHING_FOUND),
        (("query", "ASK { ?s <urn:nothing> ?o }"), ExitCode.NOTHING_FOUND),
        (("query", "CONSTRUCT { ?s ?p ?o } WHERE { ?s <urn:nothing> ?o }"), ExitCode.NOTHING_FOUND),
        (("verify", "no-such-session", "--all"), ExitCode.USAGE_ERROR),
        (("query", "SELECT WHERE {"), ExitCode.USAGE_ERROR),
        (("sessions", "--graph", "<not an iri>"), ExitCode.USAGE_ERROR),
    ],
)
def test_exit_code_says_what_happened(store: Path, args: tuple[str, ...], code: int) -> None:
    result = run_cli(*args, "--store", str(store))
    assert result.returncode == code, result.stderr


def test_batches_waiting_in_the_spool_are_a_failed_check(tmp_path: Path) -> None:
    assert run_cli("status", "--spool-dir", str(tmp_path)).returncode == ExitCode.OK
    (tmp_path / "batch-1.nq").write_text("<urn:s> <urn:p> <urn:o> .\n", encoding="utf-8")
    waiting = run_cli("status", "--spool-dir", str(tmp_path))
    assert waiting.returncode == ExitCode.CHECK_FAILED, waiting.stderr


def test_a_store_that_cannot_be_opened_is_a_store_error(tmp_path: Path) -> None:
    result = run_cli("show", "x", "--store", str(tmp_path / "nowhere"))
    assert result.returncode == ExitCode.STORE_ERROR
    assert result.stderr.startswith("otel-prov: no provenance store at")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("sessions", "--limit", "-1"), "argument --limit: expected a whole number of 1 or more"),
        (("sessions", "--graph", "not an iri"), "argument --graph: "),
        (("show", "x", "--store", "pyproject.toml"), "argument --store: pyproject.toml is a file"),
        (("demo", "--store", "pyproject.toml"), "argument --store: pyproject.toml is a file"),
    ],
)
def test_bad_flags_are_usage_errors_that_name_the_flag(args: tuple[str, ...], message: str) -> None:
    result = run_cli(*args, cwd=Path(__file__).resolve().parent.parent)
    assert result.returncode == ExitCode.USAGE_ERROR
    assert message in result.stderr and "Traceback" not in result.stderr


def test_verify_of_an_unknown_id_says_what_show_says(store: Path) -> None:
    shown = run_cli("show", "no-such-session", "--store", str(store))
    verified = run_cli("verify", "no-such-session", "--store", str(store))
    assert verified.returncode == shown.returncode == ExitCode.NOTHING_FOUND
    assert verified.stderr == shown.stderr


def test_help_describes_every_format_default_and_an_example() -> None:
    top = parser()
    for name, sub in subcommands(top).items():
        text = sub.format_help()
        assert f"example: otel-prov {name}" in text, name
        formats = [a for a in sub._actions if a.dest == "format"]
        for action in formats:
            assert action.choices is not None and action.help is not None
            for choice in action.choices:
                assert f"{choice}{' (default)' if choice == action.default else ''}:" in action.help
        helps = {action.dest: action.help or "" for action in sub._actions}
        if name not in ("status", "keygen"):  # they neither read nor write a store
            assert "(default: $OTEL_PROV_GRAPH or urn:otel-prov:graph)" in helps["graph"]
            assert "or .otel-prov/store)" in helps["store"]


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (choices,) = [
        action.choices
        for action in parser._actions
        if isinstance(action.choices, dict) and "show" in action.choices
    ]
    return dict(choices)


def test_status_with_the_embedded_store_says_there_is_no_spool_and_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_PROV_SPARQL_UPDATE_ENDPOINT", raising=False)
    result = run_cli("status", "--spool-dir", str(tmp_path / "never-made"))
    assert result.returncode == ExitCode.OK, result.stderr
    assert "embedded store directly, with no spool" in result.stdout
