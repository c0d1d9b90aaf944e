"""Text for a terminal: control characters from agent text shown escaped, aligned columns.

Agents record whatever text they are given, and a terminal obeys escape sequences: an
observation holding ``\\x1b]0;...`` or ``\\x1b[2J`` would retitle or clear the reader's
terminal, a ``\\r`` would overwrite the line before it, and bidirectional overrides
would reorder what is shown.  Every table and text view passes values through
:func:`printable` first, which shows such characters as Python escapes (``\\x1b``).
Newlines and tabs stay (the text view lays out multi-line values).  JSON output is left
exact: it escapes control characters itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["columns", "printable"]

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and newline, DEL, C1
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidirectional marks and overrides
    "\ud800-\udfff]"  # lone surrogates (no terminal encoding can write them)
)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with each character a terminal would act on shown as an escape."""
    return _UNSAFE.sub(_escaped, text)


def columns(rows: Sequence[Sequence[str]]) -> str:
    """Rows as left-aligned columns two spaces apart, each line ending in a newline."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        + "\n"
        for row in rows
    )
