"""``otel-prov show --format html`` (the session page of ``otel-prov serve``, standalone):
one self-contained page, every value escaped.

A page is read back with the standard library's ``HTMLParser``: its tags must balance
and be only those the renderer writes, its scripts be only ours (inlined), the
why-graph's data decode to the values it was given, and the text a browser would show
must hold every value, exactly, whatever characters the agent put in it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import escape

from otel_prov.read._views import IterationView, ModelCallView, SessionView, ToolCallView
from otel_prov.view._pages import DAGRE, SCRIPT, session_page
from tests.cli import run_cli, write_demo_store

_TAGS = {
    "html", "head", "meta", "title", "style", "script", "noscript", "body", "article", "section",
    "h1", "h2", "h3", "dl", "dt", "dd", "div", "p", "span", "code", "a",
    "svg", "g", "rect", "text", "path",  # the timeline, and the why-graph's edges
}  # fmt: skip
_VOID = {"meta"}
_SVG_ATTRIBUTES = {
    "xmlns", "width", "height", "viewbox", "role", "aria-label", "x", "y", "rx", "d",
    "data-graph",  # the why-graph, which the script draws
    "text-anchor",  # the timeline's axis
}  # fmt: skip
_CLASSES = {
    "run", "iteration", "sub-session", "call", "tool-call", "model-call", "failed", "badge",
    "value", "outcome", "outcome-ok", "error",
    "figure", "timeline", "bar", "session", "duration", "axis", "tick", "trace-links",
    "why-figure", "why-help",
}  # fmt: skip
_STATUSES = {"status-ok", "status-error", "status-incomplete", "status-other"}


class Page(HTMLParser):
    """What a browser makes of the page: its tags (checked for balance) and its text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: Counter[str] = Counter()
        self.attributes: list[tuple[str, str | None]] = []
        self.scripts: list[str] = []
        self.errors: list[str] = []
        self.doctype = ""
        self._open: list[str] = []
        self._text: list[str] = []
        self._in_head = 0
        self.feed(html)
        self.close()
        self.errors.extend(f"<{tag}> never closed" for tag in self._open)

    @property
    def text(self) -> str:
        return "".join(self._text)

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        self.attributes.extend(attrs)
        if tag not in _VOID:
            self._open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.errors.append(f"self-closing <{tag}/>")

    def handle_endtag(self, tag: str) -> None:
        if not self._open or self._open.pop() != tag:
            self.errors.append(f"</{tag}> closes nothing open")

    def handle_data(self, data: str) -> None:
        if self._open[-1:] == ["script"]:
            self.scripts.append(data)
        elif self._open[-2:] != ["head", "style"]:
            self._text.append(data)


def _checked(html: str) -> Page:
    page = Page(html)
    assert page.errors == []
    assert page.doctype.lower() == "doctype html"
    assert set(page.tags) <= _TAGS
    for name, value in page.attributes:
        assert name in {"lang", "charset", "class", "href"} | _SVG_ATTRIBUTES, name
        if name == "class":
            assert set((value or "").split()) <= _CLASSES | _STATUSES, value
        if name == "href":  # trace links
            assert re.fullmatch(r"https?://.*", value or "", re.S), value
    assert page.scripts == [DAGRE, SCRIPT]  # the layout library and ours, nothing else
    return page


def _run(texts: list[str]) -> tuple[SessionView, list[str]]:
    """A run with every kind of value, failed calls, and sub-sessions at all three places
    one can start: in a tool call, in an iteration, in the session itself.  Values are
    taken from ``texts`` in turn; the ones taken come back with the run."""
    taken: list[str] = []

    def t() -> str:
        taken.append(texts[len(taken)])
        return taken[-1]

    def sub(agent: str) -> SessionView:
        return SessionView(
            id=f"urn:otel-prov:{agent}",
            trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
            span_id="00f067aa0ba902b7",
            agent=t(),
            conversation_id=None,
            status="ok",
            start="2025-11-30T00:00:01Z",
            end="2025-11-30T00:00:02Z",
            question=t(),
            answer=t(),
            iterations=[
                IterationView(
                    id=f"urn:otel-prov:{agent}:it",
                    number=1,
                    thought=t(),
                    action=t(),
                    arguments=None,
                    observation=t(),
                    status="ok",
                )
            ],
        )

    run = SessionView(
        id=t(),
        trace_id=t(),
        span_id="00f067aa0ba902b7",
        agent=t(),
        conversation_id=None,
        status=t(),
        start=t(),
        end=None,
        question=t(),
        answer=None,
        answered_by="urn:otel-prov:answering",
        iterations=[
            IterationView(
                id="urn:otel-prov:it1",
                number=1,
                thought=t(),
                action=t(),
                arguments=t(),
                observation=None,
                status="ok",
                model_calls=[ModelCallView("urn:otel-prov:m1", t(), 12, 3, "error")],
                tool_calls=[
                    ToolCallView(
                        id="urn:otel-prov:tc1",
                        name=t(),
                        call_id=t(),
                        status="error",
                        error_type=t(),
                        error_message=t(),
                        arguments=t(),
                        observation=None,
                    ),
                    ToolCallView(
                        id="urn:otel-prov:tc2",
                        name=t(),
                        call_id=None,
                        status=t(),
                        error_type=None,
                        error_message=None,
                        arguments=None,
                        observation=t(),
                        sub_sessions=[sub("in-call")],
                    ),
                ],
                sub_sessions=[sub("in-iteration")],
            )
        ],
        sub_sessions=[sub("answering")],
    )
    return run, taken


