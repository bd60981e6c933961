"""Hallucinated gossip: claims a conversation line quotes from someone that the speaker had no memory of."""

from __future__ import annotations

import re
from typing import Any

from psycopg import AsyncConnection

__all__ = ["gossip_provenance"]

_QUOTED = re.compile(r'(?:told me|said): "([^"]+)"')


async def gossip_provenance(conn: AsyncConnection[Any], world: str) -> dict[str, Any]:
    """Quoted claims in conversation lines (``X told me: "…"``, ``… said: "…"``), and those the speaker had
    no memory of when it spoke: every such claim must be in a memory the speaker had then."""
    cur = await conn.execute(
        "SELECT npc_id, world_time, payload->>'text' FROM events"
        " WHERE type = 'UtteranceSpoken' AND world_id = %s ORDER BY seq",
        (world,),
    )
    lines = await cur.fetchall()
    claims = unsourced = 0
    examples: list[str] = []
    for npc, at, text in lines:
        for claim in _QUOTED.findall(text or ""):
            claims += 1
            core = claim.strip().rstrip(".")
            found = await conn.execute(
                "SELECT count(*) FROM memories AS m JOIN memory_npcs AS n USING (npc_key)"
                " WHERE n.world_id = %s AND n.npc_id = %s AND m.created_at <= %s"
                " AND position(%s in m.description) > 0",
                (world, npc, at, core),
            )
            row = await found.fetchone()
            if not row or not row[0]:
                unsourced += 1
                examples.append(f"{npc} at {at:%d %b %H:%M}: {core[:120]}")
    return {
        "lines": len(lines),
        "quoted_claims": claims,
        "without_a_memory": unsourced,
        "examples": examples[:5],
    }
