"""Static checks of deploy/: no Docker engine, no network.

The Compose file is validated against the Compose Specification's JSON schema as
shipped in the ``check-jsonschema`` package; the Collector, Tempo and Grafana files are
parsed and cross-checked with the Compose file.  Each check is a function that returns
the problems it finds, tested on the real files (no problem) and on broken copies (the
problem is found), so that a broken deployment cannot pass.
"""

from __future__ import annotations

import ast
import copy
import importlib.util
import json
import re
import sys
from collections.abc import Callable, Mapping
from functools import cache
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jsonschema
import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "docker-compose.yaml"
COLLECTOR = DEPLOY / "otel-collector.yaml"
LOADBALANCING = DEPLOY / "otel-collector-loadbalancing.yaml"
RECEIVERS = DEPLOY / "docker-compose.receivers.yaml"
RECEIVER_SERVICE = "prov-receiver"
TEMPO = DEPLOY / "tempo.yaml"
DATASOURCES = DEPLOY / "grafana" / "datasources.yaml"
DOCKERFILE = DEPLOY / "agent.Dockerfile"
AGENT_REQUIREMENTS = DEPLOY / "agent-requirements.txt"
EXAMPLE = ROOT / "examples" / "service_app.py"

SCHEMA_DISTRIBUTION = "check-jsonschema"
SCHEMA_FILE = "check_jsonschema/builtin_schemas/vendor/compose-spec.json"

AGENT_ENV = {
    "OTEL_SERVICE_NAME": "agent-service",
    "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector:4318",
    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    "OTEL_PROV_SPARQL_UPDATE_ENDPOINT": "http://oxigraph:7878/update",
    "OTEL_PROV_SPARQL_QUERY_ENDPOINT": "http://oxigraph:7878/query",
    "OTEL_PROV_JAEGER_URL": "http://localhost:16686/trace/{trace_id}",
    "OTEL_PROV_SPOOL_DIR": "/spool",
}
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"

Config = dict[str, Any]


def _load(path: Path) -> Config:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path} is not a YAML mapping"
    return data


@cache
def _compose() -> Config:
    return _load(COMPOSE)


def _fresh(path: Path) -> Config:
    """A copy that a test may break; a Collector configuration as the Collector reads it
    in the stack that mounts it (:func:`expand_env`)."""
    if path in (COLLECTOR, LOADBALANCING):
        stack = _with_receivers() if path == LOADBALANCING else _fresh(COMPOSE)
        return expand_env(_load(path), _environment(stack["services"]["otel-collector"]))
    return copy.deepcopy(_compose() if path == COMPOSE else _load(path))


_ENV_REFERENCE = re.compile(r"\$\{env:(\w+)(?::-([^}]*))?\}")


