"""All SQL of the dialogue service: NPC personas, known places, conversations and relationships."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from npcworld.canon import canon_of
from npcworld.contracts import Commitment
from npcworld.shredding import forgotten_among
from npcworld.stepping import SteppedWorlds
from services.dialogue.domain import Conversation, Line, Relationship

__all__ = ["Conn", "DialogueRepository", "NpcProfile"]

Conn = AsyncConnection[Any]
_WORLD = "tenant_id = %(t)s AND world_id = %(w)s"
_STEPPED = SteppedWorlds("dialogue_clocks")
MAX_INTENTIONS = 3


@dataclass(frozen=True)
class NpcProfile:
    """Who an NPC is, as dialogue prompts need it."""

    npc_id: str
    name: str
    persona: str = ""
    intentions: tuple[str, ...] = ()
    canon: tuple[str, ...] = ()  # designer canon the NPC holds true (the world's, then its own)


def _line(data: dict[str, Any]) -> Line:
    commitment = data.get("commitment")
    return Line(
        data["speaker"],
        data["text"],
        int(data.get("warmth", 0)),
        Commitment.model_validate(commitment) if commitment else None,
    )


def _line_json(line: Line) -> dict[str, Any]:
    return {
        "speaker": line.speaker,
        "text": line.text,
        "warmth": line.warmth,
        "commitment": line.commitment.model_dump(mode="json") if line.commitment else None,
    }


def _conversation(row: dict[str, Any]) -> Conversation:
    lines = row["lines"] if isinstance(row["lines"], list) else json.loads(row["lines"])
    return Conversation(
        row["conversation_id"],
        row["initiator"],
        row["target"],
        row["started_at"],
        row["location_path"],
        row["reason"],
        tuple(_line(x) for x in lines),
        row["ended_at"],
        row["ended_by"],
    )


class DialogueRepository:
    """Stateless; every method runs on the caller's connection (and transaction)."""

    async def save_npc(self, conn: Conn, tenant: str, world: str, profile: NpcProfile) -> None:
        await conn.execute(
            """INSERT INTO dialogue_npcs (tenant_id, world_id, npc_id, name, persona)
                VALUES (%s, %s, %s, %s, %s) ON CONFLICT (tenant_id, world_id, npc_id)
               DO UPDATE SET name = excluded.name, persona = excluded.persona""",
            (tenant, world, profile.npc_id, profile.name, profile.persona),
        )

    async def profile(self, conn: Conn, tenant: str, world: str, npc_id: str) -> NpcProfile:
        """The NPC's profile, with the canon it holds true; an NPC the service has not heard of yet is known
        by its id."""
        cur = await conn.execute(
            f"SELECT name, persona, intentions FROM dialogue_npcs WHERE {_WORLD} AND npc_id = %(n)s",
            {"t": tenant, "w": world, "n": npc_id},
        )
        row = await cur.fetchone()
        canon = await canon_of(conn, tenant, world, npc_id)
        if row is None:
            return NpcProfile(npc_id, npc_id, canon=canon)
        return NpcProfile(npc_id, row[0], row[1], tuple(row[2]), canon)

    async def add_intention(self, conn: Conn, tenant: str, world: str, npc_id: str, text: str) -> None:
        """Keep the NPC's newest intentions (at most ``MAX_INTENTIONS``), this one last."""
        await conn.execute(
            f"""INSERT INTO dialogue_npcs (tenant_id, world_id, npc_id, name, intentions)
                VALUES (%(t)s, %(w)s, %(n)s, %(n)s, ARRAY[%(x)s]) ON CONFLICT (tenant_id, world_id, npc_id)
                DO UPDATE SET intentions = (dialogue_npcs.intentions || %(x)s)[
                    greatest(1, cardinality(dialogue_npcs.intentions) + 2 - {MAX_INTENTIONS}):]""",
            {"t": tenant, "w": world, "n": npc_id, "x": text},
        )

    async def retire(self, conn: Conn, tenant: str, world: str, npc_id: str) -> None:
        await conn.execute(
            """INSERT INTO dialogue_npcs (tenant_id, world_id, npc_id, name, retired)
               VALUES (%s, %s, %s, %s, true) ON CONFLICT (tenant_id, world_id, npc_id)
               DO UPDATE SET retired = true""",
            (tenant, world, npc_id, npc_id),
        )

    async def any_retired(self, conn: Conn, tenant: str, world: str, npc_ids: Sequence[str]) -> bool:
        cur = await conn.execute(
            f"SELECT EXISTS (SELECT 1 FROM dialogue_npcs WHERE {_WORLD} AND npc_id = ANY(%(n)s) AND retired)",
            {"t": tenant, "w": world, "n": list(npc_ids)},
        )
        row = await cur.fetchone()
        return bool(row and row[0])

    async def add_places(
        self, conn: Conn, tenant: str, world: str, npc_id: str, paths: Sequence[str]
    ) -> None:
        await conn.execute(
            """INSERT INTO dialogue_places (tenant_id, world_id, npc_id, path)
               SELECT %s, %s, %s, unnest(%s::text[]) ON CONFLICT DO NOTHING""",
            (tenant, world, npc_id, list(paths)),
        )

    async def known_places(self, conn: Conn, tenant: str, world: str, npc_id: str) -> list[str]:
        cur = await conn.execute(
            f"SELECT path FROM dialogue_places WHERE {_WORLD} AND npc_id = %(n)s ORDER BY path",
            {"t": tenant, "w": world, "n": npc_id},
        )
        return [r[0] for r in await cur.fetchall()]

    async def add_conversation(self, conn: Conn, tenant: str, world: str, c: Conversation) -> None:
        await conn.execute(
            """INSERT INTO dialogue_conversations (conversation_id, tenant_id, world_id, initiator, target,
                   location_path, reason, started_at, lines)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)""",
            (
                c.conversation_id,
                tenant,
                world,
                c.initiator,
                c.target,
                c.location_path,
                c.reason,
                c.started_at,
                Jsonb([_line_json(x) for x in c.lines]),
            ),
        )

    async def save_conversation(self, conn: Conn, c: Conversation) -> None:
        """Store the transcript and end of an existing conversation."""
        await conn.execute(
            """UPDATE dialogue_conversations SET lines = %s, ended_at = %s, ended_by = %s
               WHERE conversation_id = %s""",
            (Jsonb([_line_json(x) for x in c.lines]), c.ended_at, c.ended_by, c.conversation_id),
        )

    async def get_conversation(
        self, conn: Conn, tenant: str, world: str, conversation_id: str
    ) -> Conversation | None:
        """The conversation (its row locked for this transaction), or None."""
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                f"SELECT * FROM dialogue_conversations WHERE {_WORLD} AND conversation_id = %(c)s FOR UPDATE",
                {"t": tenant, "w": world, "c": conversation_id},
            )
            row = await cur.fetchone()
        return _conversation(row) if row else None

    async def open_conversations(
        self, conn: Conn, tenant: str, world: str, npc_ids: Sequence[str]
    ) -> tuple[Conversation, ...]:
        """Conversations not ended that any of ``npc_ids`` takes part in."""
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                f"""SELECT * FROM dialogue_conversations WHERE {_WORLD} AND ended_at IS NULL
                    AND (initiator = ANY(%(n)s) OR target = ANY(%(n)s))""",
                {"t": tenant, "w": world, "n": list(npc_ids)},
            )
            rows = await cur.fetchall()
        return tuple(_conversation(r) for r in rows)

    async def commitments_of(
        self, conn: Conn, tenant: str, world: str, npc_id: str, now: datetime
    ) -> list[Commitment]:
        """What ``npc_id`` agreed to in the last two weeks of conversations, starting at ``now`` or later."""
        cur = await conn.execute(
            f"""SELECT lines FROM dialogue_conversations WHERE {_WORLD}
                AND (initiator = %(n)s OR target = %(n)s) AND started_at >= %(since)s
                ORDER BY started_at, conversation_id""",
            {"t": tenant, "w": world, "n": npc_id, "since": now - timedelta(days=14)},
        )
        agreed: list[Commitment] = []
        for (lines,) in await cur.fetchall():
            for data in lines if isinstance(lines, list) else json.loads(lines):
                c = _line(data).commitment
                if c is not None and c.npc_id == npc_id and c.start is not None and c.start >= now:
                    agreed.append(c)
        return agreed

    async def last_ended(self, conn: Conn, tenant: str, world: str, pair: tuple[str, str]) -> datetime | None:
        """When the pair's most recent conversation ended (world time)."""
        cur = await conn.execute(
            f"""SELECT max(ended_at) FROM dialogue_conversations WHERE {_WORLD}
                AND ((initiator = %(a)s AND target = %(b)s) OR (initiator = %(b)s AND target = %(a)s))""",
            {"t": tenant, "w": world, "a": pair[0], "b": pair[1]},
        )
        row = await cur.fetchone()
        return row[0] if row else None

    async def relationship(
        self, conn: Conn, tenant: str, world: str, npc_id: str, other_id: str
    ) -> Relationship:
        """How ``npc_id`` regards ``other_id`` (neutral strangers when they never talked)."""
        cur = await conn.execute(
            f"""SELECT familiarity, sentiment, summary FROM dialogue_relationships
                WHERE {_WORLD} AND npc_id = %(n)s AND other_id = %(o)s""",
            {"t": tenant, "w": world, "n": npc_id, "o": other_id},
        )
        row = await cur.fetchone()
        return (
            Relationship(npc_id, other_id, row[0], row[1], row[2]) if row else Relationship(npc_id, other_id)
        )

    async def save_relationship(
        self, conn: Conn, tenant: str, world: str, rel: Relationship, at: datetime
    ) -> None:
        await conn.execute(
            """INSERT INTO dialogue_relationships
                   (tenant_id, world_id, npc_id, other_id, familiarity, sentiment, summary, last_talked)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, world_id, npc_id, other_id)
               DO UPDATE SET familiarity = excluded.familiarity, sentiment = excluded.sentiment,
                   summary = excluded.summary, last_talked = excluded.last_talked""",
            (tenant, world, rel.npc_id, rel.other_id, rel.familiarity, rel.sentiment, rel.summary, at),
        )

    async def player_forgotten(self, conn: Conn, tenant: str, player_id: str) -> bool:
        """Whether the tenant has forgotten the player (npcworld.shredding's tombstones)."""
        return bool(await forgotten_among(conn, tenant, [player_id]))

    async def delete_relationships(self, conn: Conn, tenant: str, world: str, other_id: str) -> None:
        """Every NPC of the world forgets ``other_id`` (a forgotten player)."""
        await conn.execute(
            f"DELETE FROM dialogue_relationships WHERE {_WORLD} AND other_id = %(o)s",
            {"t": tenant, "w": world, "o": other_id},
        )

    async def set_stepped(self, conn: Conn, tenant: str, world: str, stepped: bool) -> None:
        await _STEPPED.set(conn, tenant, world, stepped)

    async def is_stepped(self, conn: Conn, tenant: str, world: str) -> bool:
        return await _STEPPED.get(conn, tenant, world)

    async def queue_request(self, conn: Conn, event_id: Any, tenant: str, world: str, when: datetime,
                            initiator: str, target: str, envelope: str) -> None:
        await conn.execute(
            "INSERT INTO dialogue_requests"
            " (event_id, tenant_id, world_id, world_time, initiator, target, envelope)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb) ON CONFLICT DO NOTHING",
            (event_id, tenant, world, when, initiator, target, envelope),
        )

    async def take_requests(self, conn: Conn, tenant: str, world: str, before: datetime | None) -> list[Any]:
        """Remove and return the queued request envelopes (JSON) of earlier steps, in a fixed order."""
        cur = await conn.execute(
            f"DELETE FROM dialogue_requests WHERE {_WORLD}"
            " AND (%(b)s::timestamptz IS NULL OR world_time < %(b)s)"
            " RETURNING world_time, initiator, target, envelope",
            {"t": tenant, "w": world, "b": before},
        )
        return [row[3] for row in sorted(await cur.fetchall(), key=lambda r: (r[0], r[1], r[2]))]

    async def peek_requests(self, conn: Conn, tenant: str, world: str, before: datetime | None) -> list[Any]:
        """The requests ``take_requests`` would take now, in its order, leaving them queued."""
        cur = await conn.execute(
            f"SELECT world_time, initiator, target, envelope FROM dialogue_requests WHERE {_WORLD}"
            " AND (%(b)s::timestamptz IS NULL OR world_time < %(b)s)",
            {"t": tenant, "w": world, "b": before},
        )
        return [row[3] for row in sorted(await cur.fetchall(), key=lambda r: (r[0], r[1], r[2]))]

    async def delete_world(self, conn: Conn, tenant: str, world: str) -> None:
        for table in ("dialogue_npcs", "dialogue_places", "dialogue_conversations", "dialogue_relationships",
                      "dialogue_clocks", "dialogue_requests"):
            await conn.execute(f"DELETE FROM {table} WHERE {_WORLD}", {"t": tenant, "w": world})
