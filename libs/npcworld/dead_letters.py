"""``npcworld dlq list|redrive``: the events a consumer gave up on, and sending one back to it.

A consumer dead-letters an event it cannot process (``dead_letters``) and claims it, so nothing waits for
it. Redriving takes the claim and the dead letter back and puts the stored event into the outbox again, in
one transaction: the relay publishes it once more, every other consumer skips it (they processed it), and
the one that gave up handles it as new — after the fix for whatever made it fail was deployed. A message
that was not an event at all (undecodable, no event id) cannot be redriven; only listed.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from npcworld.contracts import EVENT_TYPES

__all__ = ["DeadLetter", "dead_letters", "redrive"]


@dataclass(frozen=True)
class DeadLetter:
    id: int
    consumer: str
    event_id: uuid.UUID | None
    event_type: str | None
    topic: str
    reason: str
    created_at: datetime


def dead_letters(
    conn: psycopg.Connection[Any], consumer: str | None = None, limit: int = 100
) -> list[DeadLetter]:
    """Dead letters, newest first (``consumer``: only that one's)."""
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            "SELECT id, consumer, event_id, event_type, topic, reason, created_at FROM dead_letters"
            " WHERE %(c)s::text IS NULL OR consumer = %(c)s ORDER BY id DESC LIMIT %(n)s",
            {"c": consumer, "n": limit},
        ).fetchall()
    return [DeadLetter(**row) for row in rows]


def redrive(conn: psycopg.Connection[Any], ids: list[int]) -> list[DeadLetter]:
    """Send these dead letters back to their consumers; returns the ones sent (one transaction).

    Raises:
        ValueError: an id is unknown, or names a message that was not an event.
    """
    with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            "SELECT d.id, d.consumer, d.event_id, d.event_type, d.topic, d.reason, d.created_at, e.seq,"
            " e.type AS stored_type, e.world_id, e.npc_id"
            " FROM dead_letters d LEFT JOIN events e ON e.event_id = d.event_id"
            " WHERE d.id = ANY(%s) ORDER BY d.id FOR UPDATE OF d",
            (ids,),
        ).fetchall()
        missing = sorted(set(ids) - {r["id"] for r in rows})
        if missing:
            raise ValueError(f"no dead letter {', '.join(map(str, missing))}")
        broken = [r["id"] for r in rows if r["seq"] is None]
        if broken:
            raise ValueError(f"dead letter {', '.join(map(str, broken))} is not a stored event (only listed)")
        for r in rows:
            cur.execute("DELETE FROM processed_events WHERE consumer = %s AND event_id = %s",
                        (r["consumer"], r["event_id"]))
            cur.execute("DELETE FROM dead_letters WHERE id = %s", (r["id"],))
        again = {r["seq"]: _route(r) for r in rows}
        cur.executemany(
            "INSERT INTO outbox (seq, topic, key) VALUES (%s, %s, %s) ON CONFLICT (seq) DO NOTHING",
            [(seq, topic, key) for seq, (topic, key) in sorted(again.items())],
        )
    return [DeadLetter(**{k: r[k] for k in _FIELDS}) for r in rows]


_FIELDS = ("id", "consumer", "event_id", "event_type", "topic", "reason", "created_at")


def _route(row: dict[str, Any]) -> tuple[str, str | None]:
    """The topic and partition key the relay published the stored event with (the topic catalogue's)."""
    topic = EVENT_TYPES[row["stored_type"]].topic
    key = {"npc_id": row["npc_id"], "world_id": row["world_id"]}.get(topic.key)
    return topic.name, key
