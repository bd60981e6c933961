"""LLM usage of a world, summed from the recorded calls (llm_calls)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

__all__ = ["UsageRepository", "UsageRow"]


@dataclass(frozen=True)
class UsageRow:
    prompt_kind: str
    model: str
    provider: str
    calls: int
    tokens_in: int
    tokens_out: int
    failed_calls: int


class UsageRepository:
    def __init__(self, conn: AsyncConnection[Any]) -> None:
        self.conn = conn

    async def by_kind_and_model(
        self, tenant_id: str, world_id: str, since: datetime | None, until: datetime | None
    ) -> list[UsageRow]:
        """Calls and tokens per (prompt kind, model, provider), largest token users first."""
        cur = await self.conn.execute(
            "SELECT prompt_kind, model, provider, count(*), coalesce(sum(tokens_in), 0),"
            " coalesce(sum(tokens_out), 0), count(*) FILTER (WHERE outcome IN ('malformed', 'error'))"
            " FROM llm_calls WHERE tenant_id = %s AND world_id = %s"
            " AND (%s::timestamptz IS NULL OR created_at >= %s)"
            " AND (%s::timestamptz IS NULL OR created_at < %s)"
            " GROUP BY prompt_kind, model, provider"
            " ORDER BY sum(tokens_in + tokens_out) DESC, prompt_kind, model, provider",
            (tenant_id, world_id, since, since, until, until),
        )
        return [
            UsageRow(r[0], r[1], r[2], int(r[3]), int(r[4]), int(r[5]), int(r[6]))
            for r in await cur.fetchall()
        ]
