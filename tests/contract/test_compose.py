"""Static checks that docker-compose.yml only names processes, modules, settings and services that exist,
and that the monitoring it provisions (infra/prometheus, infra/grafana) queries metrics the code defines.

Docker cannot run here, so these tests are what keeps the production compose file honest.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from pydantic import AliasChoices

from launcher.instances import instance_name

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = "infra/Dockerfile"
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]

# Every service with a consumer entrypoint gets a container, and no container names a service that
# does not exist; a Celery worker joins for every service with tasks.
CONSUMER_SERVICES = tuple(sorted(p.parent.name for p in (ROOT / "services").glob("*/consumer.py")))
WORKERS = tuple(
    sorted(f"{p.parent.name.replace('_', '-')}-worker" for p in (ROOT / "services").glob("*/tasks.py"))
)
EXPECTED_NPCWORLD = {
    "migrate", "relay", "gateway", *WORKERS,
    *(instance_name(svc, 1).replace("_", "-") for svc in CONSUMER_SERVICES),  # gateway: gateway-projection
}
CONNECTION_VARIABLES = (
    "DATABASE_URL", "KAFKA_BOOTSTRAP_SERVERS", "CELERY_BROKER_URL",
    "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SERVICE_NAME", "HEALTH_PORT",
)


def _is_npcworld(spec: dict[str, Any]) -> bool:
    build = spec.get("build")
    return isinstance(build, dict) and build.get("dockerfile") == DOCKERFILE


NPCWORLD = sorted(name for name, spec in SERVICES.items() if _is_npcworld(spec))
LONG_RUNNING = [name for name in NPCWORLD if SERVICES[name].get("restart") != "no"]


def _command(name: str) -> list[str]:
    command = SERVICES[name]["command"]
    return shlex.split(command) if isinstance(command, str) else [str(part) for part in command]


def _by_program(program: str) -> list[str]:
    return [name for name in NPCWORLD if _command(name)[0] == program]


def _environment(name: str) -> dict[str, str]:
    env = SERVICES[name].get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {key: str(value) for key, value in env.items()}


def _services_package(name: str) -> str | None:
    """``services.<svc>`` named anywhere in the container's command, if any."""
    match = re.search(r"\bservices\.(\w+)", " ".join(_command(name)))
    return match.group(1) if match else None


def _settings_class(name: str) -> type[Any]:
    svc = _services_package(name)
    if svc is None:  # npcworld CLI processes (relay, migrate) read only the shared settings
        return importlib.import_module("npcworld.settings").CommonSettings  # type: ignore[no-any-return]
    return importlib.import_module(f"services.{svc}.settings").Settings  # type: ignore[no-any-return]


def _env_names(settings_cls: type[Any]) -> set[str]:
    """The variable names pydantic-settings reads for each field (aliases win over prefix + field name)."""
    prefix = settings_cls.model_config.get("env_prefix", "")
    names: set[str] = set()
    for field_name, field in settings_cls.model_fields.items():
        alias = field.validation_alias
        if isinstance(alias, str):
            names.add(alias.upper())
        elif isinstance(alias, AliasChoices):
            names.update(choice.upper() for choice in alias.choices if isinstance(choice, str))
        else:
            names.add(f"{prefix}{field_name}".upper())
    return names


def _dockerfile_lines() -> list[str]:
    text = (ROOT / DOCKERFILE).read_text().replace("\\\n", " ")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _copied_paths() -> set[str]:
    copied: set[str] = set()
    for line in _dockerfile_lines():
        parts = line.split()
        if parts[0].upper() in ("COPY", "ADD"):
            sources = [part for part in parts[1:-1] if not part.startswith("--")]
            copied.update(source.rstrip("/").removeprefix("./") for source in sources)
    return copied


# --- the set of containers ---------------------------------------------------------------------------


def test_compose_runs_one_container_per_npcworld_process() -> None:
    assert set(NPCWORLD) == EXPECTED_NPCWORLD
    consumer_modules = {_command(name)[2] for name in _by_program("python")}
    assert consumer_modules == {f"services.{svc}.consumer" for svc in CONSUMER_SERVICES}


def test_memory_and_planning_run_as_replicas_that_publish_no_host_port_and_keep_no_fixed_identity() -> None:
    for name in ("memory", "planning"):
        spec = SERVICES[name]
        assert spec.get("deploy", {}).get("replicas", 1) >= 2, name
        # Replicas cannot share a host port, a container name or a static group-member id (the broker
        # would fence one of two members sharing it).
        assert "ports" not in spec and "container_name" not in spec, name
        assert "KAFKA_GROUP_INSTANCE_ID" not in _environment(name), name
    for name in NPCWORLD:
        if "MEMORY_API_URL" in _environment(name):
            assert _environment(name)["MEMORY_API_URL"] == "http://memory:8101", name


