"""Issue 30.1: a run's steps are provenance while the run goes on (``stream=True``).

Each test runs a real embedded store and reads it while the run is open, as a user of
``sessions``, ``show``, ``why`` and ``verify`` would.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pyoxigraph
import pytest

import otel_prov
from otel_prov import ProvHandle
from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.prov._rdf import literal
from otel_prov.prov._sealer import Sealer
from otel_prov.prov._stream import RUNNING, STREAMED, running_view
from otel_prov.prov._vocab import O
from otel_prov.read import ProvenanceReader, open_store
from tests.cli import run_cli
from tests.receiver import Receivers

VISIBLE_WITHIN_S = 2.0
_AGENT = [sys.executable, "-m", "tests.streaming_agent"]


def _until(check: Callable[[], bool], timeout: float = VISIBLE_WITHIN_S) -> float:
    """Seconds until ``check()`` held; fails past ``timeout``."""
    began = time.monotonic()
    while not check():
        assert time.monotonic() - began < timeout, f"not within {timeout} s"
        time.sleep(0.05)
    return time.monotonic() - began


def _reader(store: Path) -> ProvenanceReader:
    return open_store(store)


@pytest.fixture
def handle(tmp_path: Path) -> Iterator[ProvHandle]:
    made = otel_prov.configure(
        store=tmp_path / "store", set_global=False, stream=True, wal_dir=tmp_path / "wal"
    )
    yield made
    made.shutdown()


def _step(handle: ProvHandle, number: int) -> None:
    provider = handle.tracer_provider
    with otel_prov.iteration(number, thought=f"look up {number}", tracer_provider=provider):
        with otel_prov.model_call("m", tracer_provider=provider):
            pass
        with otel_prov.tool_call("lookup", arguments={"n": number}, tracer_provider=provider):
            otel_prov.set_observation(f"found {number}")


def _running(store: Path, steps: int) -> bool:
    runs = _reader(store).sessions().sessions
    return bool(runs) and runs[0].status == RUNNING and runs[0].iterations >= steps


def test_an_open_run_shows_its_finished_steps_as_running_and_verifies(
    handle: ProvHandle, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    with otel_prov.agent_session(
        "researcher", question="what?", tools=["lookup"], tracer_provider=handle.tracer_provider
    ):
        for number in (1, 2, 3):
            _step(handle, number)
            _until(lambda n=number: _running(store, n))  # type: ignore[misc]
        reader = _reader(store)
        run = reader.sessions().sessions[0]
        view = reader.session(run.id)
        assert view.status == RUNNING
        assert [step.number for step in view.iterations] == [1, 2, 3]
        assert all(step.status == "ok" for step in view.iterations)
        assert [call.status for step in view.iterations for call in step.tool_calls] == ["ok"] * 3
        assert view.answer is None
        checks = reader.verify(run.id)
        assert [check.problems for check in checks] == [()]
        assert all(passed is None for passed in checks[0].gates.values())
        for name in ("sessions", "show", "why", "verify"):
            args = [name, "--store", str(store)] + ([] if name == "sessions" else [run.id])
            result = run_cli(*args)
            assert result.returncode == 0, (name, result.stdout, result.stderr)
            if name in ("sessions", "show"):
                assert RUNNING in result.stdout, (name, result.stdout)
        otel_prov.set_answer("done")
    handle.force_flush()
    reader = _reader(store)
    run = reader.sessions().sessions[0]
    assert run.status == "ok" and run.iterations == 3
    assert reader.session(run.id).answer == "done"
    assert [check.problems for check in reader.verify(run.id)] == [()]
    assert [check.problems for check in reader.verify()] == [()]


def _open_store(path: Path, steps: int) -> Path:
    """A store holding a run's first ``steps`` streamed entries, the run still open."""
    from benchmarks.streaming_run import run_records

    exporter = OxigraphStoreExporter(path)
    sealer = Sealer(chain="open")
    for records, final in run_records(steps, streamed=True):
        if not final:
            exporter.export([r for r in (sealer.seal_step(x, 0) for x in records) if r])
    exporter.shutdown()
    return path


def test_an_open_run_left_by_its_writer_verifies_and_an_edit_of_it_fails(tmp_path: Path) -> None:
    store = _open_store(tmp_path / "store", 3)
    result = run_cli("verify", "--store", str(store))
    assert result.returncode == 0, result.stdout
    db = pyoxigraph.Store(str(store))
    db.update(
        "PREFIX prov: <http://www.w3.org/ns/prov#> "
        "PREFIX oprov: <https://w3id.org/otel-prov/ns#> "
        "DELETE { GRAPH ?g { ?o prov:value ?v } } INSERT { GRAPH ?g { ?o prov:value 'forged' } }"
        " WHERE { GRAPH ?g { ?o a oprov:Observation ; prov:value 'found 2' ; prov:value ?v } }"
    )
    del db
    result = run_cli("verify", "--store", str(store))
    assert result.returncode == 1, result.stdout
    assert "content changed since streamed entry" in result.stdout, result.stdout


def _sealed_run(steps: int, *, streamed: bool) -> tuple[int, int]:
    """(triples written, entries) for a run of ``steps`` steps, mapped and sealed as the
    processor does: once at its end, or after every step as well."""
    from benchmarks.streaming_run import run_records

    sealer = Sealer(chain="c")
    written = 0
    for records, final in run_records(steps, streamed=streamed):
        for record in records:
            sealed = sealer.seal(record, 0) if final else sealer.seal_step(record, 0)
            written += len(sealed.triples) if sealed is not None else 0
    return written, sealer.sequence


