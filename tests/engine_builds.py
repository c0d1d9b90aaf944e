"""The engines' builds, for the tests that run them: ``scripts/build-jaeger.sh``,
``build-otelcol.sh`` and ``fetch-fuseki.sh`` build (or fetch) each once per machine into a
cache outside the checkout and print its path (``scripts/engine-cache.sh``).

``make test`` starts the three in the background while the tests that need none run;
:func:`built` runs the script again, which waits for the build under way or finds its
result.  A build that failed raises with the build's own output, so that every test that
needs the engine fails, never skips.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

__all__ = ["built"]

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = {"jaeger": "build-jaeger.sh", "otelcol": "build-otelcol.sh", "fuseki": "fetch-fuseki.sh"}
BUILD_TIMEOUT = 3600.0
"""A first build on a loaded two-core machine, with the other tests running beside it."""


@functools.cache
def _build(name: str) -> tuple[Path | None, str]:
    """The engine's path, or why there is none: once per process, so that a build that
    failed is not tried again by every test of the worker."""
    command = ["bash", str(ROOT / "scripts" / SCRIPTS[name])]
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        return None, f"{' '.join(command)} took over {BUILD_TIMEOUT:g}s: {exc.stderr!r}"
    lines = done.stdout.strip().splitlines()
    path = Path(lines[-1]) if lines else None
    if done.returncode != 0 or path is None or not path.exists():
        return None, f"{' '.join(command)} failed (exit {done.returncode}):\n{done.stderr}"
    return path, ""


def built(name: str) -> Path:
    """The path of engine ``name`` (``jaeger``, ``otelcol`` or ``fuseki``), built first
    when needed; a failed build raises with its output."""
    path, error = _build(name)
    if path is None:
        raise RuntimeError(error)
    return path
