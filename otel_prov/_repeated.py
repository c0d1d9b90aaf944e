"""A failure that may repeat many times a second (a full disk) logged a few times, not each.

The first failure is logged with its traceback; later ones are counted and logged as one
line with their number and the last error, at most every ``interval`` seconds, the way the
SDK's duplicate filter keeps a failing exporter from flooding the host's log.  The count
stays readable (``total``), for statistics that say what could not be written.

The traceback goes into the line as text, the exception itself nowhere: a handler that
keeps its records (pytest's, a ``MemoryHandler``) would keep the exception's frames and
what they hold alive, a RocksDB handle the disk broke among them, whose lock would then
keep the store from being opened again.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback

__all__ = ["RepeatedFailure"]


class RepeatedFailure:
    """One kind of failure, said by ``message``; safe to call from any thread."""

    def __init__(self, logger: logging.Logger, message: str, *, interval: float = 10.0) -> None:
        self._logger = logger
        self._message = message
        self._interval = interval
        self._lock = threading.Lock()
        self.total = 0
        """Failures since the start."""
        self._reported = 0
        self._reported_at = 0.0
        self._last_error = ""

    def failed(self, error: BaseException) -> None:
        """It failed once more, with ``error`` (the exception being handled)."""
        with self._lock:
            self.total += 1
            self._last_error = f"{type(error).__name__}: {error}"
            if self.total == 1:
                self._logger.error(
                    "%s\n%s", self._message, "".join(traceback.format_exception(error)).rstrip()
                )
                self._reported, self._reported_at = 1, time.monotonic()
                return
        self.report(force=False)

    def report(self, *, force: bool = True) -> None:
        """Log the failures not logged yet: with ``force`` now, else only once
        ``interval`` seconds have passed since the last line."""
        with self._lock:
            now = time.monotonic()
            unreported = self.total - self._reported
            if not unreported or (not force and now - self._reported_at < self._interval):
                return
            self._logger.error(
                "%s: %d more time(s) since the last report, %d in all (last: %s)",
                self._message,
                unreported,
                self.total,
                self._last_error,
            )
            self._reported, self._reported_at = self.total, now