# --- every command names something that exists ---------------------------------------------------------


@pytest.mark.parametrize("container", _by_program("python"))
def test_python_module_command_names_an_importable_module(container: str) -> None:
    command = _command(container)
    assert command[:2] == ["python", "-m"], command
    assert importlib.util.find_spec(command[2]) is not None, f"{container}: no module {command[2]}"


@pytest.mark.parametrize("container", _by_program("python"))
def test_python_module_command_does_something_when_run_as_main(container: str) -> None:
    spec = importlib.util.find_spec(_command(container)[2])
    assert spec is not None and spec.origin is not None
    if spec.submodule_search_locations:  # a package runs its __main__ module
        assert (Path(spec.origin).parent / "__main__.py").exists()
        return
    tree = ast.parse(Path(spec.origin).read_text())
    guards = [node for node in tree.body if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)]
    assert guards, f"{container}: {spec.origin} has no `if __name__ == \"__main__\"` block"


@pytest.mark.parametrize("container", _by_program("uvicorn"))
def test_uvicorn_command_names_an_app_factory_defined_in_its_module(container: str) -> None:
    command = _command(container)
    module_name, _, attr = command[1].partition(":")
    spec = importlib.util.find_spec(module_name)
    assert spec is not None and spec.origin is not None, f"{container}: no module {module_name}"
    tree = ast.parse(Path(spec.origin).read_text())
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    defined |= {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                if isinstance(t, ast.Name)}
    assert attr in defined, f"{container}: {module_name} defines no top-level {attr}"
    assert "--factory" in command, f"{container}: {attr} is a factory, so uvicorn needs --factory"


@pytest.mark.parametrize("container", _by_program("npcworld"))
def test_npcworld_command_names_a_registered_cli_subcommand(container: str) -> None:
    main = importlib.import_module("launcher.cli").main
    subcommand = _command(container)[1]
    assert subcommand in main.commands, f"{container}: `npcworld {subcommand}` is not registered"


def test_npcworld_executable_runs_the_cli_group() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    module_name, _, attr = pyproject["project"]["scripts"]["npcworld"].partition(":")
    assert module_name == "launcher.cli"
    if attr == "main":
        return
    spec = importlib.util.find_spec(module_name)
    assert spec is not None and spec.origin is not None
    functions = {node.name: node for node in ast.parse(Path(spec.origin).read_text()).body
                 if isinstance(node, ast.FunctionDef)}
    assert attr in functions, f"launcher.cli defines no {attr}"
    calls = {ast.unparse(node.func) for node in ast.walk(functions[attr]) if isinstance(node, ast.Call)}
    assert "main" in calls, f"launcher.cli:{attr} never calls the `main` group"


def test_celery_commands_name_existing_app_modules() -> None:
    for container in _by_program("celery"):
        command = _command(container)
        app_module = command[command.index("-A") + 1]
        assert importlib.util.find_spec(app_module) is not None, f"{container}: no module {app_module}"
        assert "worker" in command


# --- environment matches the settings classes ---------------------------------------------------------


@pytest.mark.parametrize("svc", sorted({svc for name in NPCWORLD if (svc := _services_package(name))}))
def test_service_settings_class_extends_common_settings(svc: str) -> None:
    common = importlib.import_module("npcworld.settings").CommonSettings
    settings_cls = importlib.import_module(f"services.{svc}.settings").Settings
    assert issubclass(settings_cls, common)


@pytest.mark.parametrize("container", NPCWORLD)
def test_container_environment_names_only_settings_fields(container: str) -> None:
    settings_cls = _settings_class(container)
    # OTEL_* belong to the OpenTelemetry SDK, which reads them itself.
    unknown = {n for n in _environment(container) if not n.startswith("OTEL_")} - _env_names(settings_cls)
    where = f"{settings_cls.__module__}.{settings_cls.__qualname__}"
    assert not unknown, f"{container}: {sorted(unknown)} are not fields of {where}"


@pytest.mark.parametrize("container", NPCWORLD)
def test_container_gets_the_production_connection_variables(container: str) -> None:
    missing = [name for name in CONNECTION_VARIABLES if not _environment(container).get(name)]
    assert not missing, f"{container} lacks {missing}"


def test_each_container_reports_telemetry_under_its_own_service_name() -> None:
    names = [_environment(name)["OTEL_SERVICE_NAME"] for name in NPCWORLD]
    assert len(set(names)) == len(names)


