"""The ``npcworld`` command: embedded stack, relay, replay, fork, contracts and the live backend."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import click

import services
from launcher.embedded.broker import DEFAULT_ROTATE_EVENTS
from launcher.process_group import BACKOFF_MAX_S
from npcworld.errors import NpcworldError

__all__ = ["SERVICES", "main"]

# Services whose read model `npcworld replay` can rebuild: every package with a handlers module.
SERVICES = tuple(
    sorted(p.parent.name for p in Path(services.__file__).resolve().parent.glob("*/handlers.py"))
)
# Read models kept by a service without consumer handlers, by the module holding their PROJECTION.
_PROJECTION_MODULES = {"webhooks": "services.webhooks.subscriptions"}
REPLAYABLE = tuple(sorted({*SERVICES, *_PROJECTION_MODULES}))


def _home(ctx: click.Context) -> Path:
    return Path(ctx.obj["home"])


@click.group()
@click.option("--home", envvar="NPCWORLD_HOME", default=".npcworld", show_default=True,
              help="Data directory of the embedded stack.")
@click.option("--log-level", envvar="LOG_LEVEL", default="INFO", show_default=True)
@click.pass_context
def main(ctx: click.Context, home: str, log_level: str) -> None:
    """npcworld: persistent, debuggable NPC worlds."""
    from npcworld.service import configure_logging

    configure_logging(log_level.upper())
    ctx.ensure_object(dict)
    ctx.obj["home"] = home
    os.environ["NPCWORLD_HOME"] = home  # settings classes and child processes read the same data dir


@main.command()
@click.pass_context
def up(ctx: click.Context) -> None:
    """Start the embedded Postgres + pgvector and Tansu broker (idempotent)."""
    from launcher.embedded import EmbeddedStack

    state = EmbeddedStack(_home(ctx)).up()
    click.echo(f"postgres  {state.database_url}\nkafka     {state.kafka_bootstrap_servers}")


@main.command()
@click.pass_context
def down(ctx: click.Context) -> None:
    """Stop the embedded stack (the broker's topics go; the event store stays)."""
    from launcher.embedded import EmbeddedStack
    from launcher.run_guard import run_holder

    if (holder := run_holder(_home(ctx).resolve())) is not None:
        raise click.ClickException(f"npcworld run (pid {holder}) uses this stack and would restart it: "
                                   f"stop that run instead (Ctrl-C, or kill {holder}): it stops the stack")
    stopped = EmbeddedStack(_home(ctx)).down()
    click.echo("stopped: " + (", ".join(stopped) or "nothing was running"))


@main.command()
@click.pass_context
def status(ctx: click.Context) -> None:
    """Show what runs in the embedded stack and, during ``npcworld run``, the health of every process."""
    from launcher.embedded import EmbeddedStack
    from launcher.run_guard import run_state

    click.echo(json.dumps({**EmbeddedStack(_home(ctx)).status(), "run": run_state(_home(ctx).resolve())},
                          indent=2))


@main.command()
def migrate() -> None:
    """Apply database migrations (DATABASE_URL or the embedded stack)."""
    from npcworld.db import apply_migrations
    from npcworld.settings import CommonSettings, resolve_endpoints

    applied = apply_migrations(resolve_endpoints(CommonSettings()).database_url)
    click.echo("applied: " + (", ".join(applied) or "nothing, already up to date"))


@main.command()
@click.option("--republish-from", type=int, default=None,
              help="Publish every stored event after this sequence number again, then relay as usual.")
def relay(republish_from: int | None) -> None:
    """Run the outbox relay (one active per database; others stand by)."""
    from launcher.relay_process import run_relay

    run_relay(republish_from)


@main.command()
@click.option("--service", "service", type=click.Choice(REPLAYABLE), required=True)
@click.option("--check", is_flag=True,
              help="Compare a rebuild with the live read model, row for row, and change nothing.")
def replay(service: str, check: bool) -> None:
    """Rebuild a service's projection from the event store (safe while the world runs).

    Folds exactly the events the service's consumer has processed, in store order; processed-event claims
    are kept, so nothing becomes owed and no reaction runs twice."""
    from npcworld.db import open_pool
    from npcworld.projection import differences, rebuild
    from npcworld.settings import CommonSettings, resolve_endpoints

    projection = _projection(service)
    url = resolve_endpoints(CommonSettings()).database_url

    async def go() -> Any:
        pool = await open_pool(url)
        try:
            if check:
                return await differences(pool, projection)
            with click.progressbar(length=100, label=f"replaying {service}") as bar:
                def progress(done: int, total: int) -> None:
                    bar.update(int(100 * done / max(total, 1)) - bar.pos)
                return await rebuild(pool, projection, progress=progress)
        finally:
            await pool.close()

    result = asyncio.run(go())
    if not check:
        click.echo(f"{service}: rebuilt from {result} processed events (processing claims kept)")
    elif result:
        raise click.ClickException(f"{service}: a rebuild differs from the live read model:\n"
                                   + "\n".join(result))
    else:
        click.echo(f"{service}: a rebuild equals the live read model, row for row")


@main.command()
@click.option("--tenant", required=True)
@click.option("--world", "world_id", required=True, help="The world to fork.")
@click.option("--at", "at", required=True, help="World time (ISO 8601) to fork at.")
@click.option("--new-world", "new_world_id", default=None, help="Id of the new world (default: generated).")
def fork(tenant: str, world_id: str, at: str, new_world_id: str | None) -> None:
    """Fork a world at world time T into a new world id."""
    from npcworld.db import open_pool
    from npcworld.fork import fork_world
    from npcworld.ids import new_id
    from npcworld.settings import CommonSettings, resolve_endpoints

    when = datetime.fromisoformat(at)
    if when.tzinfo is None:
        raise click.BadParameter("give a timezone, e.g. 2023-02-13T12:00:00+00:00", param_hint="--at")
    target = new_world_id or new_id()
    url = resolve_endpoints(CommonSettings()).database_url

    async def go() -> int:
        pool = await open_pool(url)
        try:
            async with pool.connection() as conn, conn.transaction():
                return await fork_world(conn, tenant_id=tenant, source_world_id=world_id, at=when,
                                        new_world_id=target)
        finally:
            await pool.close()

    until = asyncio.run(go())
    click.echo(f"forked {world_id} at {when.isoformat()} into {target}"
               f" (inherits its history up to seq {until}; nothing copied)")


def _database_url() -> str:
    """DATABASE_URL, or the embedded stack's (the ops commands need only the database)."""
    from npcworld.settings import CommonSettings, resolve_endpoints

    settings = CommonSettings()
    return settings.database_url or resolve_endpoints(settings).database_url


@main.command()
@click.argument("event_id")
@click.option("--prompts", is_flag=True, help="Also print each model call's prompt messages.")
def why(event_id: str, prompts: bool) -> None:
    """Why an event happened: its causes back to what started the chain, and the model calls and
    retrievals made for it (see docs/operations.md)."""
    import uuid

    import psycopg

    from launcher.why import explain, render

    try:
        wanted = uuid.UUID(event_id)
    except ValueError:
        raise click.BadParameter("an event id (a UUID, as in the event log)", param_hint="EVENT_ID") from None
    with psycopg.connect(_database_url()) as conn:
        found = explain(conn, wanted)
    if found is None:
        raise click.ClickException(f"no event {event_id} in this database")
    click.echo(render(found, prompts=prompts))


@main.group()
def events() -> None:
    """The event log from the terminal."""


@events.command("tail")
@click.option("--tenant", "tenant_id", help="Only this tenant's events.")
@click.option("--world", "world_id", help="Only this world's events.")
@click.option("--npc", "npc_id", help="Only this NPC's events.")
@click.option("--type", "types", multiple=True, help="Only events of this type (repeatable).")
@click.option("--last", type=click.IntRange(0, 100_000), default=20, show_default=True,
              help="Start with this many of the newest matching events.")
@click.option("--follow/--no-follow", default=True, show_default=True, help="Keep printing new events.")
def events_tail(tenant_id: str | None, world_id: str | None, npc_id: str | None, types: tuple[str, ...],
                last: int, follow: bool) -> None:
    """Print events as they are stored, one line each (seq, world time, type, world/NPC, payload, id);
    ``npcworld why <id>`` explains any of them. Ctrl-C stops."""
    import time

    import psycopg

    from launcher.why import events_after, line_of

    filters: dict[str, Any] = {"tenant_id": tenant_id, "world_id": world_id, "npc_id": npc_id, "types": types}
    with psycopg.connect(_database_url(), autocommit=True) as conn:
        shown = events_after(conn, 0, newest=True, limit=last, **filters) if last else []
        for e in shown:
            click.echo(line_of(e))
        after = shown[-1].seq if shown else int(conn.execute("SELECT coalesce(max(seq), 0) FROM events")
                                                .fetchone()[0])  # type: ignore[index]
        try:
            while follow:
                batch = events_after(conn, after, **filters)
                for e in batch:
                    click.echo(line_of(e))
                if batch:
                    after = batch[-1].seq
                else:
                    time.sleep(1.0)
        except KeyboardInterrupt:
            pass


@main.group()
def dlq() -> None:
    """Events a consumer gave up on (dead letters), and sending them back to it."""


@dlq.command("list")
@click.option("--consumer", help="Only this consumer's (memory, planning, ...).")
@click.option("--limit", type=click.IntRange(1, 10_000), default=100, show_default=True)
def dlq_list(consumer: str | None, limit: int) -> None:
    """Dead letters, newest first: id, consumer, event, when, and why."""
    import psycopg

    from npcworld.dead_letters import dead_letters

    with psycopg.connect(_database_url()) as conn:
        found = dead_letters(conn, consumer, limit)
    click.echo(f"{len(found)} dead letter(s)" + (f" of {consumer}" if consumer else ""))
    for d in found:
        event = f"{d.event_type} {d.event_id}" if d.event_id else f"(not an event: {d.topic})"
        click.echo(f"{d.id}  {d.consumer}  {event}  {d.created_at:%Y-%m-%d %H:%M:%S}  {d.reason}")


@dlq.command("redrive")
@click.argument("ids", nargs=-1, type=int, required=True)
def dlq_redrive(ids: tuple[int, ...]) -> None:
    """Send dead letters back to the consumer that gave up on them (after the cause is fixed)."""
    import psycopg

    from npcworld.dead_letters import redrive

    with psycopg.connect(_database_url()) as conn:
        try:
            sent = redrive(conn, list(ids))
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
    for d in sent:
        click.echo(f"redriven {d.id}: {d.event_type} {d.event_id} back to {d.consumer}")


@main.group()
def tenant() -> None:
    """Tenants and their API keys (how the first key of a deployment comes to exist)."""


# docs/api.md, "Tenants, keys and scopes" (services/gateway/domain/grants.py) says what each one allows.
_SCOPES = click.Choice(["read", "chat", "play", "write", "voice", "admin"])


def _with_keys(action: Any) -> Any:
    """Run ``action(KeyRepository)`` in one transaction on the configured database."""
    import psycopg

    from npcworld.db import apply_migrations
    from npcworld.settings import CommonSettings, resolve_endpoints
    from services.gateway.repository import KeyRepository

    url = resolve_endpoints(CommonSettings()).database_url
    apply_migrations(url)

    async def go() -> Any:
        async with await psycopg.AsyncConnection.connect(url) as conn, conn.transaction():
            return await action(KeyRepository(conn))

    return asyncio.run(go())


@tenant.command("create")
@click.argument("name")
@click.option("--scope", "scopes", type=_SCOPES, multiple=True, default=("read", "write", "admin"),
              show_default=True, help="Scopes of the first key (repeat the option).")
def tenant_create(name: str, scopes: tuple[str, ...]) -> None:
    """Create a tenant and its first API key; the key is printed once and stored only as a hash."""

    async def action(keys: Any) -> tuple[str, str]:
        created = await keys.create_tenant(name)
        _, secret = await keys.create_key(created.tenant_id, "bootstrap", tuple(dict.fromkeys(scopes)))
        return created.tenant_id, secret

    tenant_id, secret = _with_keys(action)
    click.echo(f"tenant_id: {tenant_id}\napi_key:   {secret}\n(store the key now: it is not shown again)")


@tenant.command("add-key")
@click.argument("tenant_id")
@click.option("--name", default="cli", show_default=True)
@click.option("--scope", "scopes", type=_SCOPES, multiple=True, required=True,
              help="Repeat for several scopes.")
def tenant_add_key(tenant_id: str, name: str, scopes: tuple[str, ...]) -> None:
    """Create another API key for an existing tenant."""

    async def action(keys: Any) -> str:
        await keys.get_tenant(tenant_id)
        _, secret = await keys.create_key(tenant_id, name, tuple(dict.fromkeys(scopes)))
        return str(secret)

    click.echo(f"api_key: {_with_keys(action)}\n(store the key now: it is not shown again)")


@main.command()
@click.option("--check", is_flag=True, help="Fail if contracts/ differs from the code instead of writing it.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("contracts"), show_default=True)
def contracts(check: bool, out: Path) -> None:
    """Export JSON Schemas, the topic catalogue and openapi.json to contracts/."""
    from npcworld.contracts.export import render_contracts
    from services.gateway.api import create_app

    files = render_contracts(create_app().openapi())
    stale = [name for name, text in files.items()
             if not (out / name).exists() or (out / name).read_text() != text]
    if check:
        if stale:
            raise click.ClickException("contracts/ is out of date: " + ", ".join(sorted(stale)))
        click.echo("contracts/ matches the code")
        return
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    click.echo(f"wrote {len(files)} files to {out}/ ({len(stale)} changed)")


@main.command()
@click.option("--port", envvar="NPCWORLD_PORT", default=8000, show_default=True,
              help="Gateway HTTP port (NPCWORLD_PORT).")
@click.option("--no-demo", is_flag=True, help="Start the empty backend without the demo world.")
@click.option("--template", default="brindle-hollow", show_default=True,
              help="The demo world's template, e.g. a generated town (town-250-1), which names the world.")
@click.option("--rotate-events", type=click.IntRange(min=0), default=DEFAULT_ROTATE_EVENTS, show_default=True,
              help="Replace the embedded broker with an empty one after this many events (0: never); "
                   "its memory storage slows down as it fills.")
@click.option("--instances", envvar="NPCWORLD_INSTANCES", default="", metavar="SVC=N,…",
              help="Run services as several instances sharing their partitions, e.g. memory=2,planning=2 "
                   "(NPCWORLD_INSTANCES).")
@click.option("--restart-max", "restart_max", envvar="NPCWORLD_RESTART_MAX_S", type=click.FloatRange(min=1),
              default=BACKOFF_MAX_S, show_default=True,
              help="Seconds a process that keeps exiting waits at most before it is started again; the wait "
                   "doubles from 1 s while it exits within a minute of its start (NPCWORLD_RESTART_MAX_S).")
@click.pass_context
def run(
    ctx: click.Context, port: int, no_demo: bool, template: str, rotate_events: int, instances: str,
    restart_max: float,
) -> None:
    """Run the whole backend on the embedded stack until Ctrl-C, showing progress."""
    from launcher.supervisor import Supervisor
    from npcworld.templates import template_exists

    if not template_exists(template):
        raise click.BadParameter(f"no template {template!r}", param_hint="--template")
    Supervisor(_home(ctx), port=port, demo=not no_demo, rotate_events=rotate_events,
               instances=_instances(instances), template=template, restart_max_s=restart_max).run()


def _instances(text: str) -> dict[str, int]:
    from launcher.instances import parse_instances
    from launcher.supervisor import SERVICE_MODULES

    try:
        return parse_instances(text, SERVICE_MODULES)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--instances") from exc


@main.command()
@click.option("--template", default="brindle-hollow", show_default=True, help="World template to simulate.")
@click.option("--days", type=click.FloatRange(min=0, min_open=True), default=2.0, show_default=True,
              help="Simulated days (a fraction runs a shorter slice).")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--step-seconds", type=click.FloatRange(min=0, min_open=True), default=10.0, show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=Path("simulation-out"), show_default=True,
              help="Directory for report.json, report.md and the run's private stack.")
@click.option("--only", default="",
              help="Comma-separated services to run (default: all), e.g. for profiling.")
@click.option("--instances", default="", metavar="SVC=N,…",
              help="Run services as several instances sharing their partitions, e.g. memory=2,planning=2.")
@click.option("--focus", "focus", multiple=True, metavar="PLACE",
              help="Level of detail: NPCs run in full detail only in these places (a sector, or "
                   "sector:arena; repeatable); elsewhere coarse. Default: everywhere in full detail.")
@click.option("--rotate-events", type=click.IntRange(min=0), default=DEFAULT_ROTATE_EVENTS, show_default=True,
              help="Replace the embedded broker with an empty one after this many events (0: never); "
                   "its memory storage slows down as it fills.")
def simulate(
    template: str, days: float, seed: int, step_seconds: float, out: Path, only: str, rotate_events: int,
    instances: str, focus: tuple[str, ...],
) -> None:
    """Run a town headless as fast as the pipeline allows, then print and save the paper's metrics."""
    from launcher.simulation.report import to_markdown
    from launcher.simulation.runner import SimulationConfig, run_simulation

    steps = max(1, round(days * 86400 / step_seconds))
    # Not on a terminal (a log file, CI), click's bar prints only its label: a line per 5 % says how far.
    lines = not sys.stdout.isatty()
    with click.progressbar(length=steps, label="simulating", show_pos=True, show_eta=True) as bar:
        said = [0]

        def progress(done: int, total: int) -> None:
            bar.update(min(done, total) - bar.pos)
            if lines and done * 20 // max(1, total) > said[0]:
                said[0] = done * 20 // max(1, total)
                click.echo(f"simulating: step {min(done, total)} of {total} ({said[0] * 5} %)")

        services = tuple(s for s in only.split(",") if s)
        cfg = SimulationConfig(template, days, seed, step_seconds, out, services, rotate_events,
                               _instances(instances), focus or None)
        try:
            report = run_simulation(cfg, progress)
        except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP: the run has stopped its processes and stack
            click.echo(f"\nstopped: no report; the run's processes and its stack under {out}/stack are down",
                       err=True)
            # Exit now: the simulation's loop was left with what still ran in it (a pool's workers), and an
            # interpreter shutdown that waits for those, or meets a late signal, must not change the status.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)
    click.echo(to_markdown(report))
    click.echo(f"saved {out}/report.json and {out}/report.md")


def _add_eval() -> None:
    from launcher.evaluation.command import eval_command

    main.add_command(eval_command)


_add_eval()


@main.group()
def template() -> None:
    """World templates: generate a town of any size."""


@template.command("generate")
@click.option("--npcs", type=click.IntRange(25, 10_000), required=True, help="Residents (25 to 10,000).")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=None, help="File to write (else stdout).")
def template_generate(npcs: int, seed: int, out: Path | None) -> None:
    """Generate a town; its name (town-<npcs>-<seed>) is a template name wherever one is taken."""
    from npcworld.templates.generator import generate_town, generated_name

    town = generate_town(npcs, seed)
    text = json.dumps(town, indent=1, ensure_ascii=False) + "\n"
    if out is None:
        click.echo(text, nl=False)
        return
    out.write_text(text)
    click.echo(f"wrote {out}: {town['description']} Template name: {generated_name(npcs, seed)}")


