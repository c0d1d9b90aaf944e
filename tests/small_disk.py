"""A real filesystem that fills: a small tmpfs, mounted by the test that needs it.

Mounting takes root (and a kernel that lets this process mount); elsewhere the test is
skipped and says why.  :func:`fill` writes a file until the disk refuses (``ENOSPC``),
so what the code under test writes next fails as it would on a full production disk;
deleting that file gives the space back.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["fill", "small_tmpfs"]


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str = "8m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted on ``where`` (created) for the ``with`` block."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill takes root; this test runs as another user")
    where.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here (a container without CAP_SYS_ADMIN?): "
            f"{mounted.stderr.strip()}"
        )
    try:
        yield where
    finally:
        subprocess.run(["umount", "--lazy", str(where)], check=True)


def fill(directory: Path) -> Path:
    """A file in ``directory`` written until the disk is full; delete it to free the space."""
    filler = directory / "filler"
    chunk = bytes(64 << 10)
    with filler.open("wb", buffering=0) as file:
        for size in (len(chunk), 4096, 1):  # the last partial pages too
            try:
                while True:
                    file.write(chunk[:size])
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
    return filler