def expand_env(value: Any, env: Mapping[str, str]) -> Any:
    """A Collector configuration as the Collector reads it with the environment ``env``:
    each ``${env:NAME}`` or ``${env:NAME:-default}`` replaced, a whole value by the YAML
    it holds (as the Collector's env provider does), as a new copy.  The files themselves
    are run by the real binaries in ``tests/engines/test_deploy_engines.py``."""
    if isinstance(value, dict):
        return {key: expand_env(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [expand_env(item, env) for item in value]
    if not isinstance(value, str):
        return value

    def lookup(reference: re.Match[str]) -> str:
        name, default = reference.group(1), reference.group(2)
        if name not in env and default is None:
            raise KeyError(f"${{env:{name}}} is unset and has no default")
        return env.get(name, default or "")

    whole = _ENV_REFERENCE.fullmatch(value)
    if whole:
        return yaml.safe_load(lookup(whole))
    return _ENV_REFERENCE.sub(lookup, value)


def merge_compose(base: Config, override: Config) -> Config:
    """What ``docker compose -f base -f override`` runs, by Compose's merge rules: mappings
    merge key by key (``environment``, ``depends_on``, ...), a service's ``volumes`` merge
    by container path and its ``ports`` add up, any other sequence (``command``, a
    healthcheck's ``test``) is replaced."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if key == "services":
            services = merged.setdefault("services", {})
            for name, service in value.items():
                services[name] = _merge_service(services.get(name, {}), service)
        else:
            merged[key] = _merge_mapping(merged.get(key), value)
    return merged


def _merge_mapping(base: Any, override: Any) -> Any:
    if not (isinstance(base, dict) and isinstance(override, dict)):
        return copy.deepcopy(override)
    merged = copy.deepcopy(base)
    for key, value in override.items():
        merged[key] = _merge_mapping(merged.get(key), value)
    return merged


def _merge_service(base: Config, override: Config) -> Config:
    rest = {k: v for k, v in override.items() if k not in ("volumes", "ports")}
    merged: Config = _merge_mapping(base, rest)
    if "volumes" in override:
        volumes = base.get("volumes") or []
        by_target = {m[2]: entry for m, entry in zip(_mounts(base), volumes, strict=True)}
        for mount, entry in zip(_mounts(override), override["volumes"], strict=True):
            by_target[mount[2]] = entry
        merged["volumes"] = list(by_target.values())
    if "ports" in override:
        merged["ports"] = [*(base.get("ports") or []), *override["ports"]]
    return merged


def _with_receivers() -> Config:
    return merge_compose(_fresh(COMPOSE), _load(RECEIVERS))


STACKS: dict[str, Callable[[], Config]] = {
    "default": lambda: _fresh(COMPOSE),
    "receivers": _with_receivers,
}
"""The stack as ``docker-compose.yaml`` runs it, and with the scale-out override."""


# --- Compose Specification schema -------------------------------------------------


@cache
def _compose_validator() -> jsonschema.protocols.Validator:
    try:
        dist = metadata.distribution(SCHEMA_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pytest.fail(f"the dev extra's {SCHEMA_DISTRIBUTION} (Compose schema) is not installed")
    path = Path(str(dist.locate_file(SCHEMA_FILE)))
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert schema.get("title") == "Compose Specification", path
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def schema_problems(compose: Config) -> list[str]:
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
        for error in _compose_validator().iter_errors(compose)
    ]


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_compose_file_matches_the_compose_specification(stack: str) -> None:
    assert schema_problems(STACKS[stack]()) == []


def _misspelt_top_level_key(c: Config) -> None:
    c["service"] = c.pop("services")


def _unknown_service_key(c: Config) -> None:
    c["services"]["agent"]["enviroment"] = {"A": "b"}


def _healthcheck_test_not_a_command(c: Config) -> None:
    c["services"]["jaeger"]["healthcheck"]["test"] = {"cmd": "wget"}


def _bad_depends_on_condition(c: Config) -> None:
    c["services"]["agent"]["depends_on"]["oxigraph"]["condition"] = "service_ready"


def _ports_not_a_list(c: Config) -> None:
    c["services"]["oxigraph"]["ports"] = "7878:7878"


@pytest.mark.parametrize(
    "breakage",
    [
        _misspelt_top_level_key,
        _unknown_service_key,
        _healthcheck_test_not_a_command,
        _bad_depends_on_condition,
        _ports_not_a_list,
    ],
)
def test_schema_rejects_a_broken_compose_file(breakage: Callable[[Config], None]) -> None:
    compose = _fresh(COMPOSE)
    breakage(compose)
    assert schema_problems(compose)


# --- Collector configurations -------------------------------------------------------


def _component_type(component_id: str) -> str:
    return component_id.split("/", 1)[0]


def _host_port(endpoint: str) -> tuple[str, int]:
    parts = urlsplit(endpoint if "://" in endpoint else f"//{endpoint}")
    assert parts.hostname is not None and parts.port is not None, endpoint
    return parts.hostname, parts.port


def pipeline_problems(config: Config, *, backends: Mapping[str, int]) -> list[str]:
    """What keeps the ``traces`` pipeline from taking OTLP in and sending it to ``backends``
    (host -> OTLP gRPC port), each through an insecure ``otlp`` exporter."""
    problems: list[str] = []
    service = config.get("service") or {}
    for name in service.get("extensions") or []:
        if name not in (config.get("extensions") or {}):
            problems.append(f"service.extensions names undefined {name!r}")
    traces = (service.get("pipelines") or {}).get("traces")
    if not isinstance(traces, dict):
        return [*problems, "no traces pipeline"]
    for kind in ("receivers", "processors", "exporters"):
        for name in traces.get(kind) or []:
            if name not in (config.get(kind) or {}):
                problems.append(f"traces pipeline names undefined {kind[:-1]} {name!r}")
    if "otlp" not in (traces.get("receivers") or []):
        problems.append("traces pipeline does not receive otlp")
    protocols = ((config.get("receivers") or {}).get("otlp") or {}).get("protocols") or {}
    for protocol, port in (("grpc", 4317), ("http", 4318)):
        endpoint = (protocols.get(protocol) or {}).get("endpoint")
        if endpoint != f"0.0.0.0:{port}":
            problems.append(f"otlp {protocol} receiver listens on {endpoint!r}, not 0.0.0.0:{port}")
    processors = traces.get("processors") or []
    if processors[:1] != ["memory_limiter"] or "batch" not in processors:
        problems.append(f"processors {processors} do not start with memory_limiter and batch")
    exporters = config.get("exporters") or {}
    sent_to: dict[str, int] = {}
    for name in traces.get("exporters") or []:
        settings = exporters.get(name) or {}
        if _component_type(name) == "otlp_grpc" and "endpoint" in settings:
            host, port = _host_port(settings["endpoint"])
            sent_to[host] = port
            if not (settings.get("tls") or {}).get("insecure"):
                problems.append(f"{name} to {host} (plain gRPC in the stack) lacks tls.insecure")
    for host, port in backends.items():
        if sent_to.get(host) != port:
            problems.append(f"traces pipeline sends nothing to {host}:{port} over OTLP")
    return problems


def loadbalancing_problems(config: Config) -> list[str]:
    """What keeps the load-balancing exporter from sending each trace, whole, to one of
    the ``otel-prov receive`` replicas behind ``prov-receiver``."""
    problems: list[str] = []
    traces = ((config.get("service") or {}).get("pipelines") or {}).get("traces") or {}
    names = [n for n in traces.get("exporters") or [] if _component_type(n) == "load_balancing"]
    if len(names) != 1:
        return [f"traces pipeline has {len(names)} load_balancing exporters, not 1"]
    settings = (config.get("exporters") or {}).get(names[0]) or {}
    if settings.get("routing_key") != "traceID":
        problems.append(f"routing_key is {settings.get('routing_key')!r}, not 'traceID'")
    otlp = (settings.get("protocol") or {}).get("otlp")
    if not isinstance(otlp, dict):
        problems.append("protocol is not otlp")
    elif "endpoint" in otlp:
        problems.append("protocol.otlp sets an endpoint, which the resolver owns")
    dns = (settings.get("resolver") or {}).get("dns") or {}
    if dns.get("hostname") != RECEIVER_SERVICE:
        problems.append(f"dns resolver hostname is {dns.get('hostname')!r}")
    if str(dns.get("port", "4317")) != "4317":
        problems.append(f"dns resolver port is {dns.get('port')!r}, not the OTLP gRPC 4317")
    return problems


BACKENDS = {"jaeger": 4317, "tempo": 4317}


@pytest.mark.parametrize("path", [COLLECTOR, LOADBALANCING], ids=lambda p: p.name)
def test_collector_traces_pipeline(path: Path) -> None:
    assert pipeline_problems(_fresh(path), backends=BACKENDS) == []


def test_loadbalancing_routes_by_trace_id() -> None:
    assert loadbalancing_problems(_fresh(LOADBALANCING)) == []


def test_plain_collector_has_no_loadbalancing_exporter() -> None:
    assert "load_balancing" not in _fresh(COLLECTOR)["exporters"]


def _drop_tempo_from_pipeline(c: Config) -> None:
    c["service"]["pipelines"]["traces"]["exporters"].remove("otlp_grpc/tempo")


def _undefined_exporter(c: Config) -> None:
    del c["exporters"]["otlp_grpc/jaeger"]


def _localhost_receiver(c: Config) -> None:
    c["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"] = "localhost:4317"


def _batch_before_memory_limiter(c: Config) -> None:
    c["service"]["pipelines"]["traces"]["processors"] = ["batch", "memory_limiter"]


def _jaeger_port_wrong(c: Config) -> None:
    c["exporters"]["otlp_grpc/jaeger"]["endpoint"] = "jaeger:14250"


def _no_traces_pipeline(c: Config) -> None:
    c["service"]["pipelines"] = {"metrics": c["service"]["pipelines"]["traces"]}


@pytest.mark.parametrize(
    "breakage",
    [
        _drop_tempo_from_pipeline,
        _undefined_exporter,
        _localhost_receiver,
        _batch_before_memory_limiter,
        _jaeger_port_wrong,
        _no_traces_pipeline,
    ],
)
def test_pipeline_check_catches(breakage: Callable[[Config], None]) -> None:
    config = _fresh(COLLECTOR)
    breakage(config)
    assert pipeline_problems(config, backends=BACKENDS)


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("routing_key",), "service"),
        (("resolver", "dns", "hostname"), "otel-collector"),
        (("protocol",), {"otlphttp": {}}),
    ],
)
def test_loadbalancing_check_catches(where: tuple[str, ...], value: object) -> None:
    config = _fresh(LOADBALANCING)
    target = config["exporters"]["load_balancing"]
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    assert loadbalancing_problems(config)


def test_loadbalancing_check_catches_a_missing_exporter() -> None:
    config = _fresh(LOADBALANCING)
    config["service"]["pipelines"]["traces"]["exporters"].remove("load_balancing")
    assert loadbalancing_problems(config)


# --- Compose file: services, mounts, images, environment ----------------------------


def _services(compose: Config) -> dict[str, Config]:
    services = compose.get("services")
    assert isinstance(services, dict)
    return services


def _environment(service: Config) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        return dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {str(k): "" if v is None else str(v) for k, v in env.items()}


def _depends_on(service: Config) -> dict[str, str]:
    """Target -> condition, for both the list and the mapping form."""
    deps = service.get("depends_on") or {}
    if isinstance(deps, list):
        return {name: "service_started" for name in deps}
    return {name: (spec or {}).get("condition", "service_started") for name, spec in deps.items()}


def _mounts(service: Config) -> list[tuple[str, str, str]]:
    """(type, source, target) of each volume entry: ``bind`` or ``volume``."""
    mounts = []
    for entry in service.get("volumes") or []:
        if isinstance(entry, str):
            source, _, rest = entry.partition(":")
            target = rest.split(":", 1)[0]
            kind = "bind" if source.startswith((".", "/", "~")) else "volume"
        else:
            kind, source, target = entry["type"], entry.get("source", ""), entry["target"]
        mounts.append((kind, source, target))
    return mounts


def dependency_problems(compose: Config) -> list[str]:
    services = _services(compose)
    problems = []
    for name, service in services.items():
        for target, condition in _depends_on(service).items():
            if target not in services:
                problems.append(f"{name} depends on undefined service {target!r}")
            elif condition == "service_healthy" and "healthcheck" not in services[target]:
                problems.append(f"{name} waits for {target} to be healthy: it has no healthcheck")
            elif condition == "service_completed_successfully" and (
                services[target].get("restart", "no") != "no"
            ):
                problems.append(f"{name} waits for {target} to exit, but it restarts")
    return problems


def mount_problems(compose: Config, base: Path = DEPLOY) -> list[str]:
    """Bind-mounted files that are not in the repository, and undeclared named volumes."""
    declared = set(compose.get("volumes") or {})
    problems = []
    for name, service in _services(compose).items():
        for kind, source, target in _mounts(service):
            if kind == "bind" and not (base / source).exists():
                problems.append(f"{name} mounts missing {source} at {target}")
            if kind == "volume" and source not in declared:
                problems.append(f"{name} mounts undeclared volume {source!r}")
        build = service.get("build")
        if build is not None:
            context = base / (build if isinstance(build, str) else build.get("context", "."))
            dockerfile = "Dockerfile" if isinstance(build, str) else build.get("dockerfile")
            if not (context / (dockerfile or "Dockerfile")).is_file():
                problems.append(f"{name} builds from missing {context / (dockerfile or '')}")
    return problems


def _image_tag(image: str) -> str | None:
    """The tag of ``[registry[:port]/]name[:tag][@digest]``, or None."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def image_problems(compose: Config) -> list[str]:
    """Images that do not name a version: no tag (and no digest), or ``latest``."""
    problems = []
    for name, service in _services(compose).items():
        image = service.get("image")
        if not isinstance(image, str):
            problems.append(f"{name} has no image")
            continue
        tag = _image_tag(image)
        if (tag is None and "@sha256:" not in image) or tag in ("latest", ""):
            problems.append(f"{name} image {image!r} is not pinned to a version")
    return problems


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_depends_on_targets_exist(stack: str) -> None:
    assert dependency_problems(STACKS[stack]()) == []


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_mounted_files_and_build_files_exist(stack: str) -> None:
    assert mount_problems(STACKS[stack]()) == []


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_every_image_is_pinned(stack: str) -> None:
    assert image_problems(STACKS[stack]()) == []


def test_dependency_check_catches_an_undefined_target() -> None:
    compose = _fresh(COMPOSE)
    compose["services"]["agent"]["depends_on"]["otel-collectr"] = {"condition": "service_started"}
    assert dependency_problems(compose)


def test_dependency_check_catches_a_wait_for_health_without_healthcheck() -> None:
    compose = _fresh(COMPOSE)
    compose["services"]["agent"]["depends_on"]["oxigraph"] = {"condition": "service_healthy"}
    assert dependency_problems(compose)


def test_mount_check_catches_a_missing_file_and_an_undeclared_volume() -> None:
    compose = _fresh(COMPOSE)
    compose["services"]["tempo"]["volumes"][0] = "./tempo.yml:/etc/tempo.yaml:ro"
    compose["services"]["oxigraph"]["volumes"] = ["oxigraph-dat:/data"]
    assert len(mount_problems(compose)) == 2


@pytest.mark.parametrize(
    "image",
    [
        "grafana/grafana",
        "grafana/grafana:latest",
        "ghcr.io/oxigraph/oxigraph:latest",
        "localhost:5000/oxigraph",
    ],
)
def test_image_check_catches_an_unpinned_image(image: str) -> None:
    compose = _fresh(COMPOSE)
    compose["services"]["grafana"]["image"] = image
    assert image_problems(compose)


def test_agent_environment() -> None:
    env = _environment(_fresh(COMPOSE)["services"]["agent"])
    assert {k: env.get(k) for k in AGENT_ENV} == AGENT_ENV
    assert {k for k in env if k.startswith("OTEL_EXPORTER_OTLP_")} >= {
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    }
    assert "{trace_id}" in env["OTEL_PROV_TEMPO_URL"]


def test_agent_endpoints_name_services_it_waits_for() -> None:
    compose = _fresh(COMPOSE)
    agent = compose["services"]["agent"]
    env = _environment(agent)
    for variable in (
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_PROV_SPARQL_UPDATE_ENDPOINT",
        "OTEL_PROV_SPARQL_QUERY_ENDPOINT",
    ):
        host, _ = _host_port(env[variable])
        assert host in _depends_on(agent), f"{variable} names {host}, which agent does not wait for"
    oxigraph_command = compose["services"]["oxigraph"]["command"]
    bind = oxigraph_command[oxigraph_command.index("--bind") + 1]
    assert _host_port(bind) == ("0.0.0.0", _host_port(env["OTEL_PROV_SPARQL_QUERY_ENDPOINT"])[1])
    spool = env["OTEL_PROV_SPOOL_DIR"]
    assert any(kind == "volume" and target == spool for kind, _, target in _mounts(agent))


def _host_port_of(published: str) -> str:
    """The host side of a short ``[ip:][host:]container`` port entry."""
    parts = published.split("/", 1)[0].rsplit(":", 2)
    return parts[-2] if len(parts) >= 2 else parts[-1]


def test_trace_links_open_the_trace() -> None:
    compose = _fresh(COMPOSE)
    env = _environment(compose["services"]["agent"])
    published = {
        _host_port_of(str(port))
        for service in compose["services"].values()
        for port in service.get("ports") or []
    }
    jaeger = urlsplit(env["OTEL_PROV_JAEGER_URL"].replace("{trace_id}", TRACE_ID))
    assert str(jaeger.port) in published and jaeger.path == f"/trace/{TRACE_ID}"

    tempo = urlsplit(env["OTEL_PROV_TEMPO_URL"].replace("{trace_id}", TRACE_ID))
    assert str(tempo.port) in published and tempo.path == "/explore"
    panes = json.loads(parse_qs(tempo.query)["panes"][0])
    (pane,) = panes.values()
    (query,) = pane["queries"]
    assert query["query"] == TRACE_ID
    provisioned = {ds["uid"]: ds["type"] for ds in _load(DATASOURCES)["datasources"]}
    assert provisioned.get(query["datasource"]["uid"]) == "tempo" == query["datasource"]["type"]
    assert provisioned.get(pane["datasource"]) == "tempo"


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_published_ports_are_local_and_distinct(stack: str) -> None:
    ports = [
        str(port)
        for service in _services(STACKS[stack]()).values()
        for port in service.get("ports") or []
    ]
    assert all(port.startswith("127.0.0.1:") for port in ports), ports
    host_ports = [_host_port_of(port) for port in ports]
    assert len(host_ports) == len(set(host_ports)), host_ports


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_services_restart_and_are_probed_with_what_their_image_has(stack: str) -> None:
    services = _services(STACKS[stack]())
    for name, service in services.items():
        assert "restart" in service, f"{name} has no restart policy"
    # Jaeger, Tempo and Grafana are Alpine-based (busybox wget); the agent's image is
    # python:3.11-slim (python, no wget or curl).  The Collector and Oxigraph images
    # have no shell and no HTTP client: they have no probe, and nothing waits for them
    # to be healthy (test_depends_on_targets_exist).
    probes = {
        "jaeger": "wget",
        "tempo": "wget",
        "grafana": "wget",
        "agent": "python",
        RECEIVER_SERVICE: "python",  # the agent's image
    }
    for name, service in services.items():
        test = (service.get("healthcheck") or {}).get("test")
        if name in probes:
            assert test is not None and test[:2] == ["CMD", probes[name]], f"{name}: {test}"
        else:
            assert test is None, f"{name} has a probe its image cannot run: {test}"


def test_collector_mounts_its_config_where_its_command_reads_it() -> None:
    collector = _fresh(COMPOSE)["services"]["otel-collector"]
    (config_arg,) = [a for a in collector["command"] if a.startswith("--config=")]
    mounted = {target: source for kind, source, target in _mounts(collector) if kind == "bind"}
    assert mounted.get(config_arg.removeprefix("--config=")) == "./otel-collector.yaml"


def test_tempo_and_grafana_agree_with_the_collector() -> None:
    tempo = _load(TEMPO)
    protocols = tempo["distributor"]["receivers"]["otlp"]["protocols"]
    assert protocols["grpc"]["endpoint"] == f"0.0.0.0:{BACKENDS['tempo']}"
    assert protocols["http"]["endpoint"] == "0.0.0.0:4318"
    storage = tempo["storage"]["trace"]
    assert storage["backend"] == "local"
    tempo_service = _fresh(COMPOSE)["services"]["tempo"]
    (data,) = [t for kind, _, t in _mounts(tempo_service) if kind == "volume"]
    for path in (storage["wal"]["path"], storage["local"]["path"]):
        assert PurePosixPath(data) in PurePosixPath(path).parents, path
    (datasource,) = _load(DATASOURCES)["datasources"]
    assert datasource["type"] == "tempo"
    assert _host_port(datasource["url"]) == ("tempo", tempo["server"]["http_listen_port"])


# --- agent.Dockerfile ----------------------------------------------------------------


def _dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    joined = re.sub(r"\\\n", " ", text)
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "")
        for line in (raw.strip() for raw in joined.splitlines())
        if line and not line.startswith("#")
    ]


