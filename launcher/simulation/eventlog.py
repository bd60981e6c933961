"""Facts for the report, read from a world's event log and the recorded LLM calls."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from psycopg import AsyncConnection

from launcher.simulation.metrics import Conversation, LlmCall, Sighting
from launcher.simulation.report import WorldFacts

__all__ = ["read_facts"]

_TYPES = (
    "NpcCreated",
    "NpcsMoved",
    "ConversationEnded",
    "UtteranceSpoken",
    "RelationshipChanged",
    "WorldTicked",
)


async def read_facts(conn: AsyncConnection[Any], tenant_id: str, world_id: str) -> WorldFacts:
    """Everything the metrics need, in event-store order (payloads read as JSON, not re-validated)."""
    facts = WorldFacts(world_id=world_id, names={}, seeds={})
    utterances: dict[str, list[str]] = defaultdict(list)
    ended: list[tuple[Any, dict[str, Any]]] = []
    cur = await conn.execute(
        "SELECT type, npc_id, world_time, payload FROM events WHERE in_world(tenant_id, world_id, %s, %s)"
        " AND type = ANY(%s) ORDER BY seq",
        (tenant_id, world_id, list(_TYPES)),
    )
    async for kind, npc_id, when, p in cur:
        if kind == "NpcCreated":
            facts.names[p["npc_id"]], facts.seeds[p["npc_id"]] = p["name"], p.get("seed", "")
            if p.get("location"):
                facts.sightings.append(Sighting(when, p["npc_id"], p["location"]))
        elif kind == "NpcsMoved":
            facts.sightings += [Sighting(when, m["npc_id"], m["path"]) for m in p["moves"]]
        elif kind == "UtteranceSpoken":
            utterances[p["conversation_id"]].append(p["text"])
        elif kind == "ConversationEnded":
            ended.append((when, p))
        elif kind == "RelationshipChanged" and npc_id and p.get("familiarity", 0) >= 1 \
                and not str(p["other_id"]).startswith("player:"):  # the town's network is among NPCs
            facts.relationships.add((npc_id, p["other_id"]))
        elif kind == "WorldTicked":
            facts.steps = max(facts.steps, p["step"])
            facts.world_end = when
    facts.conversations = [
        Conversation(
            when,
            tuple(p["participants"]),
            " ".join([p.get("summary", ""), *utterances[p["conversation_id"]]]),
        )
        for when, p in ended
    ]
    cur = await conn.execute("SELECT start_time FROM ws_worlds WHERE world_id = %s", (world_id,))
    row = await cur.fetchone()
    facts.world_start = row[0] if row else None
    cur = await conn.execute(
        "SELECT npc_id, prompt_kind, tokens_in, tokens_out, coalesce(prompt_chars, 0) FROM llm_calls"
        " WHERE tenant_id = %s AND world_id = %s"
        " ORDER BY id",
        (tenant_id, world_id),
    )
    facts.llm_calls = [LlmCall(r[0], r[1], r[2], r[3], r[4]) for r in await cur.fetchall()]
    cur = await conn.execute(
        "SELECT type, count(*) FROM events WHERE in_world(tenant_id, world_id, %s, %s) GROUP BY type",
        (tenant_id, world_id),
    )
    facts.event_counts = {r[0]: int(r[1]) for r in await cur.fetchall()}
    return facts
