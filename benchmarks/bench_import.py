"""What importing otel-prov costs an application (issue 28: a slim core).

For ``import otel_prov`` and each instrumentor's import: the cumulative microseconds that
``python -X importtime`` reports for the imported module (best of 5 fresh interpreters),
and the packages outside the standard library that the import loaded, with the
``otel_prov`` subpackages.  An instrumentor's import should load the OpenTelemetry API
and instrumentation packages only; setup, the exporters and the stores load when the
application configures otel-prov.
"""

from __future__ import annotations

import json
import subprocess
import sys

MODULES = (
    "otel_prov",
    "otel_prov.instrumentation.langchain",
    "otel_prov.instrumentation.openai_agents",
    "otel_prov.instrumentation.smolagents",
    "otel_prov.instrumentation.mcp",
)
RUNS = 5
HEAVY = (
    "otel_prov.setup",
    "otel_prov.exporters",
    "pyoxigraph",
    "requests",
    "SPARQLWrapper",
    "rdflib",
    "starlette",
    "uvicorn",
    "jinja2",
)
"""What an instrumentor's import must not load (tests/test_extras.py asserts it): setup,
the writers, the stores and the web stack."""

_LOADED = """
import json, sys
import {module}
names = sorted(sys.modules)
print(json.dumps(names))
"""


def import_microseconds(module: str) -> int:
    """The cumulative time ``-X importtime`` gives the top-level entry for ``module``."""
    stderr = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    for line in stderr.splitlines():
        parts = line.split("|")
        # "import time: SELF | CUMULATIVE | NAME", NAME indented two spaces per level.
        if len(parts) == 3 and parts[2] == f" {module}":
            return int(parts[1])
    raise LookupError(f"no importtime line for {module}")


def loaded(module: str) -> list[str]:
    """Every module in ``sys.modules`` once a fresh interpreter has imported ``module``."""
    out = subprocess.run(
        [sys.executable, "-c", _LOADED.format(module=module)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names: list[str] = json.loads(out)
    return names


def main() -> None:
    for module in MODULES:
        best = min(import_microseconds(module) for _ in range(RUNS))
        names = loaded(module)
        tops = sorted({name.partition(".")[0] for name in names})
        outside = [
            name
            for name in tops
            if name not in sys.stdlib_module_names and name[0] != "_" and name != "otel_prov"
        ]
        ours = sorted({".".join(n.split(".")[:2]) for n in names if n.startswith("otel_prov.")})
        heavy = [name for name in HEAVY if name in names]
        print(f"import {module}: {best} us (best of {RUNS})")
        print(f"  heavy modules: {', '.join(heavy) or 'none'}")
        print(f"  outside the standard library: {', '.join(outside) or 'nothing'}")
        print(f"  otel_prov: {', '.join(ours) or '-'}")


if __name__ == "__main__":
    main()