def _pyproject() -> Config:
    with (ROOT / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)


def _requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match is not None, requirement
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


def _agent_requirements() -> dict[str, str]:
    lines = AGENT_REQUIREMENTS.read_text(encoding="utf-8").splitlines()
    return {
        _requirement_name(line): line.strip()
        for line in (raw.split("#", 1)[0] for raw in lines)
        if line.strip()
    }


def test_agent_image_installs_the_package_and_runs_the_example() -> None:
    instructions = _dockerfile_instructions(DOCKERFILE.read_text(encoding="utf-8"))
    assert instructions[0] == ("FROM", "python:3.11-slim")
    copied = {
        source
        for op, args in instructions
        if op == "COPY"
        for source in [a for a in args.split() if not a.startswith("--")][:-1]
    }
    for source in copied:
        assert (ROOT / source).exists(), f"COPY of missing {source}"
    # Every folder that pyproject maps to a package is in the image before `pip install`.
    folders = set(_pyproject()["tool"]["setuptools"]["package-dir"].values())
    assert folders <= copied, folders - copied
    assert {"pyproject.toml", "README.md", "deploy/agent-requirements.txt"} <= copied
    assert ("RUN", "pip install '.[receive,serve]' -r agent-requirements.txt") in instructions
    cmd = json.loads(dict(instructions)["CMD"])
    assert cmd == ["python", "examples/service_app.py", "--host", "0.0.0.0"]
    assert PurePosixPath(cmd[1]).parts[0] in copied


