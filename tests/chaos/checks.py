"""What must hold once a faulted town is quiet again: nothing owed, dead-lettered, doubled or lost.

Each check returns what it found wrong, as lines a person can read (empty: it holds).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import psycopg

from npcworld.db import open_pool
from npcworld.messaging.heartbeat import owed_sql
from npcworld.projection import differences
from npcworld.shredding import reveal_sync
from tests.e2e.receiver import Receiver
from tests.integration.replay.town import projections

Conn = psycopg.Connection[Any]


def owed(conn: Conn) -> list[str]:
    """Events some consumer (alive at any time in the last hour) has neither processed nor dead-lettered."""
    rows = conn.execute(
        f"WITH {owed_sql()} SELECT consumer, count(*) FROM owed GROUP BY consumer ORDER BY consumer",
        {"since": 0, "until": 2**62, "alive": 3600},
    ).fetchall()
    return [f"{consumer} owes {count} events" for consumer, count in rows]


def dead_letters(conn: Conn) -> list[str]:
    rows = conn.execute(
        "SELECT consumer, event_type, reason FROM dead_letters ORDER BY id LIMIT 20").fetchall()
    return [f"dead letter: {consumer} {event_type}: {reason[:200]}" for consumer, event_type, reason in rows]


def doubled_memories(conn: Conn) -> list[str]:
    """The same memory written twice for one NPC from one event (an effect applied twice)."""
    rows = conn.execute(
        "SELECT n.npc_id, m.kind, m.description, count(*)"
        " FROM memories AS m JOIN memory_npcs AS n USING (npc_key)"
        " GROUP BY n.npc_id, m.source_event_id, m.kind, m.description HAVING count(*) > 1 LIMIT 20"
    ).fetchall()
    return [f"memory of {npc} written {n} times: {kind} {text[:80]!r}" for npc, kind, text, n in rows]


def doubled_reactions(conn: Conn) -> list[str]:
    """Two identical events caused by the same event (a reaction that ran twice)."""
    rows = conn.execute(
        "SELECT type, npc_id, causation_id, count(*) FROM events WHERE causation_id IS NOT NULL"
        " GROUP BY type, npc_id, causation_id, md5(payload::text) HAVING count(*) > 1 LIMIT 20"
    ).fetchall()
    return [f"{type_} for {npc} caused by {cause} appended {n} times" for type_, npc, cause, n in rows]


def doubled_webhooks(receiver: Receiver) -> list[str]:
    """Deliveries the receiver acknowledged more than once for the same event."""
    with receiver.lock:
        acked = Counter(r.headers.get("Npcworld-Event-Id", "")
                        for r in receiver.received if r.answered == 200)
    return [f"webhook for event {event_id} delivered {n} times" for event_id, n in acked.items() if n > 1]


def requests_without_exactly_one_event(conn: Conn, tokens: list[str]) -> list[str]:
    """Every accepted client request (its unique token in the text) left exactly one event. A chat's text
    is stored sealed (npcworld.shredding), so it is opened before it is searched."""
    rows = conn.execute("SELECT type, payload FROM events WHERE type IN ('ObservationMade', 'PlayerSpoke')"
                        ).fetchall()
    reveal_sync(conn, rows)
    texts = [str(p.get("description") or p.get("text") or "") for _, p in rows]
    counts = {token: sum(token in t for t in texts) for token in tokens}
    return [f"request {token} left {n} events" for token, n in counts.items() if n != 1]


def read_models_differing(database_url: str) -> list[str]:
    """Every service's read model rebuilt from the event store (in a transaction rolled back) and compared
    with the live one, row for row, as ``npcworld replay --check`` does."""

    async def compare() -> list[str]:
        pool = await open_pool(database_url, min_size=1, max_size=2, name="chaos-checks")
        try:
            return [f"{service} rebuilt differs: {line}" for service, projection in projections().items()
                    for line in await differences(pool, projection, limit=5)]
        finally:
            await pool.close()

    return asyncio.run(compare())


def all_checks(conn: Conn, receiver: Receiver, tokens: list[str], database_url: str) -> list[str]:
    problems = [*owed(conn), *dead_letters(conn), *doubled_memories(conn), *doubled_reactions(conn),
                *doubled_webhooks(receiver), *requests_without_exactly_one_event(conn, tokens)]
    conn.commit()  # the rebuild locks the read models: this connection's read must not hold them
    return problems + read_models_differing(database_url)
