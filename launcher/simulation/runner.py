"""``npcworld simulate``: a fresh embedded stack, every service process, one town from a template, its clock
stepped as fast as the pipeline digests each step until the requested world time; then the report.

Whatever services exist run (the supervisor's process list without the gateway); the report says which.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from launcher.embedded import EmbeddedStack
from launcher.embedded.broker import DEFAULT_ROTATE_EVENTS
from launcher.embedded.procs import STACK_MARKER
from launcher.embedded.rotation import BrokerRotation
from launcher.instances import CONSUMER_PROCESS, instance_env, instance_name
from launcher.private_ports import free_port, private_api_env
from launcher.run_guard import guarded, stop_leftovers
from launcher.simulation.eventlog import read_facts
from launcher.simulation.report import build_report, to_markdown
from launcher.simulation.storage import storage_figures, table_sizes
from launcher.supervisor import SERVICE_MODULES, ProcessGroup, process_commands, rotate_group_broker
from npcworld.contracts import ClockChanged, Envelope, EventPayload, WorldCreated
from npcworld.db import open_pool
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.fork import world_stream
from npcworld.templates import load_template

__all__ = ["SimulationConfig", "run_simulation"]

T = TypeVar("T")

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class SimulationConfig:
    """What to simulate and where the report goes (``out``/report.json, ``out``/report.md)."""

    template: str
    days: float
    seed: int
    step_seconds: float
    out: Path
    services: tuple[str, ...] = ()  # empty: every service with a consumer
    rotate_events: int = DEFAULT_ROTATE_EVENTS  # replace the embedded broker after this many events; 0: never
    instances: dict[str, int] = field(default_factory=dict)  # services run as several instances
    # Level of detail: place names (sectors, or sector:arena) where NPCs run in full detail; None: everywhere.
    focus: tuple[str, ...] | None = None


def run_simulation(cfg: SimulationConfig, progress: Progress | None = None) -> dict[str, Any]:
    """Run one simulation on a private stack under ``cfg.out``; returns the report (also written there)."""
    template = load_template(cfg.template)
    if unknown := set(cfg.services) - set(SERVICE_MODULES):
        raise ValueError(f"unknown services: {sorted(unknown)} (known: {', '.join(SERVICE_MODULES)})")
    home = cfg.out / "stack"
    home.mkdir(parents=True, exist_ok=True)
    # SIGTERM/SIGHUP stop the run like Ctrl-C, and a guardian stops its stack if it is SIGKILLed; a second
    # run on the same directory waits for (or refuses) the first.
    with guarded(home):
        _fresh(home)
        stack = EmbeddedStack(home, kafka_port=free_port())
        group: ProcessGroup | None = None
        try:
            state = stack.up()
            env = {
                **state.client_env(dict(os.environ)),
                **private_api_env(),  # a live backend may use the default 8101 and 8102
                "NPCWORLD_SEED": str(cfg.seed),
                "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"),
                # Claims are kept as rows for 10 minutes of wall time by default: hours of a simulated
                # world. A world running in real time keeps minutes of them; so does a simulation.
                "CLAIMS_KEEP_SECONDS": os.environ.get("CLAIMS_KEEP_SECONDS", "30"),
                STACK_MARKER: str(home.resolve()),
            }
            # No gateway here, so none of its read models either (its consumer would only cost CPU).
            commands = {n: c for n, c in process_commands(None, cfg.instances).items()
                        if not n.startswith(CONSUMER_PROCESS["gateway"])}
            if cfg.services:
                commands = {n: c for n, c in commands.items()
                            if n == "relay" or n.rsplit("-", 1)[0] in cfg.services or n in cfg.services}
            shared, own = instance_env(cfg.instances, env)
            group = ProcessGroup(commands, env | shared, home / "logs", own_env=own)
            group.start()
            report = _run_until_stopped(
                _simulate(cfg, state.database_url, template.start_time, group, progress, stack)
            )
        finally:
            if group is not None:
                group.stop()
            stack.down()
    cfg.out.mkdir(parents=True, exist_ok=True)
    (cfg.out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    (cfg.out / "report.md").write_text(to_markdown(report))
    return report


_UNWIND_S = 10.0  # how long a stopped simulation's coroutine may take to unwind (close its pool)


def _run_until_stopped(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, except that a stop (KeyboardInterrupt: Ctrl-C, or SIGTERM/SIGHUP through
    ``guarded``) gives the coroutine ``_UNWIND_S`` to unwind and then leaves whatever else still runs in the
    loop (a connection pool's workers) instead of waiting for it: the caller stops the processes and the
    stack either way. ``asyncio.run`` would wait for every task, and one stuck in a connection kept a
    terminated simulation running."""
    loop = asyncio.new_event_loop()
    task = loop.create_task(coro)
    try:
        return loop.run_until_complete(task)
    except KeyboardInterrupt:
        task.cancel()
        with contextlib.suppress(BaseException):
            loop.run_until_complete(asyncio.wait([task], timeout=_UNWIND_S))
        raise
    finally:
        if task.done():
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def _focus(places: tuple[str, ...] | None, world: str) -> tuple[str, ...] | None:
    """The focus as world tree paths: ``Hobbs Cafe`` → ``<world>:Hobbs Cafe``."""
    return None if places is None else tuple(f"{world}:{p}" for p in places)


