"""Forgetting a player: erase its data key (npcworld.shredding) and redact the shared records of its chats.

Run in the caller's transaction (the gateway's ``DELETE /v1/players/{player_id}``), which then appends one
``PlayerForgotten`` per world the player talked in; each service drops what it holds of the player when
that event reaches it. The shared core's records are redacted here at once: the model calls made while the
player's chats were handled, and any other model call of the tenant whose prompt quotes one of the player's
lines word for word (a memory of the line retrieved for another player's chat); the streamed pieces of the
replies and the dead letters of the player's events are deleted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from npcworld.shredding import FORGOTTEN, delete_key, reveal

__all__ = ["Forgetting", "forget_player_data", "players_forgotten_in"]

# The events of the player's chats (each one's handling is the cause of its model calls and reply pieces).
_CHAT_EVENTS = """
SELECT event_id FROM events WHERE tenant_id = %(t)s AND type IN ('PlayerSpoke', 'NpcReplied')
  AND payload->>'player_id' = %(p)s
"""
# Worlds the player talked in (or whose inherited history it talked in) that have not had it forgotten yet
# (nor were deleted), with each one's latest world time (a world's own events are its latest).
_WORLDS = """
SELECT s.world_id,
       (SELECT max(world_time) FROM events a WHERE in_world(a.tenant_id, a.world_id, %(t)s, s.world_id))
FROM (SELECT world_id FROM events WHERE tenant_id = %(t)s AND type = 'PlayerSpoke'
        AND payload->>'player_id' = %(p)s
      UNION  -- forks that inherit the player's words
      SELECT l.world_id FROM world_lineage l
        JOIN events e ON in_world(e.tenant_id, e.world_id, l.tenant_id, l.ancestor)
       WHERE l.tenant_id = %(t)s AND e.type = 'PlayerSpoke' AND e.payload->>'player_id' = %(p)s
         AND e.seq <= l.until_seq AND e.world_time <= l.until_time) s
WHERE NOT EXISTS (SELECT 1 FROM world_events(%(t)s, s.world_id) f
                  WHERE (f.type = 'WorldDeleted'
                       OR (f.type = 'PlayerForgotten' AND f.payload->>'player_id' = %(p)s)))
ORDER BY s.world_id
"""
# The call stays (its tokens count toward usage) without anything the player said or the model answered;
# its request hash goes too, so a replay never serves the redacted answer.
_REDACT_CALLS = f"""
UPDATE llm_calls SET request = '[]'::jsonb, response_text = NULL, inputs = NULL,
       response = CASE WHEN response IS NULL THEN NULL ELSE '{{"forgotten": true}}'::jsonb END,
       request_hash = 'forgotten'
WHERE tenant_id = %(t)s AND request_hash <> 'forgotten' AND (cause_event_id IN ({_CHAT_EVENTS})
  OR EXISTS (SELECT 1 FROM unnest(%(lines)s::text[]) n(line)
             WHERE strpos(request::text, n.line) > 0 OR strpos(coalesce(inputs::text, ''), n.line) > 0
                OR strpos(coalesce(response_text, ''), n.line) > 0))
"""
# Lines shorter than this are not looked for in other calls' prompts ("hi" is everyone's).
_QUOTED_MIN = 12
_DROP_CHUNKS = f"DELETE FROM llm_reply_chunks WHERE tenant_id = %(t)s AND cause_id IN ({_CHAT_EVENTS})"
# Every event holding the player's words (npcworld.shredding.fields): a dead letter keeps the message as it
# was published, opened, so the player's dead letters go.
_DROP_DEAD_LETTERS = f"""
DELETE FROM dead_letters WHERE event_id IN (
  SELECT event_id FROM events WHERE tenant_id = %(t)s AND (
    (type IN ('PlayerSpoke', 'NpcReplied') AND payload->>'player_id' = %(p)s)
    OR (type = 'RelationshipChanged' AND payload->>'other_id' = 'player:' || %(p)s)
    OR (type = 'MemoryRecorded' AND (payload->>'subject' = 'player ' || %(p)s
                                     OR payload->>'told_by' = 'player:' || %(p)s))
    OR (type = 'MemoriesAccessed' AND causation_id IN ({_CHAT_EVENTS}))))
"""


@dataclass(frozen=True)
class Forgetting:
    """What forgetting a player did: ``worlds`` still to be told (world id, its latest world time)."""

    first_time: bool
    worlds: list[tuple[str, datetime]]
    calls_redacted: int


async def forget_player_data(conn: AsyncConnection[Any], tenant_id: str, player_id: str) -> Forgetting:
    """Erase the player's key, leave its tombstone and redact its chats' model calls and reply pieces."""
    params: dict[str, Any] = {"t": tenant_id, "p": player_id}
    params["lines"] = await _lines(conn, params)  # read while the key exists
    first = await delete_key(conn, tenant_id, player_id)
    calls = await conn.execute(_REDACT_CALLS, params)
    await conn.execute(_DROP_CHUNKS, params)
    await conn.execute(_DROP_DEAD_LETTERS, params)
    cur = await conn.execute(_WORLDS, params)
    worlds = [(str(w), at) for w, at in await cur.fetchall()]
    return Forgetting(first, worlds, calls.rowcount)


async def _lines(conn: AsyncConnection[Any], params: dict[str, Any]) -> list[str]:
    """The player's lines as they appear inside stored JSON text (escaped as jsonb writes strings)."""
    cur = await conn.execute("SELECT payload FROM events WHERE tenant_id = %(t)s AND type = 'PlayerSpoke'"
                             " AND payload->>'player_id' = %(p)s", params)
    payloads = [row[0] for row in await cur.fetchall()]
    await reveal(conn, [("PlayerSpoke", p) for p in payloads])
    texts = {str(p["text"]) for p in payloads}
    texts = {t for t in texts if len(t) >= _QUOTED_MIN and t != FORGOTTEN}
    return sorted(json.dumps(t, ensure_ascii=False)[1:-1] for t in texts)


async def players_forgotten_in(conn: AsyncConnection[Any], tenant_id: str, world_id: str) -> list[str]:
    """The tenant's forgotten players who talked in the world and whom its log does not say so of yet (a
    fork copied from before the forgetting is told again)."""
    cur = await conn.execute(
        "SELECT f.player_id FROM forgotten_players f WHERE f.tenant_id = %(t)s AND EXISTS (SELECT 1 FROM"
        " world_events(%(t)s, %(w)s) e WHERE e.type = 'PlayerSpoke'"
        " AND e.payload->>'player_id' = f.player_id) AND NOT EXISTS (SELECT 1 FROM"
        " world_events(%(t)s, %(w)s) e WHERE e.type = 'PlayerForgotten'"
        " AND e.payload->>'player_id' = f.player_id) ORDER BY f.player_id",
        {"t": tenant_id, "w": world_id},
    )
    return [row[0] for row in await cur.fetchall()]