def test_agent_requirements_are_pinned_as_in_the_dev_extra() -> None:
    dev = {_requirement_name(r): r for r in _pyproject()["project"]["optional-dependencies"]["dev"]}
    for name, requirement in _agent_requirements().items():
        assert "==" in requirement, f"{requirement} is not pinned"
        assert dev.get(name) == requirement, f"{requirement} vs the dev extra's {dev.get(name)}"


def _requires_closure(names: set[str]) -> set[str]:
    """``names`` and everything they require (no extras), from installed metadata."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = _requirement_name(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo.extend(r for r in requires if "extra ==" not in r.replace('"', "").replace("'", ""))
    return seen


@cache
def _packages_distributions() -> Mapping[str, list[str]]:
    return metadata.packages_distributions()


def _module_owner(module: str) -> str | None:
    """The installed distribution that holds ``module``'s file."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return None
    origin = Path(spec.origin).resolve()
    top = module.split(".", 1)[0]
    for dist_name in _packages_distributions().get(top, []):
        dist = metadata.distribution(dist_name)
        for file in dist.files or []:
            if Path(str(dist.locate_file(file))).resolve() == origin:
                return _requirement_name(dist_name)
    return None


def test_agent_image_has_what_the_example_imports() -> None:
    """Each module the example imports comes with otel-prov's dependencies or with
    agent-requirements.txt, else the container dies on an ImportError."""
    tree = ast.parse(EXAMPLE.read_text(encoding="utf-8"))
    modules = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    modules |= {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and not node.level
    }
    installed = _requires_closure(
        {*_pyproject()["project"]["dependencies"], *_agent_requirements()}
    )
    missing = []
    for module in sorted(modules):
        top = module.split(".", 1)[0]
        if top in sys.stdlib_module_names or top == "__future__" or top == "otel_prov":
            continue
        owner = _module_owner(module)
        if owner is None or owner not in installed:
            missing.append(f"{module} (from {owner or 'nothing installed'})")
    assert not missing, missing


