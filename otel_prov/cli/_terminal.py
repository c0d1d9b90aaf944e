"""Text for a terminal: the aligned columns every table of ``otel-prov`` uses."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["columns"]


def columns(rows: Sequence[Sequence[str]]) -> str:
    """Rows as left-aligned columns two spaces apart, each line ending in a newline."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        + "\n"
        for row in rows
    )