def _fresh(home: Path) -> None:
    """Stop whatever an earlier run of ``home`` left and remove its data (the lock and logs/ stay)."""
    stop_leftovers(home)
    EmbeddedStack(home).down()
    for entry in home.iterdir():
        if entry.name == "logs":
            for log in entry.iterdir():
                if log.name != "guardian.log":
                    log.unlink()
        elif entry.name != "run.lock":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()


async def _append(
    conn: Any, stream: str, payload: EventPayload, tenant: str, world: str, when: datetime
) -> Envelope:
    uow = UnitOfWork(conn, EventStore())
    event = uow.new_event(payload, tenant_id=tenant, world_id=world, world_time=when)
    await uow.append(stream, [event])
    return event


async def _simulate(
    cfg: SimulationConfig,
    url: str,
    start: datetime,
    group: ProcessGroup,
    progress: Progress | None,
    stack: EmbeddedStack,
) -> dict[str, Any]:
    from services.gateway.repository import GatewayRepository
    from services.world_state.quiescence import PipelineProbe

    world = f"sim-{cfg.template}-{cfg.seed}"
    total = round(cfg.days * 86400 / cfg.step_seconds)
    until = start + timedelta(seconds=total * cfg.step_seconds)
    pool = await open_pool(url, max_size=3, name="simulate")
    try:
        async with pool.connection() as conn, conn.transaction():
            tenant, _ = await GatewayRepository(conn).create_tenant("simulation")
            await _append(
                conn,
                world_stream(world),
                WorldCreated(name=world, template=cfg.template, start_time=start),
                tenant,
                world,
                start,
            )
        await _wait(
            pool, "SELECT count(*) FROM ws_clocks WHERE world_id = %s", world, lambda n: n == 1, group
        )
        services = [s for s in SERVICE_MODULES if instance_name(s, 1) in group.commands]
        await _wait(
            pool,
            "SELECT count(DISTINCT consumer) FROM consumer_heartbeats WHERE consumer = ANY(%s)",
            services,
            lambda n: n == len(services),
            group,
        )
        probe = PipelineProbe(pool)
        await probe.wait_idle(120)
        async with pool.connection() as conn:
            sizes_before = await table_sizes(conn)
        async with pool.connection() as conn, conn.transaction():
            await _append(
                conn,
                f"clock-ops-{world}",
                ClockChanged(paused=False, speed=None, step_seconds=cfg.step_seconds, until=until,
                             focus=_focus(cfg.focus, world)),
                tenant,
                world,
                start,
            )
        began = time.monotonic()
        rotation = BrokerRotation(cfg.rotate_events)

        async def maintain() -> None:
            if await rotation.due(pool):
                rotation.rotations.append(await rotate_group_broker(pool, stack, group))

        await _wait(
            pool,
            "SELECT step FROM ws_clocks WHERE world_id = %s",
            world,
            lambda s: s >= total,
            group,
            lambda s: progress(s, total) if progress else None,
            maintain,
        )
        await _settle(pool, probe, tenant, world)
        wall = time.monotonic() - began
        async with pool.connection() as conn:
            facts = await read_facts(conn, tenant, world)
            sizes_after = await table_sizes(conn)
    finally:
        await pool.close()
    run = {
        "template": cfg.template,
        "seed": cfg.seed,
        "days": cfg.days,
        "step_seconds": cfg.step_seconds,
        "provider": "openai" if os.environ.get("OPENAI_BASE_URL") else "offline",
        "services": sorted(n for n in group.commands if n != "relay"),
    }
    report = build_report(facts, load_template(cfg.template).stories, run, wall)
    report["wall"]["broker_rotations"] = len(rotation.rotations)  # how the run went, not what it produced
    report["storage"] = storage_figures(sizes_before, sizes_after, len(facts.names) * cfg.days)
    return report


async def _settle(pool: Any, probe: Any, tenant: str, world: str) -> None:
    """Idle, and the last step's held work released (the ticker appends its StepCompleted meanwhile)."""
    from services.world_state.repository import WorldRepository

    while True:
        await probe.wait_idle(300)
        async with pool.connection() as conn:
            held = await WorldRepository(conn).has_held_work(tenant, world)
        if not held:
            return
        await asyncio.sleep(0.05)


async def _wait(
    pool: Any,
    sql: str,
    param: Any,
    done: Callable[[int], bool],
    group: ProcessGroup,
    tick: Callable[[int], None] | None = None,
    maintain: Callable[[], Awaitable[None]] | None = None,
) -> None:
    while True:
        async with pool.connection() as conn:
            row = await (await conn.execute(sql, (param,))).fetchone()
        value = int(row[0]) if row and row[0] is not None else 0
        if tick:
            tick(value)
        if done(value):
            return
        for name in group.restart_crashed():
            logger.warning("%s exited and was restarted; see %s/%s.log", name, group.logs, name)
        if maintain:
            await maintain()
        await asyncio.sleep(0.5)
