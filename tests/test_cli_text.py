"""What ``otel-prov`` makes of the text it is given: queries, and agent text on a terminal."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pyoxigraph
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import otel_prov
from otel_prov.cli._render import _fixed_width_time
from otel_prov.cli._terminal import printable
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.read._confinement import Confinement
from otel_prov.read._user_query import (
    QUERY_FORMS,
    _undeclared,
    line_and_column,
    query_form,
    run_user_query,
    undeclared_prefixes,
    with_prefixes,
)
from otel_prov.view._labels import shortened
from tests.cli import run_cli

UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")

UPDATES = ("INSERT", "DELETE", "DROP", "CLEAR", "LOAD", "CREATE", "ADD", "MOVE", "COPY", "WITH")

comments = st.lists(
    st.text(st.characters(blacklist_characters="\n\r"), max_size=20).map(lambda t: f"# {t}\n"),
    max_size=2,
)
iris = st.text(st.sampled_from("abc:/#SELECTDROP"), max_size=12).map(lambda t: f"<urn:{t}>")
declarations = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["", "a", "oprov", "x1"]), iris).map(
            lambda d: f"PREFIX {d[0]}: {d[1]}\n"
        ),
        iris.map(lambda iri: f"BASE {iri} "),
        comments.map("".join),
    ),
    max_size=4,
).map("".join)
cases: st.SearchStrategy[Callable[[str], str]] = st.sampled_from([str.upper, str.lower, str.title])


@settings(max_examples=300)
@given(prologue=declarations, keyword=st.sampled_from(UPDATES), case=cases, rest=st.text())
def test_an_update_is_never_taken_for_a_query(
    prologue: str, keyword: str, case: Callable[[str], str], rest: str
) -> None:
    assert query_form(f"{prologue}{case(keyword)} {rest}") is None


@settings(max_examples=300)
@given(prologue=declarations, form=st.sampled_from(QUERY_FORMS), case=cases, rest=st.text())
def test_a_query_form_is_found_after_any_prologue(
    prologue: str, form: str, case: Callable[[str], str], rest: str
) -> None:
    assert query_form(f"{prologue}{case(form)} {rest}") == form


@settings(max_examples=200)
@given(text=st.text())
def test_a_found_form_is_the_first_word_after_the_prologue(text: str) -> None:
    form = query_form(text)
    if form is not None:
        stripped = re.sub(r"(?:\s+|#[^\n\r]*|(?:BASE|PREFIX)\s*[^<]*<[^>]*>)*", "", text, count=1)
        assert re.match(form, stripped, re.I)


def test_prefixes_are_predeclared_only_where_used_and_an_unknown_one_is_named() -> None:
    query = 'SELECT ?t WHERE { ?s a oprov:Thought ; foo:x "bar:baz" ; <urn:q:r> ?t . ?t ex:y _:b }'
    assert undeclared_prefixes(query) == ["foo:", "ex:"]
    first, rest = with_prefixes(query).split("\n", 1)
    assert rest == query
    assert first == "PREFIX oprov: <https://w3id.org/otel-prov/ns#>"
    declared = "PREFIX oprov: <urn:mine#>\nSELECT * { ?s oprov:x ?o }"
    assert with_prefixes(declared) == declared and undeclared_prefixes(declared) == []


@settings(max_examples=300)
@given(text=st.text())
def test_printable_leaves_no_character_a_terminal_acts_on(text: str) -> None:
    shown = printable(text)
    assert not UNSAFE.search(shown)
    assert not re.search("[\ud800-\udfff]", shown)
    if not UNSAFE.search(text) and not re.search("[\ud800-\udfff]", text):
        assert shown == text


def test_escapes_are_shown_as_python_writes_them() -> None:
    assert printable("a\x1b[31mb\rc\u202ed\ttab\nline") == "a\\x1b[31mb\\x0dc\\u202ed\ttab\nline"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("terminal") / "store"
    handle = otel_prov.configure(store=path, set_global=False, otlp=False)
    p = handle.tracer_provider
    with otel_prov.agent_session(
        "\x1b]0;pwned\x07agent", question="\x1b[2Jclear?", conversation_id="ansi", tracer_provider=p
    ):
        with otel_prov.iteration(1, thought="\x1b[31mred\r", action="x", tracer_provider=p):
            pass
        otel_prov.set_answer("4\u202e")
    handle.shutdown()
    return path


@pytest.mark.parametrize(
    "args",
    [
        ("show", "ansi"),
        ("sessions",),
        ("query", "SELECT ?v WHERE { ?e prov:value ?v }"),
    ],
)
def test_terminal_output_shows_control_characters_escaped(
    store: Path, args: tuple[str, ...]
) -> None:
    result = run_cli(*args, "--store", str(store))
    assert result.returncode == 0, result.stderr
    assert not UNSAFE.search(result.stdout)
    assert "\\x1b" in result.stdout


def test_json_output_keeps_the_text_exact(store: Path) -> None:
    result = run_cli("show", "ansi", "--store", str(store), "--format", "json")
    assert '"thought": "\\u001b[31mred\\r"' in result.stdout


def test_a_query_using_a_predeclared_prefix_runs_and_an_unknown_one_is_named(store: Path) -> None:
    """Named with where the user's text first uses it, not the parser's list of what it
    expected (``expected one of Prefix not found, ['%'], ...``)."""
    ran = run_cli("query", "ASK { ?s a oprov:AgentSession ; rdfs:label ?l }", "--store", str(store))
    assert ran.returncode == 0 and ran.stdout == "true\n", ran.stderr
    unknown = run_cli("query", "SELECT * { ?s nope:x ?o }", "--store", str(store))
    assert unknown.returncode == 2
    (line,) = unknown.stderr.splitlines()
    assert line.startswith("otel-prov: invalid SPARQL: unknown prefix 'nope:' at 1:15 ("), line
    assert "Prefix not found" not in line and "expected" not in line
    assert "PREFIX nope: <IRI>" in line


def test_a_one_line_bad_query_is_reported_on_its_line_one(store: Path) -> None:
    """The predeclared prefixes go on a line before the text sent; the store's position
    counts that line, the message must not."""
    bad = run_cli("query", "SELECT ?s WHERE { ?s oprov:toolName }", "--store", str(store))
    assert bad.returncode == 2
    assert bad.stderr.startswith("otel-prov: invalid SPARQL: error at 1:37: "), bad.stderr


_PATTERNS = ("?s oprov:toolName ?o .", "?s a prov:Activity .", "# x: y", "?s ?p 'a:b' .", "")
_BAD = ("?s ?p ?o ) .", "?s ?p }", "FILTER(?s = )", "?s oprov: ?o ?x")


@settings(max_examples=200)
@given(
    lines=st.lists(st.sampled_from(_PATTERNS), max_size=4),
    bad=st.sampled_from(_BAD),
    at=st.integers(min_value=0, max_value=4),
    indent=st.text(" \t", max_size=3),
)
def test_a_syntax_error_is_reported_where_the_store_finds_it_in_the_text_as_written(
    store: Path, lines: list[str], bad: str, at: int, indent: str
) -> None:
    """Whatever lines come before and after, with or without predeclared prefixes, the
    line and column are those Oxigraph gives for the same text with its prefixes declared
    on its own first line (the columns of that line moved back by the declarations)."""
    written = [*lines]
    written.insert(min(at, len(written)), indent + bad)
    text = "SELECT * WHERE { " + "\n".join(written) + "\n}"
    declared = "PREFIX oprov: <https://w3id.org/otel-prov/ns#> PREFIX prov: <urn:p#> "
    with pytest.raises(SyntaxError) as oracle:
        pyoxigraph.Store().query(declared + text)
    found = re.search(r"error at (\d+):(\d+)", str(oracle.value))
    assert found is not None
    line, column = int(found[1]), int(found[2])
    column -= len(declared) if line == 1 else 0
    with pytest.raises(ValueError) as refused:
        run_user_query(
            EmbeddedBackend(store), text, confinement=Confinement.of("urn:otel-prov:graph")
        )
    assert str(refused.value).startswith(f"invalid SPARQL: error at {line}:{column}: ")


@settings(max_examples=300)
@given(text=st.text(st.sampled_from("ab:x? \n#<>\"'.{}"), max_size=40))
def test_a_prefix_is_found_where_the_text_uses_it(text: str) -> None:
    """Each position of a prefix's first use points at it in the text as written."""
    for prefix, offset in _undeclared(text).items():
        assert text[offset:].startswith(prefix)
        line, column = line_and_column(text, offset)
        assert text.split("\n")[line - 1][column - 1 :].startswith(prefix)


def test_an_update_is_refused_before_the_store_is_touched(store: Path) -> None:
    result = run_cli("query", "DELETE WHERE { ?s ?p ?o }", "--store", str(store))
    assert result.returncode == 2 and "an update is never sent" in result.stderr


def test_the_sessions_table_marks_cut_questions_and_aligns_times() -> None:
    assert shortened("x" * 60, 48) == "x" * 47 + "…"
    assert shortened("short", 48) == "short"
    stamps = ["2026-11-30T18:46:01Z", "2026-11-30T18:46:01.5Z", "2026-11-30T18:46:01.049667Z"]
    assert [_fixed_width_time(s) for s in stamps] == [
        "2026-11-30T18:46:01.000000Z",
        "2026-11-30T18:46:01.500000Z",
        "2026-11-30T18:46:01.049667Z",
    ]