def test_openai_credentials_come_from_the_host_environment() -> None:
    given = [name for name in NPCWORLD if "OPENAI_API_KEY" in _environment(name)]
    assert given
    for name in given:
        assert _environment(name)["OPENAI_API_KEY"] == "${OPENAI_API_KEY:-}", name


@pytest.mark.parametrize("container", NPCWORLD)
def test_connection_variables_point_at_services_in_the_compose_file(container: str) -> None:
    env = _environment(container)
    db = urlsplit(env["DATABASE_URL"])
    pg_env = SERVICES[db.hostname or ""]["environment"]
    assert (db.username, db.password, db.path.lstrip("/"), db.port) == (
        pg_env["POSTGRES_USER"], pg_env["POSTGRES_PASSWORD"], pg_env["POSTGRES_DB"], 5432
    )
    for bootstrap in env["KAFKA_BOOTSTRAP_SERVERS"].split(","):
        host = bootstrap.split(":")[0]
        assert f"//{bootstrap}" in SERVICES[host]["environment"]["KAFKA_ADVERTISED_LISTENERS"]
    assert urlsplit(env["CELERY_BROKER_URL"]).hostname in SERVICES
    otlp = urlsplit(env["OTEL_EXPORTER_OTLP_ENDPOINT"])
    assert otlp.hostname in SERVICES
    assert f":{otlp.port}" in _collector_config()["receivers"]["otlp"]["protocols"]["http"]["endpoint"]


# --- the image ----------------------------------------------------------------------------------------


def test_dockerfile_builds_from_python_311_slim_and_installs_the_project() -> None:
    lines = _dockerfile_lines()
    assert lines[0].split()[:2] == ["FROM", "python:3.11-slim"]
    assert any(line.startswith("RUN") and re.search(r"pip install (\S+ )*\.(\s|$)", line) for line in lines)


def test_dockerfile_copies_everything_the_commands_and_build_need() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    needed = {"pyproject.toml", "libs", "services", "infra", pyproject["project"]["readme"]}
    needed |= {path.split("/")[0] for path in pyproject["tool"]["setuptools"]["package-dir"].values()}
    assert needed <= _copied_paths(), f"not copied: {sorted(needed - _copied_paths())}"


@pytest.mark.parametrize("container", NPCWORLD)
def test_npcworld_container_builds_from_the_repository_root(container: str) -> None:
    assert SERVICES[container]["build"]["context"] == "."
    assert (ROOT / DOCKERFILE).is_file()


# --- start order and health ---------------------------------------------------------------------------


def _depends_on(name: str) -> dict[str, dict[str, Any]]:
    deps = SERVICES[name].get("depends_on") or {}
    return {dep: {"condition": "service_started"} for dep in deps} if isinstance(deps, list) else deps


def _has_healthcheck(name: str) -> bool:
    check: dict[str, Any] = SERVICES[name].get("healthcheck") or {}
    return bool(check) and not check.get("disable", False)


@pytest.mark.parametrize("container", sorted(SERVICES))
def test_every_depends_on_target_exists_and_can_meet_its_condition(container: str) -> None:
    for target, spec in _depends_on(container).items():
        assert target in SERVICES, f"{container} depends on unknown service {target}"
        condition = spec.get("condition", "service_started")
        if condition == "service_healthy":
            assert _has_healthcheck(target), f"{container} waits for {target} to be healthy; it has no check"
        elif condition == "service_completed_successfully":
            assert SERVICES[target].get("restart") == "no", f"{target} must be one-shot for {container}"
        else:
            assert condition == "service_started", condition


@pytest.mark.parametrize("container", LONG_RUNNING)
def test_long_running_container_waits_for_migrations(container: str) -> None:
    assert _depends_on(container)["migrate"]["condition"] == "service_completed_successfully"


def test_migrate_is_a_one_shot_npcworld_migrate() -> None:
    assert _command("migrate") == ["npcworld", "migrate"]
    assert SERVICES["migrate"]["restart"] == "no"


@pytest.mark.parametrize("container", LONG_RUNNING)
def test_long_running_container_probes_its_own_health(container: str) -> None:
    assert _has_healthcheck(container), f"{container} has no healthcheck"
    probe = " ".join(SERVICES[container]["healthcheck"]["test"])
    if _command(container)[0] == "celery":
        assert "inspect ping" in probe
        return
    command = _command(container)
    # uvicorn serves the gateway's probes on its API port; every other process on HEALTH_PORT.
    has_port = "--port" in command
    port = command[command.index("--port") + 1] if has_port else _environment(container)["HEALTH_PORT"]
    assert f":{port}/healthz" in probe, f"{container} probe does not hit /healthz on port {port}"


