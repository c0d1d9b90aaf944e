"""Write docs/support-matrix.md from the conformance suite's scenarios (tests/conformance).

Each scenario of the suite states, per field, that it is read (the test checks the value),
absent (the test checks it is not there, and says why) or lost (a strict expected failure:
the suite fails the day it is read, until the entry goes).  So the suite's declarations are
its results, and this page is made from them, with the versions of the packages the suite
pins.  ``python scripts/support_matrix.py`` rewrites the page; ``--check`` exits 1 when it
is out of date (tests/test_docs.py runs it).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import tomllib
from _generated_page import write_or_check

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "support-matrix.md"
READ, ABSENT, LOST = "yes", "absent", "lost"
PACKAGES = (
    "openai",
    "openai-agents",
    "openinference-instrumentation-openai-agents",
    "openinference-instrumentation-openai",
    "opentelemetry-instrumentation-openai-agents",
    "opentelemetry-instrumentation-openai",
    "opentelemetry-instrumentation-openai-v2",
    "opentelemetry-util-genai",
    "langchain",
    "langchain-openai",
    "openinference-instrumentation-langchain",
    "opentelemetry-instrumentation-langchain",
    "smolagents",
    "openinference-instrumentation-smolagents",
    "mcp",
    "openinference-instrumentation-mcp",
    "pydantic-ai-slim",
)
"""The instrumentation packages the scenarios run in ``.venv``, as pinned by the dev extra."""
PATHS = "in process, `receive`"
"""The two ways every scenario's spans reach otel-prov (the suite checks they agree)."""

INTRO = """# Support matrix

What otel-prov reads of the runs that other instrumentations record. Each row is a
scenario of the conformance suite (`tests/conformance/`): a real agent under the real
package plays one scripted run (one tool answers, a second one raises, then the model
answers) against a local OpenAI-compatible server, and its spans reach otel-prov both in
process and through `otel-prov receive`; both must give a reader the same run. This page
is generated from the suite (`scripts/support_matrix.py`), whose tests fail when a cell
here stops being true.

- **yes**: read, and checked against the script's value.
- **absent**: the instrumentation does not put it in its spans; the note says why.
- **lost**: the spans hold it and otel-prov does not read it yet (issue 25).

## Frameworks

Each scenario's framework and the instrumentation that traces it, at the versions the
suite pins (in `.venv`, or in the side venv named), and the paths its spans take: in
process (`otel_prov.configure()`'s processor) and through `otel-prov receive` (OTLP/HTTP).
"Its own spans": the framework traces itself.
"""


PEOPLE_INTRO = """## People: the user a run acts for, and approvals

What each convention records of the people in a run (`tests/conformance/people.py`,
checked by `tests/conformance/test_people.py` against the pinned packages and a real
LangGraph human-in-the-loop run under their LangChain instrumentations). otel-prov's own
instrumentors record the OpenAI Agents SDK's tool approvals and LangGraph's interrupt and
resume ([Frameworks](frameworks.md)).

| convention | user the run acts for | approvals and interrupts |
| --- | --- | --- |"""


def _pins() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pins = {}
    for requirement in project["project"]["optional-dependencies"]["dev"]:
        name, _, version = requirement.partition("==")
        pins[name.strip().lower()] = version.strip()
    return pins


def _side_pins(script: str) -> list[tuple[str, str]]:
    """What a side venv's script pins: its ``"name==version"`` lines."""
    text = (ROOT / "scripts" / script).read_text(encoding="utf-8")
    return re.findall(r'^\s*"([\w.-]+)(?:\[[\w,]+\])?==([^"]+)"$', text, re.MULTILINE)


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _pinned(name: str, pins: dict[str, str]) -> str:
    return f"`{name}` {pins.get(name, '(as its dependants pin it)')}"


def _frameworks(scenarios: list[Any]) -> str:
    """The table of each scenario's framework, instrumentation, versions and paths."""
    dev = _pins()
    rows = ["| scenario | framework | instrumentation | venv | paths |", "| --- " * 5 + "|"]
    for scenario in scenarios:
        script = scenario.venv[0] if scenario.venv else None
        pins = dict(_side_pins(script)) if script else dev
        tracing = ", ".join(_pinned(name, pins) for name in scenario.instrumentation)
        rows.append(
            f"| {scenario.name} | {_pinned(scenario.framework, pins)} "
            f"| {tracing or 'its own spans'} | {f'`scripts/{script}`' if script else '`.venv`'} "
            f"| {PATHS} |"
        )
    return "\n".join(rows)


def page() -> str:
    sys.path.insert(0, str(ROOT))
    from tests.conformance.fields import FIELDS  # the checkout's suite
    from tests.conformance.people import PEOPLE
    from tests.conformance.test_conformance import SCENARIOS

    side_venvs = list(dict.fromkeys(s.venv[0] for s in SCENARIOS if s.venv))
    notes: dict[str, int] = {}

    def cell(reason: str, word: str) -> str:
        number = notes.setdefault(reason, len(notes) + 1)
        return f"{word} [{number}]"

    rows = []
    for scenario in SCENARIOS:
        cells = []
        for name in FIELDS:
            if name in scenario.absent:
                cells.append(cell(scenario.absent[name], ABSENT))
            elif name in scenario.lost:
                cells.append(cell(scenario.lost[name], LOST))
            else:
                cells.append(READ)
        rows.append(f"| {scenario.name} | " + " | ".join(cells) + " |")
    header = "| scenario | " + " | ".join(FIELDS) + " |\n|" + " --- |" * (len(FIELDS) + 1)
    pins = _pins()
    versions = "\n".join(
        f"| `{name}` | {pins.get(name, 'as its dependants pin it')} |" for name in PACKAGES
    )
    for script in side_venvs:
        versions += f"\n\nIn the side venv of `scripts/{script}`:\n\n| package | version |\n"
        versions += "| --- | --- |\n" + "\n".join(
            f"| `{name}` | {version} |" for name, version in _side_pins(script)
        )
    listed = "\n".join(f"{number}. {_one_line(reason)}" for reason, number in notes.items())
    people = "\n".join(f"| {p.convention} | {p.user} | {p.approvals} |" for p in PEOPLE)
    return (
        f"{INTRO}\n{_frameworks(list(SCENARIOS))}\n\n## Fields\n\n{header}\n"
        + "\n".join(rows)
        + f"\n\n## Notes\n\n{listed}\n\n{PEOPLE_INTRO}\n{people}\n"
        + f"\n## Versions\n\n| package | version |\n| --- | --- |\n{versions}\n"
    )


def main(argv: list[str]) -> int:
    return write_or_check(PAGE, page(), argv, "support_matrix.py")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
