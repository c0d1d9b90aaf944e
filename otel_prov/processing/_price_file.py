"""The price table the mapper prices model calls with, read from ``OTEL_PROV_PRICES``.

The file is read once, when a processor, an import or a receiver starts: the mapping
stays a pure function of the spans and this table.  A file that cannot be read or used
is logged once, naming the file and the problem, and nothing is priced: a bad price
file never loses a session.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from otel_prov._settings import env_str
from otel_prov.environment_variables import OTEL_PROV_PRICES
from otel_prov.prov._prices import PriceFileError, PriceTable, parse_prices

__all__ = ["prices_from_settings"]

_logger = logging.getLogger(__name__)
_warned: set[tuple[str, str]] = set()


def prices_from_settings(path: str | os.PathLike[str] | None = None) -> PriceTable | None:
    """The table at ``path``, else at ``OTEL_PROV_PRICES``; None when neither is set or
    the file cannot be used (logged once per file and problem)."""
    name = os.fspath(path) if path is not None else env_str(OTEL_PROV_PRICES)
    if not name:
        return None
    try:
        return parse_prices(Path(name).read_text(encoding="utf-8"), name=name)
    except (OSError, UnicodeDecodeError, PriceFileError) as exc:
        problem = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if (name, problem) not in _warned:
            _warned.add((name, problem))
            _logger.warning("price file %s not used: %s; model calls are not priced", name, problem)
        return None