def test_postgres_and_kafka_report_health_before_anything_uses_them() -> None:
    assert "pg_isready" in " ".join(SERVICES["postgres"]["healthcheck"]["test"])
    assert _has_healthcheck("kafka") and _has_healthcheck("redis")


# --- infrastructure -----------------------------------------------------------------------------------


def test_kafka_runs_in_kraft_mode_without_zookeeper() -> None:
    assert not [n for n, s in SERVICES.items() if "zookeeper" in f"{n} {s.get('image', '')}".lower()]
    kafka = SERVICES["kafka"]
    assert kafka["image"].startswith("apache/kafka:")
    env = {key: str(value) for key, value in kafka["environment"].items()}
    assert {"broker", "controller"} <= set(env["KAFKA_PROCESS_ROLES"].split(","))
    assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"].startswith(f"{env['KAFKA_NODE_ID']}@kafka:")
    assert "KAFKA_ZOOKEEPER_CONNECT" not in env
    assert "//kafka:9092" in env["KAFKA_ADVERTISED_LISTENERS"]


def test_postgres_image_ships_pgvector() -> None:
    assert SERVICES["postgres"]["image"] == "pgvector/pgvector:pg17"


def _collector_config() -> dict[str, Any]:
    mounts = [v.split(":")[0] for v in SERVICES["otel-collector"]["volumes"] if v.endswith(".yaml:ro")]
    assert len(mounts) == 1
    return yaml.safe_load((ROOT / mounts[0]).read_text())  # type: ignore[no-any-return]


def test_otel_collector_pipes_otlp_through_batch_to_debug_and_prometheus() -> None:
    config = _collector_config()
    assert {"grpc", "http"} <= set(config["receivers"]["otlp"]["protocols"])
    pipelines = config["service"]["pipelines"]
    for pipeline in pipelines.values():
        assert set(pipeline["receivers"]) <= set(config["receivers"])
        assert "batch" in pipeline["processors"] and set(pipeline["processors"]) <= set(config["processors"])
        assert set(pipeline["exporters"]) <= set(config["exporters"])
    assert {"debug", "prometheus"} <= set(pipelines["metrics"]["exporters"])
    assert SERVICES["otel-collector"]["image"].startswith("otel/opentelemetry-collector-contrib")


# --- monitoring: Prometheus, alert rules, Grafana -------------------------------------------------------
#
# The npcworld processes serve their metrics themselves (PrometheusMetricReader on HEALTH_PORT/metrics), so
# the series names are what opentelemetry-exporter-prometheus makes of the instruments in
# libs/npcworld/telemetry/instruments.py. The conversion (docs/deployment.md#monitoring): every character
# outside [a-zA-Z0-9_:] becomes `_`; the unit is appended (`s` -> `_seconds`; annotations like `{event}`
# add nothing); counters get `_total`; histograms are `_bucket`, `_sum` and `_count`; gauges nothing more.

INSTRUMENTS_PY = ROOT / "libs/npcworld/telemetry/instruments.py"
PROMETHEUS_DIR = ROOT / "infra/prometheus"
GRAFANA_DIR = ROOT / "infra/grafana"
UNIT_SUFFIXES = {"s": "seconds", "ms": "milliseconds", "By": "bytes", "1": "ratio"}
# Labels the code attaches to its data points, plus those Prometheus adds (job, instance, le) and the
# `service` label set by prometheus.yml's relabelling.
KNOWN_LABELS = {
    "consumer", "event_type", "topic", "partition", "kind", "prompt_kind", "provider", "outcome", "reason",
    "world_id", "npc_id", "mode", "job", "instance", "le", "service",
}
PROMQL_AGGREGATIONS = re.compile(r"\b(sum|max|min|avg|count|topk|bottomk|quantile|stddev|stdvar)\s*(by|\()")


