"""Every shell and Python sample in the README and in ``docs/`` runs as written, in order,
as a reader following that page would run them.

The samples are each page's fenced blocks; each page is walked through on its own.
``python`` blocks run with the project's Python, ``sh``/``bash``/``shell`` blocks with
``bash -e -o pipefail`` (of a ``console`` block, the commands after ``$ ``; the rest is
their output, not compared), one after another in one working directory per page laid out
as a checkout (the repository's files linked in, the project's ``.venv/bin`` first on
``PATH``, no ``OTEL_*`` variables set), so that a block may use what the blocks above it
made (the demo's store, say).  A block passes when it exits 0; every ``otel-prov`` command
exits 1 when it finds nothing or a check fails.

A comment on the line above a fence says what else a block needs:

``<!-- sample: skip WHY -->``
    not run, for the reason given (a server that runs until stopped, the test suite).
``<!-- sample: file NAME=PATH -->``
    the repository file ``PATH`` is in the working directory as ``NAME`` (the reader's
    ``agent.py``, say).
``<!-- sample: needs oxigraph-server -->``, ``<!-- sample: needs otlp-receiver -->``
    run as an integration test, alone in a fresh directory, with that server started at
    a free port: the block's ``localhost:7878`` (Oxigraph) or ``localhost:4318`` (OTLP)
    is pointed there; afterwards the server must hold the block's session.

Directives combine with ``;`` (``skip`` takes the rest of the comment).  Fences in
another language are output or another program's configuration (:data:`NOT_RUN`); a
fence in a language in neither set fails the test, so a block added to a page
cannot go untested by accident.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.receiver import Receivers
from tests.servers import start_oxigraph

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
"""The README and every page of the docs."""
RUN = {"python": "python", "sh": "shell", "bash": "shell", "shell": "shell", "console": "shell"}
"""Fence languages that are run, and how (a ``console`` block: its ``$ `` lines)."""
NOT_RUN = {
    "text": "output, or a diagram in text",
    "sparql": "queries, run by tests/test_service_correlation.py",
    "yaml": "configuration of another program (the Collector)",
    "toml": "a configuration file",
    "json": "a configuration file (tests/test_tenants.py writes a tenants file)",
}
SERVERS = ("oxigraph-server", "otlp-receiver")
_LEFT_OUT = {".git", ".otel-prov", "build", ".cache", ".pytest_cache", ".hypothesis"}
_FENCE = re.compile(r"^```(\S*)\s*$")
_MARKER = re.compile(r"^<!-- sample: (.*) -->$")
_TIMEOUT = 300


class SampleError(ValueError):
    """A page holds a block this test cannot tell how to run."""


@dataclass(frozen=True)
class Sample:
    page: str
    """The page's path from the repository's root."""
    line: int
    """Of the opening fence, 1-based."""
    language: str
    code: str
    skip: str | None = None
    files: dict[str, str] = field(default_factory=dict)
    needs: str | None = None

    @property
    def runs(self) -> bool:
        return self.language in RUN and self.skip is None

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}-{self.language}"


def _directives(text: str, page: str, line: int) -> dict[str, object]:
    found: dict[str, object] = {"files": {}}
    # A reason may hold ";": skip takes the rest of the marker.
    parts = [text.strip()] if text.startswith("skip ") else text.split(";")
    for part in (p.strip() for p in parts):
        word, _, rest = part.partition(" ")
        rest = rest.strip()
        if word == "skip" and len(rest.split()) >= 3:
            found["skip"] = rest
        elif word == "file" and re.fullmatch(r"[\w.-]+=[\w./-]+", rest):
            name, path = rest.split("=")
            if not (ROOT / path).is_file():
                raise SampleError(f"{page}:{line}: no file {path} in the repository")
            found["files"] = {**found["files"], name: path}  # type: ignore[dict-item]
        elif word == "needs" and rest in SERVERS:
            found["needs"] = rest
        else:
            raise SampleError(
                f"{page}:{line}: {part!r} is not a sample directive (skip WHY, with the "
                f"reason in words; file NAME=PATH; needs {' or '.join(SERVERS)})"
            )
    return found


def samples(text: str, page: str = "README.md") -> list[Sample]:
    """The fenced blocks of ``text`` (the page ``page``) with what their markers say."""
    lines = text.splitlines()
    found = []
    index = 0
    while index < len(lines):
        opened = _FENCE.match(lines[index])
        if opened is None:
            index += 1
            continue
        start, language = index, opened.group(1)
        end = next((i for i in range(start + 1, len(lines)) if lines[i] == "```"), None)
        if end is None:
            raise SampleError(f"{page}:{start + 1}: the block is never closed")
        if language not in RUN and language not in NOT_RUN:
            raise SampleError(
                f"{page}:{start + 1}: a ```{language or '(no language)'} block: give it "
                f"a language this test runs ({', '.join(sorted(RUN))}) or knows is not to "
                f"be run ({', '.join(sorted(NOT_RUN))})"
            )
        above = next((lines[i] for i in range(start - 1, -1, -1) if lines[i].strip()), "")
        marker = _MARKER.match(above)
        directives = _directives(marker.group(1), page, start + 1) if marker else {"files": {}}
        body = lines[start + 1 : end]
        if language == "console":
            body = [line[2:] for line in body if line.startswith("$ ")]
        code = "\n".join(body) + "\n"
        found.append(Sample(page, start + 1, language, code, **directives))  # type: ignore[arg-type]
        index = end + 1
    return found


def _read_pages() -> tuple[list[Sample], str]:
    found: list[Sample] = []
    for path in PAGES:
        try:
            found += samples(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
        except SampleError as exc:  # reported by a test, so that the page's name for it shows
            return found, str(exc)
    return found, ""


SAMPLES, UNREADABLE = _read_pages()


def _environment() -> dict[str, str]:
    """The reader's: the project's commands first, none of OpenTelemetry's settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    return env


