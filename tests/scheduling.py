"""pytest-xdist's work units for ``make test``: a test file, or the conformance suite.

``loadfile`` sends each file's tests to one worker, in order (its module fixtures start
once; a file may rely on its earlier tests).  The conformance suite's files go to one
worker together: they read the same scenario runs (``tests/conformance/conftest.py``,
``stores_of``), which a second worker would run a second time.  The files of
``tests/engines/`` go last: they run Jaeger and the Collector, which ``make test`` builds
in the background meanwhile (minutes on a fresh machine), so that the tests that need no
engine do not wait behind them.  Imported only when xdist schedules
(``tests/conftest.py``), so that the suite runs without xdist too.
"""

from __future__ import annotations

from xdist.scheduler import LoadFileScheduling
from xdist.workermanage import WorkerController

CONFORMANCE = "tests/conformance/"
ENGINES = "tests/engines/"


class FileScheduling(LoadFileScheduling):
    """``loadfile``, with the conformance suite's files as one unit and the engines'
    files last."""

    def _split_scope(self, nodeid: str) -> str:
        path = super()._split_scope(nodeid)
        return CONFORMANCE if path.startswith(CONFORMANCE) else path

    def _assign_work_unit(self, node: WorkerController) -> None:
        for scope in [scope for scope in self.workqueue if scope.startswith(ENGINES)]:
            self.workqueue.move_to_end(scope)
        super()._assign_work_unit(node)
