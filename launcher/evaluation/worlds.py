"""The evaluation's worlds on the private backend: one per ablation condition, each the first N residents of a
template with the same seed, created as ``npcworld simulate`` creates its town (events appended to the
world stream, ``WorldCreated.ablations`` set), then stepped through the public clock API."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

import httpx
from psycopg_pool import AsyncConnectionPool

from launcher.evaluation.rating import CONDITIONS
from npcworld.contracts import Envelope, WorldCreated
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.fork import world_stream
from npcworld.templates import load_template

__all__ = ["ApiError", "api", "create_world", "reply_to", "step_worlds", "wait_ready", "world_id_of"]

Tick = Callable[[int, int], None]
_READY_TIMEOUT_S = 300.0
_REPLY_WAIT_S = 180.0


class ApiError(RuntimeError):
    """The backend refused a call or did not finish in time."""


def world_id_of(condition: str, seed: int) -> str:
    return f"eval-{condition.replace('_', '-')}-{seed}"


async def api(client: httpx.AsyncClient, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """One call of the public API; its JSON (a 4xx/5xx answer is an ``ApiError``)."""
    response = await client.request(method, path, json=body)
    if response.status_code >= 400:
        raise ApiError(f"{method} {path} answered {response.status_code}: {response.text[:300]}")
    return response.json()


async def reply_to(client: httpx.AsyncClient, npc_path: str, kind: str, body: dict[str, Any]) -> str:
    """The NPC's reply to a chat or interview (``kind``), read once it is there if the POST's wait ran out."""
    response = await client.post(f"{npc_path}/{kind}", json=body)
    if response.status_code not in (200, 202):
        raise ApiError(f"POST {npc_path}/{kind} answered {response.status_code}: {response.text[:300]}")
    deadline = time.monotonic() + _REPLY_WAIT_S
    while response.status_code == 202:
        if time.monotonic() > deadline:
            raise ApiError(f"no reply from {npc_path} after {_REPLY_WAIT_S:.0f} s")
        await asyncio.sleep(0.5)
        response = await client.get(f"{npc_path}/chats/{response.json()['event_id']}")
    return str(response.json()["reply"])


async def create_world(pool: AsyncConnectionPool, tenant_id: str, world_id: str, condition: str,
                       template_npcs: tuple[str, int]) -> datetime:
    """The world of ``condition``: the template's tree and its first ``n`` residents; its start time."""
    name, n = template_npcs
    template = load_template(name)
    start = template.start_time
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        created = WorldCreated(name=world_id, start_time=start, ablations=CONDITIONS[condition])
        events: list[Envelope] = [uow.new_event(created, tenant_id=tenant_id, world_id=world_id,
                                                world_time=start)]
        events.append(uow.new_event(template.definition(name), tenant_id=tenant_id, world_id=world_id,
                                    world_time=start))
        events += [uow.new_event(npc, tenant_id=tenant_id, world_id=world_id, world_time=start,
                                 npc_id=npc.npc_id) for npc in template.personas(world_id)[:n]]
        await uow.append(world_stream(world_id), events, expected_version=0)
    return start


async def wait_ready(client: httpx.AsyncClient, world_id: str) -> None:
    """Until ``GET /v1/worlds/{id}`` says the world state has taken in its clock, tree and NPCs."""
    deadline = time.monotonic() + _READY_TIMEOUT_S
    while not (await api(client, "GET", f"/v1/worlds/{world_id}"))["readiness"]["ready"]:
        if time.monotonic() > deadline:
            raise ApiError(f"world {world_id} not ready after {_READY_TIMEOUT_S:.0f} s")
        await asyncio.sleep(0.5)


async def step_worlds(client: httpx.AsyncClient, worlds: Sequence[str], until: datetime, step_seconds: float,
                      tick: Tick) -> None:
    """Run every world's clock in stepped mode (a step once the one before is digested) to ``until``,
    all at once; ``tick(steps done, steps in all)`` as they go."""
    start = datetime.fromisoformat((await api(client, "GET", f"/v1/worlds/{worlds[0]}/clock"))["world_time"])
    total = round((until - start).total_seconds() / step_seconds) * len(worlds)
    for w in worlds:
        await api(client, "POST", f"/v1/worlds/{w}/clock", {
            "paused": False, "mode": "stepped", "step_seconds": step_seconds, "until": until.isoformat()})
    while True:
        clocks = [await api(client, "GET", f"/v1/worlds/{w}/clock") for w in worlds]
        done = sum(round((datetime.fromisoformat(c["world_time"]) - start) / timedelta(seconds=step_seconds))
                   for c in clocks)
        tick(min(done, total), total)
        if all(datetime.fromisoformat(c["world_time"]) >= until for c in clocks):
            return
        await asyncio.sleep(0.5)