def test_a_200_step_streamed_run_writes_at_most_one_and_a_half_times_the_triples() -> None:
    at_end, entries_at_end = _sealed_run(200, streamed=False)
    streamed, entries = _sealed_run(200, streamed=True)
    assert entries_at_end == 1 and entries == 201
    assert streamed / at_end <= 1.5, (streamed, at_end)


def test_a_streamed_view_marks_open_activities_running_and_leaves_the_answer() -> None:
    from benchmarks.streaming_run import run_records

    (records, _), *_ = run_records(1, streamed=True)
    view = running_view(records[0].triples, records[0].root)
    assert (O.status, literal(RUNNING)) in {(p, o) for _, p, o in view}
    assert not any(o == literal("incomplete") for _, _, o in view)
    assert not any(s.endswith(":answer>") or o.endswith(":answer>") for s, _, o in view)
    assert (records[0].root, O.failedCalls) not in {(s, p) for s, p, _ in view}


def test_a_streamed_entry_names_its_canonical_form() -> None:
    from benchmarks.streaming_run import run_records

    sealer = Sealer(chain="c")
    (records, _), *_ = run_records(1, streamed=True)
    sealed = sealer.seal_step(records[0], 0)
    assert sealed is not None
    assert (O.canonicalization, literal(STREAMED)) in {(p, o) for _, p, o in sealed.triples}
    assert sealer.seal_step(records[0], 0) is None  # nothing new: no entry


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    result = run_cli("keygen", "--out", str(tmp_path / "keys"))
    assert result.returncode == 0, result.stderr
    return tmp_path / "keys"


def test_a_killed_process_leaves_its_steps_signed_and_verified(tmp_path: Path, keys: Path) -> None:
    store = tmp_path / "store"
    agent = subprocess.Popen(
        [*_AGENT, "store", str(store), "0", str(keys / "signing.key")],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parent.parent,
    )
    try:
        assert agent.stdout is not None
        for _ in range(3):
            agent.stdout.readline()
        _until(lambda: _running(store, 3), timeout=10)
        trusted = run_cli("verify", "--store", str(store), "--trust", str(keys / "signing.pub"))
        assert trusted.returncode == 0, trusted.stdout + trusted.stderr
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait(timeout=30)
    run = _reader(store).sessions().sessions[0]
    assert run.status == RUNNING and run.iterations >= 3
    view = _reader(store).session(run.id)
    assert [s.number for s in view.iterations][:3] == [1, 2, 3]
    for args in (("--trust", str(keys / "signing.pub")), ()):
        result = run_cli("verify", "--store", str(store), *args)
        assert result.returncode == 0, result.stdout + result.stderr
    # The next process on the same store and write-ahead log ends the run, incomplete,
    # with every step stored before the kill, and seals nothing of it twice.
    otel_prov.configure(store=store, set_global=False, wal_dir=f"{store}-wal").shutdown()
    ended = _reader(store).sessions().sessions[0]  # the log may add the step it died in
    assert ended.status == "incomplete" and ended.iterations >= run.iterations
    result = run_cli("verify", "--store", str(store))
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_run_whose_writer_was_killed_is_ended_by_the_next_writer_of_the_store(
    tmp_path: Path,
) -> None:
    """Without the dead process's write-ahead log (the next writer keeps its own): the next
    process writing the store finds the run's writer gone (its lock freed) and ends the
    run as it stands, incomplete."""
    store = tmp_path / "store"
    agent = subprocess.Popen(
        [*_AGENT, "store", str(store), "0"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parent.parent,
    )
    try:
        assert agent.stdout is not None
        for _ in range(3):
            agent.stdout.readline()
        _until(lambda: _running(store, 3), timeout=10)
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait(timeout=30)
    left = _reader(store).sessions().sessions[0]
    assert left.status == RUNNING
    otel_prov.configure(store=store, set_global=False, wal_dir=tmp_path / "own-wal").shutdown()
    ended = _reader(store).sessions().sessions[0]
    assert (ended.id, ended.status) == (left.id, "incomplete")
    assert ended.iterations == left.iterations
    result = run_cli("verify", "--store", str(store))
    assert result.returncode == 0, result.stdout + result.stderr


def test_steps_of_an_open_trace_sent_to_receive_appear_within_two_seconds(
    receivers: Receivers, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    receiver = receivers.start(
        "--store", str(store), "--data-dir", str(tmp_path / "data"), "--stream"
    )
    agent = subprocess.Popen(
        [*_AGENT, "otlp", receiver.http, "3"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parent.parent,
    )
    try:
        assert agent.stdout is not None and agent.stdin is not None
        for number in (1, 2, 3):
            agent.stdout.readline()
            _until(lambda n=number: _running(store, n))  # type: ignore[misc]
        run = _reader(store).sessions().sessions[0]
        assert [s.number for s in _reader(store).session(run.id).iterations] == [1, 2, 3]
        assert run_cli("verify", "--store", str(store)).returncode == 0
        agent.stdin.write("end\n")
        agent.stdin.flush()
        assert agent.wait(timeout=60) == 0
    finally:
        agent.kill()
    receiver.wait_for("otel_prov_receiver_traces_mapped_total", 1)
    assert receiver.stop() == 0
    reader = _reader(store)
    (run,) = reader.sessions().sessions
    assert run.status == "ok" and run.iterations == 3
    view = reader.session(run.id)
    assert view.answer == "done" and view.agent == "researcher"
    result = run_cli("verify", "--store", str(store))
    assert result.returncode == 0, result.stdout