def test_agent_otel_prov_variables_are_ones_otel_prov_reads() -> None:
    env = _environment(_with_receivers()["services"]["agent"])
    assert {name for name in env if name.startswith("OTEL_PROV_")} <= _known_variables()


# --- Scale-out: docker-compose.receivers.yaml ------------------------------------------


def _flag(command: list[str], flag: str) -> str | None:
    return command[command.index(flag) + 1] if flag in command else None


def receivers_problems(compose: Config, collector: Config) -> list[str]:
    """What keeps ``compose`` (the stack with the override) from running several receivers
    behind the Collector's load-balancing exporter, all writing to the triple store, with
    agents that export OTLP only."""
    problems: list[str] = []
    services = _services(compose)
    dns = collector["exporters"]["load_balancing"]["resolver"]["dns"]
    receiver = services.get(dns["hostname"])
    if receiver is None:
        return [f"the load balancer resolves {dns['hostname']!r}, which is no service"]
    command = [str(part) for part in receiver.get("command") or []]
    if command[:2] != ["otel-prov", "receive"]:
        problems.append(f"{dns['hostname']} runs {command[:2]}, not otel-prov receive")
    if _flag(command, "--grpc") != f"0.0.0.0:{dns.get('port', '4317')}":
        problems.append(
            f"receivers take gRPC on {_flag(command, '--grpc')}, not the resolver's port"
        )
    if int((receiver.get("deploy") or {}).get("replicas", 1)) < 2:
        problems.append("a single receiver: nothing to balance")
    update = _flag(command, "--endpoint-update")
    store_host = _host_port(update)[0] if update else None
    if store_host not in services or store_host not in _depends_on(receiver):
        problems.append(f"receivers write to {update}, not a store they wait for")
    known = _known_variables()
    unknown = {name for name in _environment(receiver) if name.startswith("OTEL_PROV_")} - known
    if unknown:
        problems.append(f"receivers set variables otel-prov does not read: {sorted(unknown)}")
    if not str(receiver.get("stop_grace_period", "")).endswith("s"):
        problems.append("receivers get no stop_grace_period to drain in")
    mounted = {t: s for k, s, t in _mounts(services["otel-collector"]) if k == "bind"}
    if mounted.get("/etc/otelcol-contrib/config.yaml") != f"./{LOADBALANCING.name}":
        problems.append("the Collector does not run the load-balancing configuration")
    if _depends_on(services["otel-collector"]).get(dns["hostname"]) != "service_healthy":
        problems.append("the Collector does not wait for the receivers to be ready")
    agent = _environment(services["agent"])
    if agent.get("OTEL_PROV_PROVENANCE") != "false":
        problems.append("the agent still maps provenance itself (OTEL_PROV_PROVENANCE)")
    if _host_port(agent.get("OTEL_EXPORTER_OTLP_ENDPOINT", ""))[0] != "otel-collector":
        problems.append("the agent does not export OTLP to the Collector")
    return problems


