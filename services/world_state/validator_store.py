"""SQL of the world's validator: the folded registration (``ws_validators``), and its signing secret."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection
from psycopg.types.json import Jsonb

from npcworld.contracts import ActionValidator
from npcworld.egress import find_secret

__all__ = ["ValidatorStore"]


class ValidatorStore:
    """Reads and writes a world's validator on the caller's connection."""

    def __init__(self, conn: AsyncConnection[Any]) -> None:
        self.conn = conn

    async def save(self, tenant_id: str, world_id: str, validator: ActionValidator | None) -> None:
        """The world's validator from now on (None: none)."""
        if validator is None:
            await self.conn.execute(
                "DELETE FROM ws_validators WHERE tenant_id = %s AND world_id = %s", (tenant_id, world_id)
            )
            return
        await self.conn.execute(
            "INSERT INTO ws_validators (tenant_id, world_id, validator) VALUES (%s, %s, %s)"
            " ON CONFLICT (tenant_id, world_id) DO UPDATE SET validator = EXCLUDED.validator",
            (tenant_id, world_id, Jsonb(validator.model_dump(mode="json"))),
        )

    async def get(self, tenant_id: str, world_id: str) -> ActionValidator | None:
        cur = await self.conn.execute(
            "SELECT validator FROM ws_validators WHERE tenant_id = %s AND world_id = %s",
            (tenant_id, world_id),
        )
        row = await cur.fetchone()
        return ActionValidator.model_validate(row[0]) if row else None

    async def secret(self, tenant_id: str, validator_id: str) -> str | None:
        """The validator's signing secret (kept by the library, apart from the log)."""
        return await find_secret(self.conn, tenant_id, validator_id)
