"""How much of an answer one tool result holds: a model reads all of it, and a client may
refuse a long one (Claude Code warns past 25,000 tokens).

Pure functions over JSON-ready data.  Each tool has a limit in characters of JSON
(:data:`LIMITS`, about a quarter as many tokens).  A text longer than :data:`MOST_TEXT`
is cut, saying how many characters it lost; a list a tool pages (runs, a run's steps, the
nodes of a derivation, rows) holds as many items as fit, and a cursor names where the
next page starts.  One item too large alone is shrunk: its texts cut shorter, then its
own lists shortened, each saying what it left out.  Nothing is dropped without a word.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import Any

__all__ = [
    "LIMITS",
    "MOST_TEXT",
    "cut_texts",
    "decode_position",
    "encode_position",
    "fit_page",
    "json_size",
    "shrink",
]

LIMITS = {
    "list_runs": 30_000,
    "show_run": 40_000,
    "why": 40_000,
    "diff_runs": 30_000,
    "summarize_run": 20_000,
    "trace_spans": 30_000,
    "verify": 30_000,
    "sparql": 40_000,
}
"""Characters of JSON a tool's result holds at most (about 10,000 tokens at 40,000)."""

MOST_TEXT = 4_000
"""Characters of one text a result keeps; the rest is cut, and the text says so."""

_WIDTHS = (MOST_TEXT, 1_000, 250, 60)
"""What texts are cut to, in turn, while an item alone is over its room."""
_KEEPS = (50, 10, 3, 1, 0)
"""What its lists are shortened to, in turn, after its texts."""


def json_size(value: Any) -> int:
    """The characters of ``value`` as compact JSON (what the limits count)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _cut(text: str, width: int) -> str:
    return f"{text[:width]}… [{len(text) - width:,} more characters]"


def cut_texts(value: Any, width: int = MOST_TEXT) -> tuple[Any, int]:
    """``value`` with every text longer than ``width`` characters cut to ``width`` and a
    note of what it lost, and how many were cut."""
    if isinstance(value, str):
        return (_cut(value, width), 1) if len(value) > width else (value, 0)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        count = 0
        for key, item in value.items():
            out[key], cut = cut_texts(item, width)
            count += cut
        return out, count
    if isinstance(value, list):
        items = []
        count = 0
        for item in value:
            kept, cut = cut_texts(item, width)
            items.append(kept)
            count += cut
        return items, count
    return value, 0


def _shorten_lists(value: Any, keep: int) -> Any:
    """``value`` with every list of more than ``keep`` items cut to ``keep`` and a last
    item saying how many it left out."""
    if isinstance(value, dict):
        return {key: _shorten_lists(item, keep) for key, item in value.items()}
    if isinstance(value, list):
        kept = [_shorten_lists(item, keep) for item in value[:keep]]
        if len(value) > keep:
            kept.append(f"… [{len(value) - keep:,} more items left out]")
        return kept
    return value


def shrink(value: Any, room: int) -> tuple[Any, int]:
    """``value`` made to fit in ``room`` characters of JSON if it can be: its texts cut
    shorter and shorter, then its lists shortened; and how many texts were cut."""
    count = 0
    for width in _WIDTHS:
        shrunk, count = cut_texts(value, width)
        if json_size(shrunk) <= room:
            return shrunk, count
    for keep in _KEEPS:
        shortened = _shorten_lists(shrunk, keep)
        if json_size(shortened) <= room:
            return shortened, count
    return shortened, count


def fit_page(
    result: dict[str, Any],
    path: Sequence[str],
    items: Sequence[Any],
    start: int,
    limit: int,
) -> tuple[dict[str, Any], int | None, int]:
    """``result`` holding, at ``path`` (keys, the last one that of the page), as many of
    ``items[start:]`` as fit within ``limit`` characters with the rest of ``result``: at
    least one, shrunk if it is too large alone.  Returns the result, the index of the
    first item left for the next page (``None``: none left), and how many texts were
    cut.  Texts of ``result`` itself are cut at :data:`MOST_TEXT` too."""
    head, count = cut_texts(result)
    holder = head
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = []
    used = json_size(head)
    page: list[Any] = []
    for index in range(start, len(items)):
        item, cut = cut_texts(items[index])
        size = json_size(item) + 1
        if used + size > limit:
            if page:
                holder[path[-1]] = page
                return head, index, count
            item, cut = shrink(items[index], max(0, limit - used - 1))
            size = json_size(item) + 1
        page.append(item)
        used += size
        count += cut
    holder[path[-1]] = page
    return head, None, count


def encode_position(tool: str, key: str, offset: int) -> str:
    """A cursor: the page of ``tool``'s answer for ``key`` (a run, a query) that starts
    at item ``offset``; opaque and URL-safe."""
    return base64.urlsafe_b64encode(json.dumps([tool, key, offset]).encode()).decode()


def decode_position(cursor: str | None, tool: str, key: str) -> int:
    """The offset :func:`encode_position` wrote for the same ``tool`` and ``key`` (0 for
    no cursor); ``ValueError`` for a cursor of anything else."""
    if not cursor:
        return 0
    try:
        named, keyed, offset = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (binascii.Error, UnicodeError, TypeError, ValueError) as exc:
        raise ValueError(f"not a cursor this server gave: {cursor[:80]!r}") from exc
    if named != tool or keyed != key or not isinstance(offset, int) or offset < 0:
        raise ValueError(
            f"this cursor is not one {tool} gave for this question: pass the next_cursor "
            "of the result before, with the same arguments"
        )
    return offset
