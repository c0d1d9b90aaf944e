"""Several agents, the demo and CLI reads in one project directory at once: no crash, every
session lands exactly once (the processes that cannot get the store park their batches)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyoxigraph

from tests.cli import CLI, run_cli

ROOT = Path(__file__).resolve().parents[1]
AGENTS, SESSIONS = 4, 5

AGENT = textwrap.dedent("""
    import sys, time
    import otel_prov
    agent = sys.argv[1]
    handle = otel_prov.configure(set_global=False, otlp=False, service_name=agent)
    tp = handle.tracer_provider
    for number in range(int(sys.argv[2])):
        name = f"{agent}-session-{number}"
        with otel_prov.agent_session(agent, question=name, conversation_id=name,
                                     tracer_provider=tp) as s:
            with otel_prov.iteration(1, tracer_provider=tp):
                with otel_prov.tool_call("lookup", arguments="{}", call_id=name,
                                         tracer_provider=tp):
                    otel_prov.set_observation(name)
            otel_prov.set_answer(name, span=s)
        time.sleep(0.3)  # sessions go out one worker cycle at a time, interleaved
    handle.shutdown()
    stats = handle.processor.statistics()
    print(stats.records_exported, stats.records_failed)
""")


def test_four_agents_the_demo_and_readers_share_one_store(tmp_path: Path) -> None:
    store = tmp_path / ".otel-prov" / "store"
    environment = {
        **os.environ,
        "OTEL_PROV_STORE": str(store),
        "OTEL_PROV_WAL_DIR": str(tmp_path / ".otel-prov" / "wal"),
    }
    agents = [
        subprocess.Popen(
            [sys.executable, "-c", AGENT, f"agent{index}", str(SESSIONS)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
        )
        for index in range(AGENTS)
    ]
    try:
        deadline = time.monotonic() + 60
        while not store.is_dir() and time.monotonic() < deadline:
            time.sleep(0.05)
        readers = []
        for _ in range(3):  # while the agents run: reads, and the demo (a fifth writer)
            readers.append(_cli(tmp_path, environment, "sessions", "--format", "json"))
            readers.append(_cli(tmp_path, environment, "demo"))
            time.sleep(0.5)
        outputs = [agent.communicate(timeout=120) for agent in agents]
    finally:
        for agent in agents:
            agent.kill()
            agent.wait(timeout=30)
    for agent, (out, err) in zip(agents, outputs, strict=True):
        assert agent.returncode == 0 and "Traceback" not in err, err
        assert out.split() == [str(SESSIONS), "0"]
    for reader in readers:
        out, err = reader.communicate(timeout=120)
        assert reader.returncode in (0, 1) and "Traceback" not in err, err
    flushed = run_cli("flush", "--store", str(store))  # whatever is still parked
    assert flushed.returncode == 0, flushed.stderr
    assert not list((store.parent / "store.parked").glob("*.nq"))
    listed = run_cli("sessions", "--store", str(store), "--limit", "100")
    assert listed.returncode == 0 and "parked" not in listed.stderr
    rows = pyoxigraph.Store.read_only(str(store)).query(
        """PREFIX oprov: <https://w3id.org/otel-prov/ns#>
        SELECT ?id (COUNT(?s) AS ?n) WHERE { ?s a oprov:AgentSession ; oprov:sessionId ?id }
        GROUP BY ?id""",
        use_default_graph_as_union=True,
    )
    counts = {row["id"].value: int(row["n"].value) for row in rows}  # type: ignore[index, union-attr]
    expected = {f"agent{a}-session-{n}" for a in range(AGENTS) for n in range(SESSIONS)}
    assert {k: v for k, v in counts.items() if k in expected} == dict.fromkeys(expected, 1)
    assert counts.get("demo-conversation") == 3  # three demo runs, a session each
    # Seven writers at once, each a chain of its own: every chain whole, none branched.
    verified = run_cli("verify", "--all", "--store", str(store))
    assert verified.returncode == 0, verified.stdout
    chains = pyoxigraph.Store.read_only(str(store)).query(
        "SELECT DISTINCT ?c WHERE { ?b <https://w3id.org/otel-prov/ns#chainId> ?c ; "
        "<https://w3id.org/otel-prov/ns#bundleOf> ?s }",
        use_default_graph_as_union=True,
    )
    assert len(list(chains)) == AGENTS + 3  # type: ignore[arg-type]


def _cli(cwd: Path, environment: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