def _known_variables() -> set[str]:
    source = (ROOT / "otel_prov" / "environment_variables.py").read_text(encoding="utf-8")
    return {
        target.id
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id.startswith("OTEL_PROV_")
    }


def test_receivers_replace_in_process_provenance_behind_the_load_balancer() -> None:
    assert receivers_problems(_with_receivers(), _fresh(LOADBALANCING)) == []


def test_the_default_stack_maps_provenance_in_the_agent() -> None:
    compose = _fresh(COMPOSE)
    assert RECEIVER_SERVICE not in _services(compose)
    assert "OTEL_PROV_PROVENANCE" not in _environment(compose["services"]["agent"])


def _single_receiver(c: Config) -> None:
    c["services"][RECEIVER_SERVICE]["deploy"]["replicas"] = 1


def _receiver_on_another_port(c: Config) -> None:
    command = c["services"][RECEIVER_SERVICE]["command"]
    command[command.index("--grpc") + 1] = "0.0.0.0:14317"


def _agent_maps_provenance(c: Config) -> None:
    del c["services"]["agent"]["environment"]["OTEL_PROV_PROVENANCE"]


def _collector_keeps_its_default_config(c: Config) -> None:
    c["services"]["otel-collector"]["volumes"] = [
        "./otel-collector.yaml:/etc/otelcol-contrib/config.yaml:ro"
    ]


