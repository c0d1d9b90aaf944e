"""The session list pages exactly, whatever a run holds.

Three runs here hold two of each listed field, written directly into the store: two
starts (``oprov:runStartedAt`` and ``prov:startedAtTime``, as a run streamed from a
stand-in kept them), two agents, two questions, two services.  Each is listed once, at
its first start (a second start later than its own, or earlier), and no page, filtered
or not, of any size, hides another run: listed at each start, such a run filled two rows
of a page, the page came out short with no cursor, and every older run was out of reach.
On the embedded store here; on Oxigraph and Virtuoso in
``tests/integration/test_listing_remote.py``.
"""

from __future__ import annotations

import html
import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyoxigraph
import pytest
import requests

from otel_prov.prov._rdf import datetime_from_ns, datetime_literal
from otel_prov.read import ProvenanceReader, _listing, open_store
from tests.builders import T0, store_runs
from tests.cli import run_cli
from tests.serving import serving
from tests.test_read_api import FILTERS, RUNS, _all_pages, _run, _utc

GRAPH = "urn:otel-prov:graph"
PREFIXES = (
    "PREFIX prov: <http://www.w3.org/ns/prov#> PREFIX oprov: <https://w3id.org/otel-prov/ns#>"
)
SECOND_START = {9: 9.5, 5: 8.5, 2: 1.5}
"""Run index -> its second start, in minutes after T0: run 9's next to its own (both on
one page), run 5's far later, run 2's earlier (where it began)."""
SECOND = {"agent": "gamma", "service": "svc-z"}


def _first_start(index: int) -> float:
    return min(index, SECOND_START.get(index, index))


def second_values(run: str, index: int) -> str:
    """The triples that give run ``index`` (IRI ``run``) a second value of each field."""
    start = datetime_from_ns(T0 + int(SECOND_START[index] * 60e9))
    question = f"<urn:second-question:{index}>"
    return f"""
      <{run}> oprov:runStartedAt {start} ; prov:startedAtTime {start} ;
        oprov:agentLabel "{SECOND["agent"]}" ; oprov:serviceName "{SECOND["service"]}" ;
        prov:used {question} .
      {question} a oprov:Question, prov:Entity ; prov:value "question {index}, asked again" ."""


def trace_of(index: int) -> str:
    """The trace id of run ``index`` of ``RUNS``."""
    return f"{index + 1:032x}"


def listed(**where: object) -> list[str]:
    """The first question of each run ``sessions`` lists, newest first by first start."""
    chosen = []
    for index, run in enumerate(RUNS):
        doubled = index in SECOND_START
        status = "incomplete" if run.get("ended") is False else run.get("status", "ok")
        status = "ok" if status == "unset" else status
        start = datetime.fromtimestamp(T0 / 1e9, tz=timezone.utc) + timedelta(
            minutes=_first_start(index)
        )
        said = f"question {index}" + (f"\nquestion {index}, asked again" if doubled else "")
        if all(
            (
                where.get("agent") in (None, run["agent"], *([SECOND["agent"]] * doubled)),
                where.get("service") in (None, run["service"], *([SECOND["service"]] * doubled)),
                where.get("status") in (None, status),
                where.get("since") is None or start >= _utc(where["since"]),
                where.get("until") is None or start < _utc(where["until"]),
                str(where.get("text", "")).lower() in said,
            )
        ):
            chosen.append((start, f"question {index}"))
    return [question for _, question in sorted(chosen, reverse=True)]


MORE_FILTERS: list[dict[str, object]] = [
    *FILTERS,
    {"agent": "gamma"},
    {"service": "svc-z"},
    {"text": "asked again"},
    {"until": datetime(2025, 11, 30, 0, 6)},
    {"since": datetime(2025, 11, 30, 0, 6)},
    {"since": datetime(2025, 11, 30, 0, 1, 30), "until": datetime(2025, 11, 30, 0, 2)},
    {"since": datetime(2025, 11, 30, 0, 9, 15)},
]


def check_every_page(reader: ProvenanceReader, limits: tuple[int, ...] = (1, 2, 3, 20)) -> None:
    for where in MORE_FILTERS:
        expected = listed(**where)
        for limit in limits:
            assert _all_pages(reader, limit, **where) == expected, (where, limit)
    shown = {run.id: run for run in reader.sessions(limit=100).sessions}
    for index in SECOND_START:
        (run,) = reader.find(trace_of(index))  # once, though it has two starts
        first = datetime_from_ns(T0 + int(_first_start(index) * 60e9))
        assert datetime_literal(shown[run].start) == first, index
        assert (shown[run].question, shown[run].iterations) == (f"question {index}", 1)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """RUNS, and the second values of two of them written directly into the store."""
    path = store_runs(tmp_path / "store", *(_run(index, **run) for index, run in enumerate(RUNS)))
    reader = open_store(path)
    runs = {index: reader.find(trace_of(index))[0] for index in SECOND_START}
    del reader
    written = pyoxigraph.Store(str(path))
    triples = " ".join(second_values(run, index) for index, run in runs.items())
    written.update(f"{PREFIXES} INSERT DATA {{ GRAPH <{GRAPH}> {{ {triples} }} }}")
    written.flush()
    del written
    return path


def test_a_run_with_two_of_each_field_is_listed_once_and_hides_no_other(store: Path) -> None:
    check_every_page(open_store(store))


@pytest.mark.parametrize("most_batched", [1000, 4], ids=["batches", "then-the-rest"])
def test_filtered_pages_read_in_batches_list_it_once_too(
    store: Path, monkeypatch: pytest.MonkeyPatch, most_batched: int
) -> None:
    monkeypatch.setattr(_listing, "_CANDIDATES", 2)
    monkeypatch.setattr(_listing, "_MOST_BATCHED", most_batched)
    check_every_page(open_store(store))


def test_the_sessions_command_pages_through_every_run(store: Path) -> None:
    questions: list[str] = []
    cursor: list[str] = []
    while True:
        done = run_cli(
            "sessions", "--store", str(store), "--limit", "2", "--format", "json", *cursor
        )
        assert done.returncode == 0, done.stderr
        questions += [row["question"] for row in json.loads(done.stdout)]
        more = re.search(r"--cursor (\S+)", done.stderr)
        if more is None:
            break
        cursor = ["--cursor", more.group(1)]
    assert questions == listed()


def test_the_web_views_older_link_reaches_every_run(tmp_path: Path) -> None:
    """A page of the web view holds 50 runs; the newest of 60 has a second start next to
    its own, so both fall in the rows the first page reads."""
    many = 60
    path = store_runs(
        tmp_path / "store", *(_run(index, agent="a", service="s") for index in range(many))
    )
    reader = open_store(path)
    (newest,) = reader.find(trace_of(many - 1))
    del reader
    start = datetime_from_ns(T0 + int((many - 0.5) * 60e9))
    written = pyoxigraph.Store(str(path))
    written.update(
        f"{PREFIXES} INSERT DATA {{ GRAPH <{GRAPH}> {{ <{newest}> oprov:runStartedAt {start} }} }}"
    )
    written.flush()
    del written
    questions: list[str] = []
    with serving("--store", str(path)) as served:
        url: str | None = served.url + "/"
        while url is not None:
            page = requests.get(url, timeout=60).text
            questions += re.findall(r'class="value question" title="([^"]*)"', page)
            older = re.search(r'<a href="([^"]+)" rel="next">', page)
            url = None if older is None else served.url + html.unescape(older.group(1))
    assert questions == [f"question {index}" for index in reversed(range(many))]
