"""Which worlds step: services that hold work for a stepped clock's step boundary each keep this flag.

A world steps while its clock runs with no speed (``ClockChanged(paused=False, speed=None)``): the next step
starts only once the previous one is digested (services/world_state/quiescence.py).
"""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

from npcworld.contracts import ClockChanged

__all__ = ["SteppedWorlds", "steps"]


def steps(change: ClockChanged) -> bool:
    """Whether the clock runs stepped after this change."""
    return not change.paused and change.speed is None


class SteppedWorlds:
    """The flag in ``table`` (tenant_id, world_id, stepped), one table per owning service."""

    def __init__(self, table: str) -> None:
        self.table = table

    async def set(self, conn: AsyncConnection[Any], tenant: str, world: str, stepped: bool) -> None:
        await conn.execute(
            f"INSERT INTO {self.table} (tenant_id, world_id, stepped) VALUES (%s, %s, %s)"
            " ON CONFLICT (tenant_id, world_id) DO UPDATE SET stepped = EXCLUDED.stepped",
            (tenant, world, stepped),
        )

    async def get(self, conn: AsyncConnection[Any], tenant: str, world: str) -> bool:
        cur = await conn.execute(
            f"SELECT stepped FROM {self.table} WHERE tenant_id = %s AND world_id = %s", (tenant, world)
        )
        row = await cur.fetchone()
        return bool(row and row[0])
