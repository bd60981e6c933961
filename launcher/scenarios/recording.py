"""Recorded LLM calls of a scenario, in a JSON Lines file next to it (``<scenario>.llm.jsonl``).

Recording saves every answered call a scenario's tenant made (``llm_calls``, outcome ``ok`` or an offline
fallback), one per request hash, sorted so that the same run writes the same file. Replaying loads them as
the calls of a fresh tenant; the services then run with ``LLM_MODE=replay`` and answer by request hash
(docs/llm.md, "Replay"): a call the recording lacks is ``ReplayMissingError``, a dead letter naming the
prompt and hash, which the run reports at the step that caused it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

__all__ = ["load_recording", "recording_path", "save_recording"]

_USABLE = ("ok", "budget_fallback", "outage_fallback")
_FIELDS = ("npc_id", "prompt_kind", "template_version", "request_hash", "model", "provider", "outcome",
           "parameters", "request", "response")


def recording_path(scenario: Path) -> Path:
    """``scenarios/fire.yaml`` → ``scenarios/fire.llm.jsonl``."""
    return scenario.with_name(scenario.stem + ".llm.jsonl")


async def save_recording(pool: AsyncConnectionPool, tenant_id: str, path: Path) -> int:
    """Write the tenant's answered calls to ``path``; how many were written."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT DISTINCT ON (request_hash) {', '.join(_FIELDS)} FROM llm_calls"
            " WHERE tenant_id = %s AND outcome = ANY(%s) ORDER BY request_hash, id",
            (tenant_id, list(_USABLE)))
        rows = [dict(zip(_FIELDS, row, strict=True)) for row in await cur.fetchall()]
    rows.sort(key=lambda r: (r["npc_id"] or "", r["prompt_kind"], r["request_hash"]))
    path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows))
    return len(rows)


def read_recording(path: Path) -> list[dict[str, Any]]:
    """The calls in ``path``.

    Raises:
        ValueError: a line is not a recorded call (naming the file and line).
    """
    calls = []
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            call = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{n}: not JSON: {exc.msg}") from exc
        missing = [f for f in _FIELDS if f not in call] if isinstance(call, dict) else list(_FIELDS)
        if missing or call["outcome"] not in _USABLE or not isinstance(call["response"], dict):
            lacks = ", ".join(missing) or "a response"
            raise ValueError(f"{path}:{n}: not a recorded call (missing {lacks})")
        calls.append(call)
    return calls


async def load_recording(pool: AsyncConnectionPool, tenant_id: str, world_id: str, path: Path) -> int:
    """Store the calls of ``path`` as the tenant's, for replay; how many."""
    calls = read_recording(path)
    async with pool.connection() as conn, conn.transaction():
        for c in calls:
            await conn.execute(
                "INSERT INTO llm_calls (tenant_id, world_id, npc_id, prompt_kind, template_version,"
                " request_hash, model, provider, parameters, request, response, outcome)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (tenant_id, world_id, c["npc_id"], c["prompt_kind"], c["template_version"], c["request_hash"],
                 c["model"], c["provider"], Jsonb(c["parameters"]), Jsonb(c["request"]), Jsonb(c["response"]),
                 c["outcome"]))
    return len(calls)
