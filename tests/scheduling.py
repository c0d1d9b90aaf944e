"""pytest-xdist's work units for ``make test``: a test file, or an ``xdist_group``.

xdist's ``loadgroup`` sends every test without a group to any worker on its own; this
keeps such tests together by file, as ``loadfile`` does (``tests/conftest.py`` says why).
Imported only when xdist schedules, so that the suite runs without workers too.
"""

from __future__ import annotations

from xdist.scheduler import LoadGroupScheduling


class FileOrGroupScheduling(LoadGroupScheduling):
    """``loadgroup``, with the tests outside any group grouped by their file."""

    def _split_scope(self, nodeid: str) -> str:
        scope = super()._split_scope(nodeid)  # the group, or the whole node id when none
        return nodeid.split("::", 1)[0] if scope == nodeid else f"@{scope}"
