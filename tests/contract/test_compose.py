"""Static checks that docker-compose.yml only names processes, modules, settings and services that exist.

Docker cannot run here, so these tests are what keeps the production compose file honest.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from pydantic import AliasChoices

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
    "migrate", "relay", "gateway", *WORKERS, *(svc.replace("_", "-") for svc in CONSUMER_SERVICES)
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
    main = importlib.import_module("npcworld.cli").main
    subcommand = _command(container)[1]
    assert subcommand in main.commands, f"{container}: `npcworld {subcommand}` is not registered"


def test_npcworld_executable_runs_the_cli_group() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    module_name, _, attr = pyproject["project"]["scripts"]["npcworld"].partition(":")
    assert module_name == "npcworld.cli"
    if attr == "main":
        return
    spec = importlib.util.find_spec(module_name)
    assert spec is not None and spec.origin is not None
    functions = {node.name: node for node in ast.parse(Path(spec.origin).read_text()).body
                 if isinstance(node, ast.FunctionDef)}
    assert attr in functions, f"npcworld.cli defines no {attr}"
    calls = {ast.unparse(node.func) for node in ast.walk(functions[attr]) if isinstance(node, ast.Call)}
    assert "main" in calls, f"npcworld.cli:{attr} never calls the `main` group"


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