@main.command("test")
@click.argument("scenarios", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--llm", type=click.Choice(["auto", "offline", "record", "replay"]), default="auto",
              show_default=True,
              help="auto: replay the recordings next to the scenarios if all have one, else offline.")
@click.option("--junit-xml", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write JUnit XML here.")
@click.option("--url", help="A running backend to test against (default: start a private one).")
@click.option("--api-key", envvar="NPCWORLD_API_KEY", help="Its API key (NPCWORLD_API_KEY).")
@click.option("--quiet-seconds", type=click.FloatRange(min=0.1), default=2.0, show_default=True,
              help="With --url: a world is settled once its event log is this long unchanged.")
@click.option("--keep-logs", type=click.Path(file_okay=False, path_type=Path),
              help="Copy the private backend's process logs here.")
def test_scenarios(scenarios: tuple[Path, ...], llm: str, junit_xml: Path | None, url: str | None,
                   api_key: str | None, quiet_seconds: float, keep_logs: Path | None) -> None:
    """NPC regression tests: run scenario files (YAML) against fresh worlds (docs/studio-controls.md)."""
    from launcher.scenarios.command import TestOptions, run_tests

    opts = TestOptions(scenarios, llm, url, api_key, junit_xml, quiet_seconds, keep_logs)  # type: ignore[arg-type]
    try:
        code = run_tests(opts, click.echo)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    sys.exit(code)


def _projection(service: str) -> Any:
    module = importlib.import_module(_PROJECTION_MODULES.get(service, f"services.{service}.handlers"))
    projection = getattr(module, "PROJECTION", None)
    if projection is None and callable(builder := getattr(module, "build_projection", None)):
        projection = builder()  # a projection that needs the service's settings (e.g. its embedder)
    if projection is None:
        raise click.ClickException(f"{service} has no projection to rebuild yet")
    return projection


def entrypoint() -> None:
    try:
        main(standalone_mode=True)
    except NpcworldError as exc:
        logging.getLogger("npcworld").debug("failed", exc_info=True)
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    entrypoint()
