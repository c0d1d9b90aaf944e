"""Results within a size a model can take: the pure functions of ``_fit`` (property
tests), and the tools over a run far larger than any limit, read from a real store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_prov.exporters._base import DEFAULT_GRAPH
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.mcp_server._fit import (
    LIMITS,
    MOST_TEXT,
    cut_texts,
    decode_position,
    encode_position,
    fit_page,
    json_size,
    shrink,
)
from otel_prov.mcp_server._tools import Tools
from otel_prov.read import open_store
from otel_prov.read._confinement import Confinement
from otel_prov.read._text_index import TextIndex
from tests.builders import make_span, store_runs

TEXT = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=3_000)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(TEXT, inner, max_size=6),
    max_leaves=40,
)


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _texts(item)]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    return []


@given(JSON, st.integers(min_value=1, max_value=500))
def test_a_cut_text_keeps_its_start_and_says_what_it_lost(value: Any, width: int) -> None:
    cut, count = cut_texts(value, width)
    before, after = _texts(value), _texts(cut)
    assert len(before) == len(after)
    assert count == sum(len(text) > width for text in before)
    for whole, kept in zip(before, after, strict=True):
        if len(whole) <= width:
            assert kept == whole
        else:
            assert kept.startswith(whole[:width])
            assert kept.endswith(f"… [{len(whole) - width:,} more characters]")


@given(JSON, st.integers(min_value=400, max_value=20_000))
def test_shrink_fits_what_can_fit(value: Any, room: int) -> None:
    shrunk, _ = shrink(value, room)
    if json_size(value) <= room:
        assert shrunk == value  # nothing is cut from what fits
    # Empty lists and texts of 60 characters at most fit in a few hundred characters
    # unless a dictionary has more keys than that: these have at most six.
    assert json_size(shrunk) <= max(room, json_size(cut_texts(value, 60)[0]))


@settings(max_examples=200)
@given(
    st.lists(JSON, max_size=30),
    st.integers(min_value=0, max_value=35),
    st.integers(min_value=300, max_value=30_000),
)
def test_pages_hold_every_item_once_in_order(items: list[Any], start: int, limit: int) -> None:
    seen: list[Any] = []
    position: int | None = min(start, len(items))
    pages = 0
    while position is not None and position < len(items):
        page, position, _ = fit_page({"items": [], "n": None}, ("items",), items, position, limit)
        assert page["items"], "a page holds at least one item"
        if len(page["items"]) > 1:
            assert json_size(page) <= limit
        seen.extend(page["items"])
        pages += 1
        assert pages <= len(items)
    whole = [cut_texts(item)[0] for item in items[min(start, len(items)) :]]
    assert len(seen) == len(whole)
    for kept, item in zip(seen, whole, strict=True):
        if json_size(item) + 40 <= limit:
            assert kept == item


@given(st.text(max_size=40), st.text(max_size=80), st.integers(min_value=0, max_value=10**9))
def test_a_cursor_reads_back_for_its_own_call_only(tool: str, key: str, offset: int) -> None:
    cursor = encode_position(tool, key, offset)
    assert decode_position(cursor, tool, key) == offset
    with pytest.raises(ValueError, match="not one"):
        decode_position(cursor, tool + "x", key)
    with pytest.raises(ValueError, match="not one"):
        decode_position(cursor, tool, key + "x")


@given(st.text(max_size=200))
def test_anything_else_is_no_cursor(text: str) -> None:
    try:
        decode_position(text, "show_run", "run")
    except ValueError as exc:
        assert "cursor" in str(exc)


STEPS = 120
LONG = 25_000


@pytest.fixture(scope="module")
def huge(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tools, Path]:
    """One run of ``STEPS`` steps, each with a long thought and a longer observation."""
    spans = [
        make_span(1, None, name="invoke_agent big", start_ms=0, end_ms=10_000,
                  gen_ai__operation__name="invoke_agent", gen_ai__agent__name="big",
                  otel_prov__question="q" * LONG, otel_prov__answer="a" * LONG),
    ]  # fmt: skip
    for step in range(1, STEPS + 1):
        spans.append(
            make_span(
                2 * step,
                1,
                name=f"iteration {step}",
                start_ms=step * 10,
                end_ms=step * 10 + 9,
                otel_prov__iteration__number=step,
                otel_prov__thought=f"thought {step} " + "t" * 6_000,
                otel_prov__action="look",
                otel_prov__observation=f"seen {step} " + "o" * LONG,
            )
        )
    store = store_runs(tmp_path_factory.mktemp("huge") / "store", spans)
    backend = EmbeddedBackend(store)
    return Tools(backend=lambda: backend, indexes=lambda graph: TextIndex()), store


def test_a_huge_run_is_shown_a_page_at_a_time_each_within_its_limit(
    huge: tuple[Tools, Path],
) -> None:
    tools, store = huge
    reads = Confinement.of(DEFAULT_GRAPH)
    (run,) = open_store(store).find(f"{0x4BF92F3577B34DA6A3CE929D0E0E4736:032x}")
    numbers: list[int] = []
    cursor = None
    while True:
        page = tools.show_run(reads, run, cursor)
        assert json_size(page) <= LIMITS["show_run"]
        assert "cut" in page and "turtle resource" in page["cut"]
        steps = page["run"]["iterations"]
        assert page["steps_from"] == len(numbers) + 1
        numbers += [step["number"] for step in steps]
        for step in steps:
            assert step["observation"].startswith(f"seen {step['number']} ")
            assert (
                f"{LONG - MOST_TEXT + len(str(step['number'])) + 6:,} more characters"
                in (step["observation"])
            )
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert numbers == list(range(1, STEPS + 1))
    why = tools.why(reads, run)
    assert json_size(why) <= LIMITS["why"] and why["next_cursor"]
    listed = tools.list_runs(reads)
    assert json_size(listed) <= LIMITS["list_runs"]
    assert listed["runs"][0]["question"].endswith(f"{LONG - MOST_TEXT:,} more characters]")
    summary = tools.summarize_run(reads, run)
    assert json_size(summary) <= LIMITS["summarize_run"]
    text = json.dumps(tools.diff_runs(reads, run, run))
    assert len(text) <= LIMITS["diff_runs"] * 2
