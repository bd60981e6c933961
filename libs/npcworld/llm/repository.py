"""All SQL of the LLM layer: call records, replay look-ups and token budgets."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import Envelope
from npcworld.eventstore import EventStore
from npcworld.llm.prompts import Message
from npcworld.llm.types import Outcome

__all__ = ["BudgetUsage", "CallRecord", "LLMCallRepository", "Recording"]

_TENANT_ROW = ""  # llm_budgets.world_id of a tenant's own row
_INSERT_CALL = """
INSERT INTO llm_calls (tenant_id, world_id, npc_id, prompt_kind, template_version, request_hash, model,
                       provider, parameters, request, response, response_text, tokens_in, tokens_out,
                       latency_ms, attempts, outcome, error, cause_event_id, inputs, prompt_chars)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
RETURNING id
"""
_CHARGE = """
INSERT INTO llm_budgets (tenant_id, world_id, used_tokens) VALUES (%s, %s, %s), (%s, %s, %s)
ON CONFLICT (tenant_id, world_id) DO UPDATE
SET used_tokens = llm_budgets.used_tokens + EXCLUDED.used_tokens, updated_at = now()
"""
_MARK_FALLBACK = """
INSERT INTO llm_budgets (tenant_id, world_id, fallback_since) VALUES (%s, %s, now())
ON CONFLICT (tenant_id, world_id) DO UPDATE SET fallback_since = now(), updated_at = now()
WHERE llm_budgets.fallback_since IS NULL
RETURNING 1
"""
# The first answer with a usable response; later replays (outcome 'replayed') never shadow it.
_FIND_RECORDING = """
SELECT response, provider, model FROM llm_calls
WHERE for_request(tenant_id, request_hash, %s, %s) AND outcome IN ('ok', 'budget_fallback', 'outage_fallback')
ORDER BY id LIMIT 1
"""


@dataclass(frozen=True)
class CallRecord:
    """One row of ``llm_calls``: a logical call with every attempt's tokens and its final outcome."""

    tenant_id: str
    world_id: str
    npc_id: str | None
    prompt_kind: str
    template_version: int
    request_hash: str
    model: str
    provider: str
    parameters: dict[str, Any]
    # The rendered messages; None when ``inputs`` render them again (npcworld.llm.prompts.render_recorded).
    request: list[Message] | None
    response: dict[str, Any] | None
    response_text: str | None
    outcome: Outcome
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0
    attempts: int = 0
    error: str | None = None
    # The event being handled when the call was made (npcworld.cause), None outside any handling.
    cause_event_id: uuid.UUID | None = None
    # The template's validated inputs (what a re-run renders the prompt from); None: not known.
    inputs: dict[str, Any] | None = None
    # Characters of the rendered prompt: what token use is estimated from when the provider counts none.
    prompt_chars: int | None = None


@dataclass(frozen=True)
class Recording:
    """A recorded answer found for a request hash."""

    response: dict[str, Any]
    provider: str
    model: str


@dataclass(frozen=True)
class BudgetUsage:
    """Tokens used and explicit limits (None = the deployment default) of a tenant and one of its worlds."""

    tenant_used: int = 0
    tenant_limit: int | None = None
    world_used: int = 0
    world_limit: int | None = None
    fallback_since: datetime | None = None


def _params(r: CallRecord) -> tuple[Any, ...]:
    return (
        r.tenant_id,
        r.world_id,
        r.npc_id,
        r.prompt_kind,
        r.template_version,
        r.request_hash,
        r.model,
        r.provider,
        Jsonb(r.parameters),
        None if r.request is None else Jsonb(r.request),
        None if r.response is None else Jsonb(r.response),
        r.response_text,
        r.tokens_in,
        r.tokens_out,
        r.latency_ms,
        r.attempts,
        r.outcome,
        r.error,
        r.cause_event_id,
        None if r.inputs is None else Jsonb(r.inputs),
        r.prompt_chars,
    )


