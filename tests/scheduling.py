"""pytest-xdist's work units for ``make test``: a test file, or the conformance suite.

``loadfile`` sends each file's tests to one worker, in order (its module fixtures start
once; a file may rely on its earlier tests).  The conformance suite's files go to one
worker together: they read the same scenario runs (``tests/conformance/conftest.py``,
``stores_of``), which a second worker would run a second time.  Imported only when xdist
schedules (``tests/conftest.py``), so that the suite runs without xdist too.
"""

from __future__ import annotations

from xdist.scheduler import LoadFileScheduling

CONFORMANCE = "tests/conformance/"


class FileScheduling(LoadFileScheduling):
    """``loadfile``, with the conformance suite's files as one unit."""

    def _split_scope(self, nodeid: str) -> str:
        path = super()._split_scope(nodeid)
        return CONFORMANCE if path.startswith(CONFORMANCE) else path