def _instrument_definitions() -> dict[str, tuple[str, str]]:
    """Name -> (kind, unit) of every ``meter.create_*`` call in instruments.py."""
    found: dict[str, tuple[str, str]] = {}
    for node in ast.walk(ast.parse(INSTRUMENTS_PY.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr.startswith("create_"):
            name = node.args[0]
            assert isinstance(name, ast.Constant) and isinstance(name.value, str), ast.unparse(node)
            unit = next((k.value for k in node.keywords if k.arg == "unit"), ast.Constant(""))
            assert isinstance(unit, ast.Constant), ast.unparse(node)
            found[name.value] = (node.func.attr.removeprefix("create_"), str(unit.value))
    assert found, "no instruments found in instruments.py"
    return found


def _prometheus_series(name: str, kind: str, unit: str) -> set[str]:
    base = re.sub(r"[^a-zA-Z0-9_:]", "_", name)
    if unit and not (unit.startswith("{") and unit.endswith("}")):
        assert unit in UNIT_SUFFIXES, f"{name}: unit {unit!r} has no Prometheus suffix here; add it"
        base += "_" + UNIT_SUFFIXES[unit]
    if kind == "counter":
        return {base + "_total"}
    if kind == "histogram":
        return {base + suffix for suffix in ("_bucket", "_sum", "_count")}
    assert kind in ("observable_gauge", "gauge", "up_down_counter", "observable_up_down_counter"), kind
    return {base}


METRIC_SERIES: set[str] = {
    series for name, (kind, unit) in _instrument_definitions().items()
    for series in _prometheus_series(name, kind, unit)
}


def test_documented_name_conversion_is_what_the_exporter_serves() -> None:
    """Every instrument, recorded once and served by the real Prometheus reader, has the derived names."""
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from opentelemetry.metrics import Counter, Histogram, UpDownCounter
    from opentelemetry.sdk.metrics import MeterProvider
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    from npcworld.llm.breaker import CircuitBreaker
    from npcworld.telemetry.instruments import Instruments

    registry = CollectorRegistry()
    provider = MeterProvider(metric_readers=[PrometheusMetricReader(registry=registry)])
    try:
        measures = Instruments(provider.get_meter("npcworld"))
        for value in vars(measures).values():
            if isinstance(value, Counter | UpDownCounter):
                value.add(1)
            elif isinstance(value, Histogram):
                value.record(0.1)
        # Observable gauges that report only what was registered with them or set.
        measures.lag[("planning", "npcworld.world.v1", 0)] = 3
        measures.clocks_running = 1
        breaker = CircuitBreaker("openai")
        measures.breakers.add(breaker)
        served = {sample.name for family in text_string_to_metric_families(generate_latest(registry).decode())
                  for sample in family.samples} - {"target_info"}
    finally:
        provider.shutdown()
    assert served == METRIC_SERIES


def _prometheus_config() -> dict[str, Any]:
    return yaml.safe_load((PROMETHEUS_DIR / "prometheus.yml").read_text())  # type: ignore[no-any-return]


def _alert_rules() -> list[dict[str, Any]]:
    config = _prometheus_config()
    rules: list[dict[str, Any]] = []
    for rule_file in config["rule_files"]:
        groups = yaml.safe_load((PROMETHEUS_DIR / rule_file).read_text())["groups"]
        rules += [rule for group in groups for rule in group["rules"]]
    return rules


def _scraped_services() -> set[str]:
    (job,) = [job for job in _prometheus_config()["scrape_configs"] if job["job_name"] == "npcworld"]
    return {name for sd in job["dns_sd_configs"] for name in sd["names"]}


def _mounts(service: str) -> dict[str, Path]:
    """Container path -> host path of the service's bind mounts (named volumes left out)."""
    mounts: dict[str, Path] = {}
    for volume in SERVICES[service].get("volumes") or []:
        source, target = volume.split(":")[:2]
        if source.startswith("."):
            mounts[target] = ROOT / source
    return mounts


def _host_path(service: str, container_path: str) -> Path:
    for target, source in sorted(_mounts(service).items(), key=lambda item: -len(item[0])):
        if container_path == target or container_path.startswith(target.rstrip("/") + "/"):
            return source / container_path[len(target):].lstrip("/")
    raise AssertionError(f"{service}: nothing mounted at {container_path}")


def _metric_names(expr: str) -> set[str]:
    return set(re.findall(r"\bnpcworld_[a-zA-Z0-9_:]*", expr))


def _label_names(expr: str) -> set[str]:
    names = {name.strip() for group in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr)
             for name in group.split(",") if name.strip()}
    names |= {m for selector in re.findall(r"\{([^}]*)\}", expr)
              for m in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", selector)}
    return names


def _aggregated_labels(expr: str) -> set[str] | None:
    """Labels an expression's result can carry: those of its ``by`` clauses when it aggregates, else None."""
    if not PROMQL_AGGREGATIONS.search(expr):
        return None
    return {name.strip() for group in re.findall(r"\bby\s*\(([^)]*)\)", expr)
            for name in group.split(",") if name.strip()}


@pytest.mark.parametrize("service", ["prometheus", "grafana"])
def test_monitoring_services_mount_files_that_exist_read_only(service: str) -> None:
    assert _mounts(service), f"{service} mounts nothing from the repository"
    for volume in SERVICES[service]["volumes"]:
        if volume.startswith("."):
            assert volume.endswith(":ro"), f"{service}: {volume} should be read-only"
    for target, source in _mounts(service).items():
        assert source.exists(), f"{service}: {source.relative_to(ROOT)} (mounted at {target}) does not exist"


def test_prometheus_loads_the_mounted_config_and_publishes_its_port() -> None:
    spec = SERVICES["prometheus"]
    assert spec["image"].startswith("prom/prometheus:")
    config_flag = next(arg for arg in spec["command"] if arg.startswith("--config.file="))
    assert _host_path("prometheus", config_flag.split("=", 1)[1]) == PROMETHEUS_DIR / "prometheus.yml"
    assert any(str(port).endswith(":9090") for port in spec["ports"])


def test_prometheus_scrapes_every_process_that_serves_metrics() -> None:
    jobs = {job["job_name"]: job for job in _prometheus_config()["scrape_configs"]}
    npcworld = jobs["npcworld"]
    assert npcworld.get("metrics_path", "/metrics") == "/metrics"
    names = _scraped_services()
    ports = {sd["port"] for sd in npcworld["dns_sd_configs"]}
    # Every long-running process but the gateway (uvicorn) and Celery workers serves /metrics on HEALTH_PORT.
    serving = {name for name in LONG_RUNNING if _command(name)[0] not in ("uvicorn", "celery")}
    assert names == serving
    assert ports == {int(_environment(name)["HEALTH_PORT"]) for name in serving}
    targets = [target for job in jobs.values() for static in job.get("static_configs", [])
               for target in static["targets"]]
    for target in targets:
        host = target.rsplit(":", 1)[0]
        assert host == "localhost" or host in SERVICES, target
    assert "otel-collector:8889" in targets
    assert any(port.endswith(":8889") for port in SERVICES["otel-collector"]["ports"])


def test_an_alert_watches_for_each_scraped_service_having_no_container() -> None:
    (rule,) = [rule for rule in _alert_rules() if rule["alert"] == "NpcworldServiceMissing"]
    watched = set(re.findall(r'absent\(up\{job="npcworld", service="([\w-]+)"\}\)', rule["expr"]))
    assert watched == _scraped_services()


def test_prometheus_rule_files_exist_and_every_alert_is_complete() -> None:
    for rule_file in _prometheus_config()["rule_files"]:
        assert (PROMETHEUS_DIR / rule_file).is_file(), rule_file
    rules = _alert_rules()
    assert rules
    names = [rule["alert"] for rule in rules]
    assert len(set(names)) == len(names), "duplicate alert names"
    for rule in rules:
        where = rule["alert"]
        assert rule["expr"].strip() and rule["for"], where
        assert rule["labels"]["severity"] in ("critical", "warning", "info"), where
        assert rule["annotations"]["summary"].strip() and rule["annotations"]["description"].strip(), where


def test_alerts_cover_the_operational_signals() -> None:
    used = set().union(*(_metric_names(rule["expr"]) for rule in _alert_rules()))
    for metric in ("npcworld_consumer_lag", "npcworld_events_dead_lettered_total",
                   "npcworld_outbox_oldest_unpublished_age_seconds", "npcworld_llm_breaker_open",
                   "npcworld_world_steps_total", "npcworld_events_retries_total"):
        assert metric in used, f"no alert on {metric}"


def test_alerts_name_only_metrics_and_labels_the_code_produces() -> None:
    for rule in _alert_rules():
        expr, where = rule["expr"], rule["alert"]
        assert _metric_names(expr) or re.search(r"\bup\b", expr), f"{where} uses no metric"
        assert _metric_names(expr) <= METRIC_SERIES, f"{where}: {_metric_names(expr) - METRIC_SERIES} unknown"
        assert _label_names(expr) <= KNOWN_LABELS, f"{where}: labels {_label_names(expr) - KNOWN_LABELS}"
        text = " ".join(rule["annotations"].values())
        referenced = set(re.findall(r"\$labels\.(\w+)", text))
        available = _aggregated_labels(expr)
        assert referenced <= (KNOWN_LABELS if available is None else available), f"{where}: {referenced}"


def _dashboards() -> dict[str, dict[str, Any]]:
    provisioning = yaml.safe_load((GRAFANA_DIR / "provisioning/dashboards/npcworld.yml").read_text())
    found: dict[str, dict[str, Any]] = {}
    for provider in provisioning["providers"]:
        folder = _host_path("grafana", provider["options"]["path"])
        found |= {path.name: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))}
    assert found, "the dashboard provider's folder holds no dashboard"
    return found


