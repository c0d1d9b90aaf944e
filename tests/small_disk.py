"""A small real filesystem that a test can fill: a tmpfs mounted for the test (root only)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_tmpfs(where: Path, size: str) -> Iterator[Path]:
    """Mount a tmpfs of ``size`` (``mount``'s syntax: ``32m``) at ``where`` for the block;
    the test is skipped, with the reason, where this process may not mount one."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root")
    where.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "--lazy", str(where)], check=False)


def fill(path: Path) -> int:
    """Write ``path`` until its filesystem is full (ENOSPC); returns the bytes written."""
    written = 0
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        block = b"\0" * 65536
        while True:
            try:
                written += os.write(descriptor, block)
            except OSError:
                break
        for _ in range(64):  # the last partial pages
            try:
                written += os.write(descriptor, b"\0")
            except OSError:
                break
    finally:
        os.close(descriptor)
    return written