def checkout_view(directory: Path) -> Path:
    """A directory that looks like a checkout (so ``make demo`` and ``examples/`` work)
    and holds what the samples write.

    ``make`` would reinstall an out-of-date ``.venv`` from this directory, which is
    removed afterwards: refuse instead.
    """
    stale = subprocess.run(["make", "-q", ".venv/.installed-runtime"], cwd=ROOT, check=False)
    if stale.returncode != 0:
        pytest.fail("the project's .venv is older than pyproject.toml: run make first")
    directory.mkdir(parents=True, exist_ok=True)
    for entry in ROOT.iterdir():
        if entry.name not in _LEFT_OUT:
            (directory / entry.name).symlink_to(entry)
    return directory


def run_sample(
    sample: Sample, directory: Path, replace: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run one block in ``directory`` (its files put there first); the caller checks."""
    for name, path in sample.files.items():
        target = directory / name
        if not target.exists():
            shutil.copy(ROOT / path, target)
    code = sample.code
    for old, new in (replace or {}).items():
        code = code.replace(old, new)
    if RUN[sample.language] == "python":
        command = [str(ROOT / ".venv" / "bin" / "python"), "-c", code]
    else:
        command = ["bash", "-e", "-o", "pipefail", "-c", code]
    return subprocess.run(
        command,
        cwd=directory,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=_TIMEOUT,
        check=False,
    )


def _assert_ran(sample: Sample, result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, (
        f"{sample.name} exited {result.returncode}\n--- code\n{sample.code}"
        f"--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}"
    )


class Walkthrough:
    """One reader's working directory for one page; its blocks run in order, each once."""

    def __init__(self, directory: Path) -> None:
        self.directory = checkout_view(directory)
        self._done: dict[int, subprocess.CompletedProcess[str]] = {}

    def run_up_to(self, sample: Sample) -> subprocess.CompletedProcess[str]:
        for earlier in SAMPLES:
            if earlier.page != sample.page:
                continue
            if earlier.line > sample.line:
                break
            if earlier.runs and earlier.needs is None and earlier.line not in self._done:
                self._done[earlier.line] = run_sample(earlier, self.directory)
                if earlier is not sample:
                    _assert_ran(earlier, self._done[earlier.line])
        return self._done[sample.line]


@pytest.fixture(scope="module")
def walkthroughs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Walkthrough]:
    """A reader per page, made when its first sample runs."""
    return {}