def _datasource_uid() -> str:
    provisioning = yaml.safe_load((GRAFANA_DIR / "provisioning/datasources/prometheus.yml").read_text())
    (source,) = provisioning["datasources"]
    assert source["type"] == "prometheus"
    host = urlsplit(source["url"])
    assert host.hostname == "prometheus" and host.port == 9090
    return str(source["uid"])


def test_grafana_provisions_from_the_mounted_folder_with_a_required_password() -> None:
    spec = SERVICES["grafana"]
    assert spec["image"].startswith("grafana/grafana:")
    assert _host_path("grafana", "/etc/grafana/provisioning") == GRAFANA_DIR / "provisioning"
    env = _environment("grafana")
    required = re.fullmatch(r"\$\{[A-Z_]+:\?.+\}", env["GF_SECURITY_ADMIN_PASSWORD"])
    assert required, "the admin password must be a required variable"
    assert env["GF_AUTH_ANONYMOUS_ENABLED"] == "false"
    assert any(str(port).endswith(":3000") for port in spec["ports"])


def test_dashboard_panels_query_the_provisioned_datasource_for_known_metrics() -> None:
    uid = _datasource_uid()
    used: set[str] = set()
    for name, dashboard in _dashboards().items():
        assert isinstance(dashboard["schemaVersion"], int) and dashboard["uid"] and dashboard["title"], name
        panels = dashboard["panels"]
        assert panels, name
        ids = [panel["id"] for panel in panels]
        assert len(set(ids)) == len(ids), f"{name}: duplicate panel ids"
        for panel in panels:
            where = f"{name}: {panel['title']}"
            assert {"x", "y", "w", "h"} <= set(panel["gridPos"]), where
            if panel["type"] == "row":
                assert not panel.get("targets"), where
                continue
            assert panel["datasource"]["uid"] == uid, where
            assert panel["targets"], where
            for target in panel["targets"]:
                expr = target["expr"]
                assert target.get("datasource", {"uid": uid})["uid"] == uid, where
                assert _metric_names(expr) or re.search(r"\bup\b", expr), f"{where} uses no metric"
                assert _metric_names(expr) <= METRIC_SERIES, f"{where}: {_metric_names(expr) - METRIC_SERIES}"
                unknown = _label_names(expr) - KNOWN_LABELS
                assert not unknown, f"{where}: labels {unknown}"
                legend = set(re.findall(r"\{\{\s*(\w+)\s*\}\}", target.get("legendFormat", "")))
                available = _aggregated_labels(expr)
                assert legend <= (KNOWN_LABELS if available is None else available), f"{where}: {legend}"
            used |= set().union(*(_metric_names(t["expr"]) for t in panel["targets"]))
    # Everything the code measures is on a dashboard (histograms through their buckets).
    expected = {s for s in METRIC_SERIES if not s.endswith(("_sum", "_count"))}
    assert expected <= used, f"not on any dashboard: {sorted(expected - used)}"


