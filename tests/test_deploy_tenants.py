"""deploy/docker-compose.tenants.yaml: two teams, a Collector with mutual TLS to two
receivers, a reader per team, certificates from deploy/tenants/make-certificates.sh.

Checked as the rest of deploy/ is (the Compose schema, dependencies, mounts, pinned
images, local ports; the Collector's pipelines against the Compose file), and more: the
script is run, and the receiver and reader commands of the Compose file run as real
processes with its certificates and tenants file, fed as the Collector's team-a pipeline
sends (OTLP/gRPC, mutual TLS, team A's client certificate), probed by the Compose
health check, and read by each team's reader with its token.
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from otel_prov._tls import canonical_subject
from tests.certificates import Issued
from tests.receiver import Receivers, run_agent
from tests.serving import serving
from tests.test_deploy import (
    DEPLOY,
    _environment,
    _load,
    _mounts,
    _services,
    dependency_problems,
    expand_env,
    image_problems,
    mount_problems,
    schema_problems,
)
from tests.test_receive_tls import _client_context, _sdk_env

COMPOSE = DEPLOY / "docker-compose.tenants.yaml"
COLLECTOR = DEPLOY / "otel-collector-tenants.yaml"
SCRIPT = DEPLOY / "tenants" / "make-certificates.sh"
TENANTS = DEPLOY / "tenants" / "tenants.json"
CERTS = "./tenants/certs"
TEAMS = ("team-a", "team-b")

Config = dict[str, Any]


@cache
def _compose() -> Config:
    return _load(COMPOSE)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("certs")
    done = subprocess.run(["sh", str(SCRIPT), str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out


def test_compose_file_is_valid_and_consistent() -> None:
    compose = _compose()
    assert schema_problems(compose) == []
    assert dependency_problems(compose) == []
    assert image_problems(compose) == []
    # tenants/certs/ holds only a .gitignore until the script fills it.
    assert mount_problems(compose) == []
    ports = [str(p) for s in _services(compose).values() for p in s.get("ports") or []]
    assert all(port.startswith("127.0.0.1:") for port in ports), ports
    assert len({port.rsplit(":", 1)[0] for port in ports}) == len(ports)
    assert _services(compose)["prov-receiver"]["deploy"]["replicas"] == 2


def _certificate_files(service: Config) -> set[str]:
    return {
        arg
        for arg in service.get("command") or []
        if isinstance(arg, str) and arg.startswith("/certs/")
    }


def test_the_script_makes_every_certificate_the_deployment_names(certs: Path) -> None:
    named: set[str] = set()
    for service in _services(_compose()).values():
        named |= _certificate_files(service)
        if any(src == CERTS for kind, src, target in _mounts(service) if target == "/certs"):
            continue
        assert not _certificate_files(service), service
    for pipeline in _pipelines():
        tls = pipeline["tls"]
        named |= {tls["ca_file"], tls["cert_file"], tls["key_file"]}
    made = {f"/certs/{path.name}" for path in certs.iterdir()}
    assert named <= made, named - made
    collector = _services(_compose())["otel-collector"]
    assert ("bind", CERTS, "/certs") in _mounts(collector)


# Every container that reads the keys runs as uid 10001: user `agent` of
# deploy/agent.Dockerfile and the Collector image's own user.
CONTAINER_UID = 10001
_RECORDING_OPENSSL = """#!/bin/sh
# openssl, then the mode of what it wrote (its -out file, or stdout when a file),
# before the script goes on: a key must be its owner's alone from its first instant.
"$REAL_OPENSSL" "$@"; code=$?
while [ $# -gt 1 ]; do
    if [ "$1" = -out ]; then stat -c '%a %n' "$2" >>"$MODES"; fi
    shift
done
if [ -f /proc/$$/fd/1 ]; then stat -L -c '%a stdout' /proc/$$/fd/1 >>"$MODES"; fi
exit $code
"""


def test_keys_and_tokens_are_their_owner_s_alone_from_the_start(tmp_path: Path) -> None:
    """Private keys and reader tokens are created mode 0600 (not chmod-ed later, so no
    instant readable by others), even where a run before left a readable one; only the
    certificates are readable by all."""
    out, shims = tmp_path / "certs", tmp_path / "bin"
    out.mkdir()
    shims.mkdir()
    (out / "reader-team-a.token").write_text("old\n")
    (out / "reader-team-a.token").chmod(0o644)  # as the script made them before
    (shims / "openssl").write_text(_RECORDING_OPENSSL)
    (shims / "openssl").chmod(0o755)
    modes = tmp_path / "modes"
    env = {
        **os.environ,
        "PATH": f"{shims}:{os.environ['PATH']}",
        "REAL_OPENSSL": shutil.which("openssl") or "openssl",
        "MODES": str(modes),
    }
    done = subprocess.run(["sh", str(SCRIPT), str(out)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    written = [line.split(" ", 1) for line in modes.read_text().splitlines()]
    secrets = [mode for mode, name in written if name.endswith("-key.pem") or name == "stdout"]
    assert secrets == ["600"] * 8, written  # 6 keys, 2 tokens
    final = {path.name: path.stat() for path in out.iterdir()}
    for name, info in final.items():
        private = name.endswith("-key.pem") or name.endswith(".token")
        assert stat.S_IMODE(info.st_mode) == (0o600 if private else 0o644), name
    assert stat.S_IMODE(out.stat().st_mode) == 0o755  # the containers reach their files
    assert f"--uid {CONTAINER_UID} " in (DEPLOY / "agent.Dockerfile").read_text()
    if os.geteuid() == 0:  # only root can give the containers' user its keys
        read_by_containers = {n for n in final if n.endswith((".token", "-key.pem"))}
        assert {n for n in final if final[n].st_uid == CONTAINER_UID} == read_by_containers - {
            "ca-key.pem"
        }


def _pipelines() -> list[Config]:
    """Each team's pipeline: its receiver's ports, exporter settings and TLS."""
    config = expand_env(_load(COLLECTOR), _environment(_services(_compose())["otel-collector"]))
    found = []
    for team in TEAMS:
        pipeline = config["service"]["pipelines"][f"traces/{team}"]
        (receiver,) = pipeline["receivers"]
        (exporter,) = pipeline["exporters"]
        assert pipeline["processors"][:1] == ["memory_limiter"], team
        assert "batch" in pipeline["processors"], team
        settings = config["exporters"][exporter]
        assert exporter.startswith("load_balancing/"), exporter
        assert settings["routing_key"] == "traceID"
        assert settings["resolver"]["dns"]["hostname"] == "prov-receiver"
        assert settings["resolver"]["dns"]["port"] == "4317"
        otlp = settings["protocol"]["otlp"]
        assert not otlp["tls"].get("insecure"), team
        protocols = config["receivers"][receiver]["protocols"]
        found.append(
            {
                "team": team,
                "tls": otlp["tls"],
                "http": protocols["http"]["endpoint"].rsplit(":", 1)[1],
            }
        )
    return found


def test_each_team_pipeline_sends_with_its_own_certificate(certs: Path) -> None:
    tenants = json.loads(TENANTS.read_text())["tenants"]
    pipelines = _pipelines()
    assert len({p["tls"]["cert_file"] for p in pipelines}) == len(TEAMS)
    assert len({p["http"] for p in pipelines}) == len(TEAMS)
    receiver = _services(_compose())["prov-receiver"]["command"]
    server = x509.load_pem_x509_certificate((certs / "receiver.pem").read_bytes())
    names = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    for pipeline in pipelines:
        team, tls = pipeline["team"], pipeline["tls"]
        cert = x509.load_pem_x509_certificate((certs / Path(tls["cert_file"]).name).read_bytes())
        subject = canonical_subject(cert.subject.rfc4514_string())
        assert [canonical_subject(s) for s in tenants[team]["subjects"]] == [subject]
        assert tls["server_name_override"] in names.get_values_for_type(x509.DNSName)
        # The team's agent sends to its pipeline's port.
        agent = _services(_compose())[f"agent-{team}"]["environment"]
        assert agent["OTEL_EXPORTER_OTLP_ENDPOINT"].endswith(f":{pipeline['http']}")
        reader = _services(_compose())[f"reader-{team}"]["command"]
        assert reader[reader.index("--tenant") + 1] == team
    assert receiver[receiver.index("--tenants") + 1] == "/etc/otel-prov/tenants.json"


def _local(command: list[str], certs: Path, store: Path, drop: tuple[str, ...]) -> list[str]:
    """A Compose command, run here: its files where the test has them, the store
    embedded, the flags of ``drop`` (and their values) left to the test."""
    args: list[str] = []
    rest = iter(command[2:])  # "otel-prov", the command
    for arg in rest:
        if arg in drop:
            next(rest)
        elif arg in ("--endpoint-update", "--endpoint"):
            next(rest)
            if "--store" not in args:
                args += ["--store", str(store)]
        else:
            args.append(
                arg.replace("/certs/", f"{certs}/").replace(
                    "/etc/otel-prov/tenants.json", str(TENANTS)
                )
            )
    return args


def test_the_deployment_runs_as_written(certs: Path, receivers: Receivers, tmp_path: Path) -> None:
    services = _services(_compose())
    store = tmp_path / "store"
    command = _local(services["prov-receiver"]["command"], certs, store, ("--grpc", "--http"))
    receiver = receivers.start(*command, "--trace-idle", "0.5")
    https = receiver.http.replace("127.0.0.1", "localhost")
    # The Compose health check, as written, against this receiver.
    probe = services["prov-receiver"]["healthcheck"]["test"][3]
    probe = probe.replace("/certs/", f"{certs}/").replace("https://localhost:4318", https)
    assert subprocess.run([sys.executable, "-c", probe], timeout=30).returncode == 0
    # As the Collector's team-a pipeline sends: gRPC, team A's client certificate.
    collector = _client_certificate(certs, "team-a")
    grpc_url = f"https://localhost:{receiver.grpc.rpartition(':')[2]}"
    sent = run_agent(
        "--protocol", "grpc", "--endpoint", grpc_url, env=_sdk_env(certs / "ca.pem", collector)
    )["traces"]  # fmt: skip
    receiver.http, receiver.tls = https, _client_context(certs / "ca.pem", collector)
    receiver.wait_for('otel_prov_receiver_sessions_sealed_total{tenant="team-a"}', 1)
    assert receiver.stop() == 0
    trace = sent[0] if isinstance(sent[0], str) else f"{sent[0]:032x}"
    for team in TEAMS:
        command = _local(services[f"reader-{team}"]["command"], certs, store, ("--host", "--port"))
        with serving(*command) as served:
            url = served.url.replace("127.0.0.1", "localhost") + "/"
            token = (certs / f"reader-{team}.token").read_text().strip()
            context = ssl.create_default_context(cafile=str(certs / "ca.pem"))
            page = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(page, timeout=60, context=context) as answer:
                text = answer.read().decode()
            assert (trace in text) == (team == "team-a"), team
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(urllib.request.Request(url), timeout=60, context=context)
            assert refused.value.code == 401


def _client_certificate(certs: Path, team: str) -> Issued:
    return Issued(certs / f"collector-{team}.pem", certs / f"collector-{team}-key.pem")