def _walkthrough(
    walkthroughs: dict[str, Walkthrough], page: str, factory: pytest.TempPathFactory
) -> Walkthrough:
    if page not in walkthroughs:
        walkthroughs[page] = Walkthrough(factory.mktemp("page") / "reader")
    return walkthroughs[page]


LOCAL = [s for s in SAMPLES if s.runs and s.needs is None]
WITH_SERVERS = [s for s in SAMPLES if s.runs and s.needs is not None]


@pytest.mark.parametrize("sample", LOCAL, ids=[s.name for s in LOCAL])
def test_a_sample_runs_as_written(
    sample: Sample,
    walkthroughs: dict[str, Walkthrough],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    walkthrough = _walkthrough(walkthroughs, sample.page, tmp_path_factory)
    _assert_ran(sample, walkthrough.run_up_to(sample))


@pytest.mark.integration
@pytest.mark.parametrize("sample", WITH_SERVERS, ids=[s.name for s in WITH_SERVERS])
def test_a_sample_with_a_server_runs_as_written(sample: Sample, tmp_path: Path) -> None:
    directory = checkout_view(tmp_path / "reader")
    if sample.needs == "oxigraph-server":
        server = start_oxigraph(tmp_path)
        try:
            base = server.query_endpoint.removesuffix("/query")
            _assert_ran(sample, run_sample(sample, directory, {"http://localhost:7878": base}))
            listed = run_cli("sessions", "--endpoint", server.query_endpoint)
            assert listed.returncode == 0 and "urn:otel-prov:" in listed.stdout, listed
        finally:
            server.stop()
        return
    receivers = Receivers(tmp_path)
    try:
        store = tmp_path / "received"
        receiver = receivers.start("--store", str(store), name="otlp")
        result = run_sample(sample, directory, {"http://localhost:4318": receiver.http})
        _assert_ran(sample, result)
        assert receiver.stop() == 0, receiver.log_text()
    finally:
        receivers.close()
    listed = run_cli("sessions", "--store", str(store))
    assert listed.returncode == 0 and "urn:otel-prov:" in listed.stdout, listed


def test_every_sample_is_run_or_says_why_not() -> None:
    assert not UNREADABLE
    assert LOCAL and WITH_SERVERS  # the pages have both kinds
    assert {s.page for s in LOCAL} >= {"README.md", "docs/reading.md", "docs/sparql.md"}
    languages = {s.language for s in SAMPLES if not s.runs}
    assert languages <= set(NOT_RUN) | set(RUN)
    for sample in SAMPLES:
        if sample.language in RUN and not sample.runs:
            assert sample.skip is not None and len(sample.skip.split()) >= 3


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("```\nls\n```\n", "a ```(no language) block"),
        ("```ruby\nputs 1\n```\n", "a ```ruby block"),
        ("<!-- sample: skip -->\n```sh\nls\n```\n", "'skip' is not a sample directive"),
        ("<!-- sample: needs docker -->\n```sh\nls\n```\n", "'needs docker' is not"),
        ("<!-- sample: file a.py=no/such.py -->\n```sh\nls\n```\n", "no file no/such.py"),
        ("```sh\nls\n", "the block is never closed"),
    ],
)
def test_a_block_the_test_cannot_run_fails_it(text: str, problem: str) -> None:
    with pytest.raises(SampleError, match=re.escape(problem)):
        samples(f"# README\n\n{text}")


def test_a_sample_that_fails_is_caught(tmp_path: Path) -> None:
    (sample,) = samples("```sh\notel-prov show no-such-run --store store\n```\n")
    result = run_sample(sample, tmp_path)
    assert result.returncode != 0
    (console,) = samples("```console\n$ true\nok, said nothing\n$ exit 4\n```\n")
    assert console.code == "true\nexit 4\n" and run_sample(console, tmp_path).returncode == 4
    with pytest.raises(AssertionError, match=r"README\.md:1-sh exited"):
        _assert_ran(sample, result)
    (python,) = samples(
        "<!-- sample: skip not run here ok -->\n```python\nraise SystemExit(3)\n```\n"
    )
    assert not python.runs and run_sample(python, tmp_path).returncode == 3