# promtool (apt-get install prometheus) validates the config and evaluates each alert against synthetic
# series (`make test` installs it when missing).
PROMTOOL = shutil.which("promtool")
_NO_PROMTOOL = "promtool is missing: `make test` installs it (Debian's prometheus package) when run as root"
WORLD_TOPIC = "npcworld.world.v1"
LAG = f'npcworld_consumer_lag{{consumer="planning",topic="{WORLD_TOPIC}",partition="0"}}'
DEAD = f'npcworld_events_dead_lettered_total{{consumer="memory",topic="{WORLD_TOPIC}"}}'
DEAD_LABELS = {"consumer": "memory", "topic": WORLD_TOPIC}
RETRIES = 'npcworld_events_retries_total{consumer="dialogue",kind="handler"}'
AGE = "npcworld_outbox_oldest_unpublished_age_seconds"
UP = 'up{job="npcworld",service="planning",instance="10.0.0.5:8080"}'
CLOCKS, STEPS = "npcworld_world_clocks_running", 'npcworld_world_steps_total{mode="realtime"}'
OPEN = 'npcworld_llm_breaker_open{provider="openai",service="planning"}'
OPENED = 'npcworld_llm_breaker_opened_total{provider="openai"}'
OFFLINE = 'npcworld_llm_fallbacks_total{prompt_kind="plan_day",reason="outage_fallback"}'
SCRAPED = sorted(_scraped_services())
# (alert, input series, evaluation time, labels of the alerts expected to fire: besides alertname, severity)
ALERT_CASES: list[tuple[str, list[tuple[str, str]], str, list[dict[str, str]]]] = [
    ("NpcworldConsumerLagGrowing", [(LAG, "0+100x40")], "30m", [{"consumer": "planning"}]),
    ("NpcworldConsumerLagGrowing", [(LAG, "5000x40")], "30m", []),  # high but not growing
    ("NpcworldConsumerLagCritical", [(LAG, "25000x40")], "30m", [{"consumer": "planning"}]),
    ("NpcworldConsumerLagCritical", [(LAG, "0+100x40")], "30m", []),
    # The first dead letter since the process started (the series appears at 10m), then a later one.
    ("NpcworldDeadLettersIncreasing", [(DEAD, "_x9 1x30")], "12m", [DEAD_LABELS]),
    ("NpcworldDeadLettersIncreasing", [(DEAD, "1x20 2x20")], "25m", [DEAD_LABELS]),
    ("NpcworldDeadLettersIncreasing", [(DEAD, "1x40")], "35m", []),
    ("NpcworldHandlerRetries", [(RETRIES, "0+12x30")], "20m", [{"consumer": "dialogue", "kind": "handler"}]),
    ("NpcworldHandlerRetries", [(RETRIES, "0+1x30")], "20m", []),
    ("NpcworldOutboxBacklogOld", [(AGE, "0+30x30")], "10m", [{}]),
    ("NpcworldOutboxBacklogOld", [(AGE, "0x30")], "20m", []),
    ("NpcworldOutboxBacklogCritical", [(AGE, "0+30x30")], "10m", []),
    ("NpcworldOutboxBacklogCritical", [(AGE, "0+30x30")], "28m", [{}]),
    ("NpcworldProcessDown", [(UP, "1x5 0x10")], "10m",
     [{"job": "npcworld", "service": "planning", "instance": "10.0.0.5:8080"}]),
    ("NpcworldServiceMissing", [(f'up{{job="npcworld",service="{name}"}}', "1x20") for name in SCRAPED
                                if name != "planning"], "10m", [{"job": "npcworld", "service": "planning"}]),
    ("NpcworldServiceMissing", [(f'up{{job="npcworld",service="{name}"}}', "1x20") for name in SCRAPED],
     "10m", []),
    ("NpcworldWorldClockStalled", [(CLOCKS, "2x40"), (STEPS, "0+6x10 60x30")], "30m", [{}]),
    ("NpcworldWorldClockStalled", [(CLOCKS, "1x40")], "30m", [{}]),  # never stepped since the process started
    ("NpcworldWorldClockStalled", [(CLOCKS, "2x40"), (STEPS, "0+6x40")], "30m", []),
    ("NpcworldWorldClockStalled", [(CLOCKS, "0x40"), (STEPS, "60x40")], "30m", []),  # every clock paused
    ("NpcworldLlmBreakerOpen", [(OPEN, "0x5 1x20")], "15m", [{"provider": "openai"}]),
    ("NpcworldLlmBreakerOpen", [(OPEN, "0x5 1x2 0x20")], "15m", []),  # a short outage
    ("NpcworldLlmBreakerFlapping", [(OPENED, "0+1x30")], "20m", [{"provider": "openai"}]),
    ("NpcworldLlmFallbacks", [(OFFLINE, "0+5x40")], "30m",
     [{"prompt_kind": "plan_day", "reason": "outage_fallback"}]),
]


