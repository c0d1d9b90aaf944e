"""Writers of a store known alive or gone by their lock files, with real processes and
real signals (a SIGKILLed writer frees its lock; a forked child does not keep its
parent's)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from otel_prov.processing._liveness import WriterLock, forget_writer, gone_writers

_HOLD = (
    "import sys, time; from pathlib import Path; "
    "from otel_prov.processing._liveness import WriterLock; "
    "lock = WriterLock(Path(sys.argv[1]), sys.argv[2]); print('held', flush=True); "
    "time.sleep(60)"
)


def _holder(directory: Path, chain: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(directory), chain], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    return process


def test_a_killed_writer_is_gone_and_a_live_one_is_not(tmp_path: Path) -> None:
    alive, killed = _holder(tmp_path, "alive"), _holder(tmp_path, "killed")
    try:
        assert gone_writers(tmp_path) == set()
        killed.send_signal(signal.SIGKILL)
        killed.wait(10)
        assert gone_writers(tmp_path) == {"killed"}
        forget_writer(tmp_path, "killed")
        assert gone_writers(tmp_path) == set()
    finally:
        alive.kill()
        alive.wait(10)
    assert gone_writers(tmp_path) == {"alive"}


def test_a_writer_that_shuts_down_leaves_no_lock(tmp_path: Path) -> None:
    lock = WriterLock(tmp_path, "done")
    assert lock.path.exists() and gone_writers(tmp_path) == set()
    lock.release()
    assert not lock.path.exists() and gone_writers(tmp_path) == set()


def test_a_forked_child_does_not_keep_its_dead_parents_lock(tmp_path: Path) -> None:
    read, write = os.pipe()
    parent = os.fork()
    if parent == 0:  # the "parent" writer: forks a child, then dies
        lock = WriterLock(tmp_path, "parent")
        child = os.fork()
        if child == 0:
            lock.close_in_child()
            os.write(write, f"{os.getpid()}\n".encode())  # closed: the test may look
            time.sleep(30)
            os._exit(0)
        os._exit(0)  # dies without releasing: its child lives on
    os.waitpid(parent, 0)
    child = int(os.read(read, 64).decode())
    try:
        assert gone_writers(tmp_path) == {"parent"}
    finally:
        os.kill(child, signal.SIGKILL)
