"""Content taken out of an error message, when the content policy keeps content out.

A failed call's message often repeats what it was given (``no weather for 'Atlantis'``).
With content capture off the call's arguments are not recorded, and its error message
must not record them either.  One function does it for every producer: the mapper, for
spans recorded by anyone (their content is on the span, marked withheld), and the
capture scopes, for ours (their content never reaches the span, so only they know it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from otel_prov.prov._messages import loads

__all__ = ["WITHHELD", "without_content"]

WITHHELD = "[withheld]"
_SHORT = 4
"""Content words shorter than this are withheld from a message only as whole words."""


def _leaves(value: Any, into: list[str]) -> None:
    if isinstance(value, str):
        into.append(value)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        into.append(str(value))
    elif isinstance(value, dict):
        for item in value.values():
            _leaves(item, into)
    elif isinstance(value, list):
        for item in value:
            _leaves(item, into)


def without_content(message: str, texts: Iterable[str]) -> str:
    """``message`` with every content text in it replaced by ``[withheld]``, and every
    string and number inside a text that is JSON (arguments, results): longest first, a
    short one (a number, a two-letter code) only where it stands as a word."""
    texts = list(texts)
    leaves: list[str] = []
    for text in texts:
        _leaves(loads(text), leaves)
    for text in sorted({t.strip() for t in (*texts, *leaves) if t.strip()}, key=len, reverse=True):
        if len(text) >= _SHORT:
            message = message.replace(text, WITHHELD)
        else:
            message = re.sub(rf"(?<!\w){re.escape(text)}(?!\w)", WITHHELD, message)
    return message
