"""The ``main`` of the scripts that write a page of docs/ from the code.

Without arguments a script writes its page; with ``--check`` (``make docs``,
tests/test_docs.py) it writes nothing and exits 1 when the committed page is not the one
it would write.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path


def write_or_check(page: Path, wanted: str, argv: Sequence[str], script: str) -> int:
    """Write ``wanted`` to ``page``, or with ``--check`` in ``argv`` compare them; ``script``
    is what to run when the page is out of date."""
    if "--check" not in argv:
        page.write_text(wanted, encoding="utf-8")
        return 0
    if page.is_file() and page.read_text(encoding="utf-8") == wanted:
        return 0
    print(f"{page} is out of date: run python scripts/{script}", file=sys.stderr)
    return 1