def test_promtool_accepts_the_config_and_rules() -> None:
    assert PROMTOOL is not None, _NO_PROMTOOL
    result = subprocess.run([PROMTOOL, "check", "config", str(PROMETHEUS_DIR / "prometheus.yml")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_fires_each_alert_on_synthetic_series(tmp_path: Path) -> None:
    assert PROMTOOL is not None, _NO_PROMTOOL
    rules = _alert_rules()
    assert {case[0] for case in ALERT_CASES if case[3]} == {rule["alert"] for rule in rules}, \
        "every alert needs a case in ALERT_CASES where it fires"
    by_name = {rule["alert"]: rule for rule in rules}
    tests = []
    for alert, series, at, expected in ALERT_CASES:
        severity = by_name[alert]["labels"]["severity"]
        tests.append({
            "interval": "1m",
            "input_series": [{"series": name, "values": values} for name, values in series],
            # Annotations are left out of the copy of the rules below: only the labels are compared.
            "alert_rule_test": [{"eval_time": at, "alertname": alert,
                                 "exp_alerts": [{"exp_labels": {**labels, "severity": severity}}
                                                for labels in expected]}],
        })
    groups = [{"name": "npcworld", "rules": [{k: v for k, v in rule.items() if k != "annotations"}
                                             for rule in rules]}]
    (tmp_path / "rules.yml").write_text(yaml.safe_dump({"groups": groups}))
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(
        {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": tests}
    ))
    result = subprocess.run([PROMTOOL, "test", "rules", "tests.yml"], cwd=tmp_path,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
