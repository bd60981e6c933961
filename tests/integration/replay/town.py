"""A real stepping town for replay tests: every service process on a private broker, the demo template's
town with a few of its NPCs, a stepped clock, and what a replay must keep (owed events, claims, reactions)."""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from launcher.cli import SERVICES
from launcher.instances import instance_name
from launcher.private_ports import private_api_env
from launcher.supervisor import SERVICE_MODULES, ProcessGroup
from npcworld.contracts import ClockChanged, EventPayload, WorldCreated
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.fork import world_stream
from npcworld.messaging.heartbeat import owed_sql
from npcworld.projection import Projection
from npcworld.templates import load_template
from services.world_state.quiescence import PipelineProbe
from services.world_state.repository import WorldRepository
from tests.polling import eventually

TEMPLATE = "brindle-hollow"
NPCS = 4
STEP_SECONDS = 10.0


def projections() -> dict[str, Projection]:
    """Every service's read model, found the way ``npcworld replay`` finds them."""
    out = {}
    for service in SERVICES:
        module = importlib.import_module(f"services.{service}.handlers")
        projection = getattr(module, "PROJECTION", None)
        if projection is None and callable(builder := getattr(module, "build_projection", None)):
            projection = builder()
        if projection is not None:
            out[service] = projection
    return out


def service_env(database_url: str, bootstrap: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        "KAFKA_FETCH_MAX_WAIT_MS": "20",
        **private_api_env(),
        "NPCWORLD_SEED": "1",
        "LOG_LEVEL": "WARNING",
    }


@dataclass
class Town:
    """One world of the demo template in a database whose services run in ``group``."""

    pool: AsyncConnectionPool
    group: ProcessGroup
    env: dict[str, str]
    tenant_id: str = ""
    world_id: str = "replay-town"

    async def create(self) -> None:
        """The town with every service alive and its creation digested; the clock not yet running."""
        from services.gateway.repository import GatewayRepository

        template = load_template(TEMPLATE)
        async with self.pool.connection() as conn, conn.transaction():
            self.tenant_id, _ = await GatewayRepository(conn).create_tenant("replay")
        # The template's town with its first few NPCs: every service's work, at a fraction of the cost.
        await self._append(
            world_stream(self.world_id),
            WorldCreated(name="Replay", start_time=template.start_time),
            template.definition(TEMPLATE),
            *template.personas(self.world_id)[:NPCS],
        )
        await eventually(lambda: self._value("SELECT count(*) FROM ws_clocks WHERE world_id = %s",
                                             self.world_id), lambda n: n == 1, timeout=120)
        services = [s for s in SERVICE_MODULES if instance_name(s, 1) in self.group.commands]
        beating = "SELECT count(DISTINCT consumer) FROM consumer_heartbeats WHERE consumer = ANY(%s)"
        await eventually(lambda: self._value(beating, services), lambda n: n == len(services), timeout=120)
        await self.settle()

    async def step(self) -> int:
        return await self._value("SELECT step FROM ws_clocks WHERE world_id = %s", self.world_id)

    async def run(self, steps: int, focus: tuple[str, ...] | None = None) -> int:
        """Let the stepped clock run ``steps`` more steps (it stops by itself there), with a level of detail
        when ``focus`` is given; returns that step."""
        async with self.pool.connection() as conn:
            clock = await WorldRepository(conn).clock(self.tenant_id, self.world_id)
        assert clock is not None
        until = clock.world_time + timedelta(seconds=steps * STEP_SECONDS)
        await self._append(f"clock-ops-{self.world_id}",
                           ClockChanged(paused=False, speed=None, step_seconds=STEP_SECONDS, until=until,
                                        focus=focus),
                           when=clock.world_time)
        return clock.step + steps

    async def settle(self, timeout: float = 120) -> None:
        """Every event digested and no work held for a step's end (the last StepCompleted is processed), and
        nothing owed by consumers the stepped clock does not wait for either (the gateway's projection)."""
        probe = PipelineProbe(self.pool)

        async def quiet() -> bool:
            async with self.pool.connection() as conn:
                held = await WorldRepository(conn).has_held_work(self.tenant_id, self.world_id)
            return await probe.wait_idle(1.0) and not held and not await self.owed()

        await eventually(quiet, bool, timeout=timeout)

    async def owed(self) -> list[tuple[str, int]]:
        """Events some live consumer has neither processed nor dead-lettered, per consumer."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                f"WITH {owed_sql()} SELECT consumer, count(*) FROM owed GROUP BY consumer ORDER BY consumer",
                {"since": 0, "until": 2**62, "alive": 3600},
            )
            return [(r[0], int(r[1])) for r in await cur.fetchall()]

    async def claims(self) -> set[tuple[str, str]]:
        async with self.pool.connection() as conn:
            cur = await conn.execute("SELECT consumer, event_id::text FROM processed_events")
            return {(r[0], r[1]) for r in await cur.fetchall()}

    async def doubled_reactions(self) -> list[tuple[Any, ...]]:
        """Two identical events caused by one event: a reaction that ran twice."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT type, npc_id, causation_id, count(*) FROM events WHERE causation_id IS NOT NULL"
                " GROUP BY type, npc_id, causation_id, md5(payload::text) HAVING count(*) > 1 LIMIT 20"
            )
            return list(await cur.fetchall())

    async def snapshot(self, tables: tuple[str, ...]) -> dict[str, list[str]]:
        """Every row of every table, as sorted JSON texts."""
        out = {}
        async with self.pool.connection() as conn:
            for table in tables:
                query = sql.SQL("SELECT to_jsonb(t)::text FROM {} AS t").format(sql.Identifier(table))
                out[table] = sorted(r[0] for r in await (await conn.execute(query)).fetchall())
        return out

    async def _append(self, stream: str, *payloads: EventPayload, when: Any = None) -> None:
        when = when or load_template(TEMPLATE).start_time
        async with self.pool.connection() as conn, conn.transaction():
            uow = UnitOfWork(conn, EventStore())
            events = [uow.new_event(p, tenant_id=self.tenant_id, world_id=self.world_id, world_time=when,
                                    npc_id=getattr(p, "npc_id", None)) for p in payloads]
            await uow.append(stream, events)

    async def _value(self, query: str, param: Any) -> int:
        async with self.pool.connection() as conn:
            row = await (await conn.execute(query, (param,))).fetchone()
        return int(row[0]) if row and row[0] is not None else 0


async def wait_for_step(town: Town, step: int, timeout: float = 180) -> None:
    """Wait until the clock reached ``step``; failing, say which events it was waiting for."""
    try:
        await eventually(town.step, lambda s: s >= step, timeout=timeout)
    except AssertionError as exc:
        async with town.pool.connection() as conn:
            cur = await conn.execute(
                f"WITH {owed_sql()} SELECT o.consumer, e.type, e.seq FROM owed o JOIN events e"
                " USING (event_id)"
                " ORDER BY e.seq LIMIT 10",
                {"since": 0, "until": 2**62, "alive": 3600},
            )
            owed = await cur.fetchall()
        raise AssertionError(f"{exc}; owed: {owed}") from exc
