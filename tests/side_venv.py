"""Tools the tests run from venvs of their own (``scripts/side-venv.sh``), installed on first use.

Arize Phoenix is too big for the project's ``.venv``; Google ADK pins an older
OpenTelemetry than it; LlamaIndex's OpenAI LLMs, Strands Agents and CrewAI an older
``openai`` (Strands and CrewAI an older ``mcp`` too, CrewAI an older ``pydantic``), and
Semantic Kernel an older ``pydantic`` and ``mcp``; the eight frameworks of
``scripts/frameworks-venv.sh`` (DSPy, Haystack, AutoGen, Agent Framework, Agno, LiteLLM,
AG2, BeeAI) agree with each other but would grow ``.venv`` by a hundred packages.  Each
has a script under ``scripts/`` that installs its venv (once; ``make servers`` runs them
ahead, side by side) and prints the executable a test runs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
INSTALL_TIMEOUT = 900.0


def installed(script: str, directory_variable: str) -> Path:
    """The executable ``scripts/<script>`` installs, installing it first when needed (minutes).

    ``directory_variable`` names an optional environment variable with the venv's directory."""
    command = ["bash", str(REPO_ROOT / "scripts" / script)]
    if directory := os.environ.get(directory_variable):
        command.append(directory)
    try:
        result = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"{script} took over {INSTALL_TIMEOUT:g}s") from exc
    lines = result.stdout.strip().splitlines()
    executable = Path(lines[-1]) if lines else None
    if result.returncode != 0 or executable is None or not os.access(executable, os.X_OK):
        output = "\n".join((result.stdout + result.stderr).strip().splitlines()[-30:])
        raise RuntimeError(
            f"{' '.join(command)} failed (exit {result.returncode}, "
            f"executable {executable}):\n{output}"
        )
    return executable