def _misspelt_variable(c: Config) -> None:
    c["services"][RECEIVER_SERVICE]["environment"]["OTEL_PROV_RECIEVER_DIR"] = "/tmp"


def _renamed_service(c: Config) -> None:
    c["services"]["agent-prov-exporters"] = c["services"].pop(RECEIVER_SERVICE)


@pytest.mark.parametrize(
    "breakage",
    [
        _single_receiver,
        _receiver_on_another_port,
        _agent_maps_provenance,
        _collector_keeps_its_default_config,
        _misspelt_variable,
        _renamed_service,
    ],
)
def test_receivers_check_catches(breakage: Callable[[Config], None]) -> None:
    compose = _with_receivers()
    breakage(compose)
    assert receivers_problems(compose, _fresh(LOADBALANCING))


def test_merge_follows_compose_rules() -> None:
    base = {
        "services": {
            "a": {
                "volumes": ["./x:/etc/c:ro", "data:/data"],
                "environment": {"A": "1"},
                "command": ["x"],
            }
        }
    }
    override = {
        "services": {
            "a": {"volumes": ["./y:/etc/c:ro"], "environment": {"B": "2"}, "command": ["y"]}
        }
    }
    merged = merge_compose(base, override)["services"]["a"]
    assert merged == {
        "volumes": ["./y:/etc/c:ro", "data:/data"],
        "environment": {"A": "1", "B": "2"},
        "command": ["y"],
    }
