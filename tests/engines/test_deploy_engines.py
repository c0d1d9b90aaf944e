"""Every Collector and Jaeger configuration of ``deploy/``, checked by the real binaries
(``otelcol-prov validate``, ``jaeger validate``) with the environment its Compose stack
gives it, and with the loopback addresses the tests run it on.

``tests/test_deploy.py`` reads the same files as data; this is the engines' own word on
them: an unknown component, a misspelt option or an address that does not parse fails
here, whatever the static checks think.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.engine_servers import DEPLOY, collector_env, resolver, validate
from tests.test_deploy import Config, _environment, _load, _services, merge_compose

pytestmark = pytest.mark.integration


def _compose_env(compose: str, service: str, override: str | None = None) -> dict[str, str]:
    stack = _load(DEPLOY / compose)
    if override is not None:
        stack = merge_compose(stack, _load(DEPLOY / override))
    return _environment(_services(stack)[service])


# Each configuration, the engine that runs it, and the environment Compose gives it.
CONFIGS: dict[str, tuple[str, Callable[[], dict[str, str]]]] = {
    "otel-collector.yaml": (
        "otelcol",
        lambda: _compose_env("docker-compose.yaml", "otel-collector"),
    ),
    "otel-collector-loadbalancing.yaml": (
        "otelcol",
        lambda: _compose_env(
            "docker-compose.yaml", "otel-collector", "docker-compose.receivers.yaml"
        ),
    ),
    "otel-collector-tenants.yaml": (
        "otelcol",
        lambda: _compose_env("docker-compose.tenants.yaml", "otel-collector"),
    ),
    "jaeger.yaml": ("jaeger", lambda: _compose_env("docker-compose.yaml", "jaeger")),
}


def _is_engine_config(path: Path) -> bool:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return isinstance(data, dict) and {"receivers", "exporters", "service"} <= data.keys()


def test_every_engine_configuration_of_deploy_is_checked() -> None:
    found = {path.name for path in DEPLOY.glob("*.yaml") if _is_engine_config(path)}
    assert found == set(CONFIGS)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_the_engine_accepts_the_file_as_compose_runs_it(name: str) -> None:
    engine, environment = CONFIGS[name]
    checked = validate(engine, DEPLOY / name, environment())
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_the_engine_accepts_the_file_on_loopback_addresses(name: str) -> None:
    engine, _ = CONFIGS[name]
    env = collector_env({"PROV_RECEIVERS_RESOLVER": resolver("127.0.0.1:4327", "127.0.0.1:4337")})
    checked = validate(engine, DEPLOY / name, env)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _misspelt_option(config: Config) -> str:
    config["processors"]["batch"]["send_batch_sise"] = 512
    return "send_batch_sise"


def _unknown_routing_key(config: Config) -> str:
    config["exporters"]["load_balancing"]["routing_key"] = "teamID"
    return "teamID"


def _misspelt_query_option(config: Config) -> str:
    config["extensions"]["jaeger_query"]["max_clock_skew_ajust"] = "1s"
    return "max_clock_skew_ajust"


@pytest.mark.parametrize(
    ("engine", "name", "breakage"),
    [
        ("otelcol", "otel-collector.yaml", _misspelt_option),
        ("otelcol", "otel-collector-loadbalancing.yaml", _unknown_routing_key),
        ("jaeger", "jaeger.yaml", _misspelt_query_option),
    ],
)
def test_the_engine_refuses_a_broken_copy(
    tmp_path: Path, engine: str, name: str, breakage: Callable[[Config], str]
) -> None:
    """The check can fail, and says where."""
    config = _load(DEPLOY / name)
    said = breakage(config)
    broken = tmp_path / name
    broken.write_text(yaml.safe_dump(config), encoding="utf-8")
    env = collector_env({"PROV_RECEIVERS_RESOLVER": resolver("127.0.0.1:4327")})
    checked = validate(engine, broken, env)
    assert checked.returncode != 0
    assert said in checked.stdout + checked.stderr