_VALUES = 40  # more than _run takes
_LINKS = {"jaeger": "http://jaeger.local/trace/{trace_id}", "odd": "javascript:{trace_id}"}


def test_a_nested_run_is_one_well_formed_page_that_shows_every_value() -> None:
    texts = [f"value {n}\nsecond line" if n % 5 == 0 else f"value {n}" for n in range(_VALUES)]
    run, taken = _run(texts)
    page = _checked(session_page([run], links=_LINKS, standalone=True))
    for text in taken:
        assert text in page.text
    assert page.tags["article"] == 1
    assert page.tags["section"] == 7  # 4 iterations, 3 sub-sessions
    assert page.text.count("FAILED") == 2  # the tool call and the model call
    assert "value 12: value 13" in page.text  # error type: message
    assert "(never)" in page.text
    assert "answering" in page.text.split("answered by")[1]
    assert ("href", f"http://jaeger.local/trace/{texts[1].replace(' ', '%20')}") in page.attributes
    assert f"javascript:{texts[1].replace(' ', '%20')}" in page.text  # shown, not a link


_HOSTILE = st.sampled_from(
    [
        "<script>alert(1)</script>",
        "</dd></dl></article><script>x</script>",
        '" onmouseover="alert(1)',
        "' onfocus='x",
        "&",
        "&amp;",
        "&lt;b&gt;",
        "<!--",
        "]]>",
        "<style>",
        "\n",
    ]
)
_values = st.lists(st.one_of(_HOSTILE, st.text(max_size=8)), min_size=1, max_size=4).map("".join)


@settings(max_examples=100, deadline=None)
@given(st.lists(_values, min_size=_VALUES, max_size=_VALUES))
def test_hostile_values_never_reach_the_page_unescaped(texts: list[str]) -> None:
    run, taken = _run(texts)
    why = {
        "root": "urn:a",
        "nodes": [
            {"id": "urn:a", "type": "Answer", "label": texts[0]},
            {"id": "urn:t", "type": "ToolCall", "label": texts[1], "status": "error",
             "error": texts[2]},
        ],
        "edges": [{"from": "urn:a", "to": "urn:t", "relation": texts[3]}],
    }  # fmt: skip
    html = session_page([run], links=_LINKS, why={run.id: why}, standalone=True)
    page = _checked(html)  # nothing a value held became a tag, an attribute or a script
    for text in taken:  # ...and each is shown as it is, escaped as Jinja2 escapes
        assert text in page.text
        assert str(escape(text)) in html
    (graph,) = [json.loads(value or "") for name, value in page.attributes if name == "data-graph"]
    assert [node["text"] for node in graph["nodes"]] == [
        texts[0] or "Answer",
        texts[1] or "ToolCall",
    ]
    assert graph["nodes"][1]["error"] == texts[2]
    assert [edge["relation"] for edge in graph["edges"]] == [texts[3]]


def test_a_value_is_written_escaped() -> None:
    texts = ["<script>alert('x') & \"y\"</script>"] * _VALUES
    html = session_page([_run(texts)[0]], standalone=True)
    assert html.count("<script") == 2  # ours
    assert "&lt;script&gt;alert(&#39;x&#39;) &amp; &#34;y&#34;&lt;/script&gt;" in html


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_demo_store(tmp_path_factory.mktemp("html"))


def test_show_writes_the_demo_run_as_a_self_contained_page(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_PROV_JAEGER_URL", "http://jaeger.local/trace/{trace_id}")
    result = run_cli("show", "demo-conversation", "--store", str(demo_store), "--format", "html")
    assert result.returncode == 0, result.stderr
    page = _checked(result.stdout)
    text = run_cli("show", "demo-conversation", "--store", str(demo_store)).stdout
    values: dict[str, list[str]] = {}
    for line in text.splitlines():
        label, _, value = line.strip().partition("  ")
        if value.strip() and label in ("question", "thought", "observation", "answer", "trace"):
            values.setdefault(label, []).append(value.strip())
    for label, shown in values.items():
        for value in shown:
            assert value in page.text, (label, value)
    assert "FAILED" in page.text and "TimeoutError" in page.text
    trace_id = values["trace"][0]
    assert ("href", f"http://jaeger.local/trace/{trace_id}") in page.attributes
    outside = re.sub(r"<script>.*?</script>", "", result.stdout, flags=re.S)  # ours: checked
    for external in ("<script", "<link", " src=", "url(", "@import"):
        assert external not in outside
    assert 'class="figure why-figure" data-graph="' in result.stdout
    assert result.stdout.endswith("</html>\n")
