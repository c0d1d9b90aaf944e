"""Every reader tells a third-party run as its fields say (issue 25, point 4).

``test_conformance`` checks each scenario's run field by field through the read API.
Here the same runs (the suite's shared ``stores_of``) go through every reader a user
has: ``sessions`` (``--agent``, ``--search``, the failed count), ``show``, ``why``,
``summary``, ``diff`` and the web view.  Each must show what the fields say, whatever
they say: the agent, the question, the answer, the tool calls and the failure.  A field
the mapping loses is the suite's to report; a reader that disagrees with the others is
a defect of that reader.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import re
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from otel_prov.cli import main
from otel_prov.read import SessionView
from tests.conformance import fields
from tests.conformance.test_conformance import SCENARIOS, Scenario, Stores
from tests.serving import serving


@dataclass(frozen=True)
class Call:
    """A tool call as every reader must tell it."""

    name: str
    call_id: str | None
    status: str
    error: str | None


@dataclass(frozen=True)
class Run:
    """What the fields say of a run, and where it is."""

    store: Path
    view: SessionView
    said: Mapping[str, object]
    calls: tuple[Call, ...]

    @property
    def trace(self) -> str:
        assert self.view.trace_id is not None
        return self.view.trace_id


def _run(stores: Stores, observed_of: Callable[[Path], Mapping[str, object]]) -> Run:
    store = stores.in_process  # test_conformance checks the received store gives the same
    said = observed_of(store)
    view = fields.scenario.only_run(store)
    calls = tuple(
        Call(call.name, call.call_id, call.status, call.error_message)
        for step in view.iterations
        for call in step.tool_calls
    )
    return Run(store, view, said, calls)


def _cli(*arguments: str) -> tuple[int, str]:
    """``otel-prov ARGUMENTS`` run as the console script runs it; its code and stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(arguments))
    return code, out.getvalue()


def _listed(run: Run, *filters: str) -> list[dict[str, Any]]:
    code, out = _cli("sessions", "--store", str(run.store), "--format", "json", *filters)
    return json.loads(out) if code == 0 else []


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def check_sessions(run: Run) -> None:
    (line,) = _listed(run)
    assert line["failed_calls"] == run.said["failed_count"]
    assert (line["agent"], line["question"]) == (run.said["agent"], run.said["question"])
    if isinstance(agent := run.said["agent"], str):
        assert [found["id"] for found in _listed(run, "--agent", agent)] == [run.view.id]
    for name in ("question", "answer"):
        if (text := _text(run.said[name])) is not None:
            found = [found["id"] for found in _listed(run, "--search", text)]
            assert found == [run.view.id], f"--search {text!r} ({name})"


def _shown_calls(session: dict[str, Any]) -> tuple[Call, ...]:
    return tuple(
        Call(call["name"], call["call_id"], call["status"], call["error_message"])
        for step in session["iterations"]
        for call in step["tool_calls"]
    )


def check_show(run: Run) -> None:
    code, out = _cli("show", run.trace, "--store", str(run.store), "--format", "json")
    assert code == 0
    (session,) = json.loads(out)
    for name in ("agent", "question", "answer"):
        assert session[name] == run.said[name], name
    assert session["failed_calls"] == run.said["failed_count"]
    assert _shown_calls(session) == run.calls
    code, text = _cli("show", run.trace, "--store", str(run.store))
    assert code == 0
    _tells(text, run)


def _flat(text: str) -> str:
    return " ".join(text.split())


_SHOWN = 100
"""How much of a long value a reader for people must show: it may clip the rest."""


def _tells(text: str, run: Run) -> None:
    """``text`` holds the run's agent, question, answer, each call and each error, as
    a page for people lays them out (its own line breaks and indents, a long value
    clipped after its start)."""
    told = [run.said["agent"], run.said["question"], run.said["answer"]]
    told += [call.name for call in run.calls]
    told += [call.error for call in run.calls if call.status == "error"]
    for value in told:
        if (expected := _text(value)) is not None:
            assert _flat(expected)[:_SHOWN] in _flat(text), f"{expected!r} not in:\n{text}"


def check_why(run: Run) -> None:
    code, out = _cli("why", run.trace, "--store", str(run.store), "--format", "json")
    assert code == 0
    nodes = json.loads(out)["nodes"]
    labels = {
        kind: [n["label"] for n in nodes if n["type"] == kind] for kind in ("Question", "Answer")
    }
    for kind, name in (("Question", "question"), ("Answer", "answer")):
        expected = [run.said[name]] if isinstance(run.said[name], str) else []
        assert labels[kind] == expected, (kind, labels[kind], expected)
    drawn = sorted(
        (n["tool"], n.get("call_id"), n["status"], n.get("error"))
        for n in nodes
        if n["type"] == "ToolCall"
    )
    calls = sorted(
        (call.name, call.call_id, call.status, call.error if call.status == "error" else None)
        for call in run.calls
    )
    assert [d[:3] for d in drawn] == [c[:3] for c in calls], (drawn, calls)
    for (*_, error), (*_, message) in zip(drawn, calls, strict=True):
        assert (error is None) == (message is None) and (message or "") in (error or "")


def check_summary(run: Run) -> None:
    code, out = _cli("summary", run.trace, "--store", str(run.store))
    assert code == 0
    _tells(out, run)


def check_diff(run: Run) -> None:
    code, out = _cli("diff", run.trace, run.trace, "--store", str(run.store), "--format", "json")
    compared = json.loads(out)
    assert (code, compared["first_divergence"]) == (0, None)
    assert compared["iterations"] == {"a": run.said["steps"], "b": run.said["steps"]}


def check_web_view(run: Run) -> None:
    with serving("--store", str(run.store)) as server:

        def page(path: str, **query: str) -> str:
            url = f"{server.url}{path}?{urllib.parse.urlencode(query)}"
            with urllib.request.urlopen(url, timeout=30) as answer:
                # <wbr> breaks a long id where the page is narrow; it reads as one word.
                text = answer.read().decode().replace("<wbr>", "")
                return html.unescape(re.sub(r"<[^>]+>", " ", text))

        def lists(**query: str) -> bool:
            return run.trace in page("/", **query) or run.view.id in page("/", **query)

        assert lists()
        if isinstance(agent := run.said["agent"], str):
            assert lists(agent=agent), f"agent={agent!r}"
        for name in ("question", "answer"):
            if (text := _text(run.said[name])) is not None:
                assert lists(q=text), f"q={text!r} ({name})"
        _tells(page("/session", id=run.trace), run)


READERS: dict[str, Callable[[Run], None]] = {
    "sessions": check_sessions,
    "show": check_show,
    "why": check_why,
    "summary": check_summary,
    "diff": check_diff,
    "web-view": check_web_view,
}


CASES = [
    pytest.param(
        scenario,
        reader,
        id=f"{scenario.name}-{reader}",
        marks=[pytest.mark.xfail(strict=True, reason=scenario.unread[reader])]
        if reader in scenario.unread
        else [],
    )
    for scenario in SCENARIOS
    for reader in READERS
]


@pytest.mark.integration
@pytest.mark.parametrize(("scenario", "reader"), CASES)
def test_a_reader_shows_the_run_as_its_fields_say(
    scenario: Scenario,
    reader: str,
    stores_of: Callable[[Scenario], Stores],
    observed_of: Callable[[Path], Mapping[str, object]],
) -> None:
    READERS[reader](_run(stores_of(scenario), observed_of))


def test_every_reader_a_scenario_cannot_tell_is_a_reader() -> None:
    for scenario in SCENARIOS:
        assert set(scenario.unread) <= set(READERS), scenario.name