class LLMCallRepository:
    """Call records and budgets in PostgreSQL. Each method commits on its own: a call record must
    survive even when the caller's own transaction rolls back (the tokens were spent)."""

    def __init__(self, pool: AsyncConnectionPool, store: EventStore | None = None) -> None:
        self._pool = pool
        self._store = store or EventStore()

    async def add(self, record: CallRecord) -> int:
        """Record a call and charge its tokens to the tenant's and the world's budgets."""
        async with self._pool.connection() as conn, conn.transaction():
            cur = await conn.execute(_INSERT_CALL, _params(record))
            row = await cur.fetchone()
            tokens = record.tokens_in + record.tokens_out
            if tokens:
                await conn.execute(
                    _CHARGE,
                    (record.tenant_id, _TENANT_ROW, tokens, record.tenant_id, record.world_id, tokens),
                )
            assert row is not None
            return int(row[0])

    async def add_fallback(self, record: CallRecord, event: Envelope) -> bool:
        """Record a budget-fallback call; append ``event`` if this is the world's first fallback.

        Returns:
            Whether the event was appended (exactly once per exhaustion, in the same transaction).
        """
        async with self._pool.connection() as conn, conn.transaction():
            await conn.execute(_INSERT_CALL, _params(record))
            cur = await conn.execute(_MARK_FALLBACK, (record.tenant_id, record.world_id))
            first = await cur.fetchone() is not None
            if first:
                await self._store.append(conn, f"llm-budget:{record.world_id}", [event])
            return first

    async def find_recording(self, tenant_id: str, request_hash: str) -> Recording | None:
        """The first usable recorded answer to this request of this tenant, if any."""
        async with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(_FIND_RECORDING, (tenant_id, request_hash))
            row = await cur.fetchone()
        return None if row is None else Recording(row["response"], row["provider"], row["model"])

    async def usage(self, tenant_id: str, world_id: str) -> BudgetUsage:
        """Token usage and explicit limits of a tenant and one of its worlds."""
        async with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                "SELECT world_id, limit_tokens, used_tokens, fallback_since FROM llm_budgets"
                " WHERE tenant_id = %s AND world_id IN (%s, %s)",
                (tenant_id, _TENANT_ROW, world_id),
            )
            rows = {r["world_id"]: r for r in await cur.fetchall()}
        tenant, world = rows.get(_TENANT_ROW, {}), rows.get(world_id, {})
        return BudgetUsage(
            tenant_used=int(tenant.get("used_tokens", 0)),
            tenant_limit=tenant.get("limit_tokens"),
            world_used=int(world.get("used_tokens", 0)),
            world_limit=world.get("limit_tokens"),
            fallback_since=world.get("fallback_since"),
        )

    async def set_limit(self, tenant_id: str, world_id: str | None, limit_tokens: int | None) -> None:
        """Set (or with None, clear to the default) a tenant's or world's token limit. Worlds that were
        falling back will try the provider again and report a new exhaustion."""
        async with self._pool.connection() as conn, conn.transaction():
            await conn.execute(
                "INSERT INTO llm_budgets (tenant_id, world_id, limit_tokens) VALUES (%s, %s, %s)"
                " ON CONFLICT (tenant_id, world_id) DO UPDATE SET limit_tokens = EXCLUDED.limit_tokens,"
                " updated_at = now()",
                (tenant_id, world_id or _TENANT_ROW, limit_tokens),
            )
            await self._clear_fallback(conn, tenant_id, world_id)

    async def reset_usage(self, tenant_id: str, world_id: str | None) -> None:
        """Zero the used tokens of a tenant (all its rows) or of one world, e.g. at a billing period."""
        async with self._pool.connection() as conn, conn.transaction():
            if world_id is None:
                await conn.execute(
                    "UPDATE llm_budgets SET used_tokens = 0 WHERE tenant_id = %s", (tenant_id,)
                )
            else:
                await conn.execute(
                    "UPDATE llm_budgets SET used_tokens = 0 WHERE tenant_id = %s AND world_id = %s",
                    (tenant_id, world_id),
                )
            await self._clear_fallback(conn, tenant_id, world_id)

    async def _clear_fallback(self, conn: Any, tenant_id: str, world_id: str | None) -> None:
        await conn.execute(
            "UPDATE llm_budgets SET fallback_since = NULL"
            " WHERE tenant_id = %s AND (%s::text IS NULL OR world_id = %s)",
            (tenant_id, world_id, world_id),
        )
