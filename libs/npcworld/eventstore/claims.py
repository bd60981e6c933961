"""Consumers' claims: which stored events each consumer has processed, as rows and as a watermark.

A consumer claims an event (a ``processed_events`` row) in the transaction that applies it, which is what
makes its effects exactly-once. Rows would grow with the log (about 2.6 claims per event), so each
consumer's settled claims are folded into a watermark (``claim_watermarks``): an event is claimed by a
consumer when it has a row, or when its sequence number is at or below the consumer's watermark.

``fold`` moves a watermark only over events that are settled and claimed:

- **settled**: no transaction that could still commit an event at or below it is running. Sequence numbers
  are taken in insert order but committed in any order, so a fold remembers a candidate (the newest
  sequence number it saw and the snapshot's ``xmax``) and uses it only once every transaction running then
  has ended, and only after ``keep_seconds`` (rows keep their ``processed_at`` that long, for whoever reads
  recent latencies);
- **claimed**: it stops below the first event of the consumer's types that it has not claimed, or that it
  dead-lettered (re-driving a dead letter deletes its claim, which must then mean "owed again").

Claims of events below the watermark are deleted in the same transaction. A consumer that inserts a claim
while a fold runs checks the watermark in a later statement (``covered``): an event another instance
claimed, and a fold then folded, is found that way, never applied twice.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from psycopg import AsyncConnection

__all__ = ["KEEP_SECONDS", "covered", "covered_sql", "fold", "processed", "watermark"]

# Claims stay rows at least this long after their event is settled.
KEEP_SECONDS = 600.0
# At most this many sequence numbers are folded in one transaction (a store upgraded with millions of claims
# is folded over several rounds).
FOLD_SPAN = 50_000


def watermark(consumer: str) -> str:
    """An SQL expression: ``consumer``'s watermark (0 when it has none), ``consumer`` an SQL expression.
    Queries over many events take it once per consumer (a join), not once per event."""
    return f"coalesce((SELECT w.seq FROM claim_watermarks w WHERE w.consumer = {consumer}), 0)"


def covered_sql(consumer: str, seq: str) -> str:
    """An SQL condition: the event at sequence number ``seq`` is at or below ``consumer``'s watermark (both
    SQL expressions)."""
    return f"{seq} <= {watermark(consumer)}"


async def processed(conn: AsyncConnection[Any], consumer: str, ids: Sequence[Any]) -> set[Any]:
    """Which of the events ``ids`` this consumer has claimed (a row, or below its watermark): one statement,
    so one snapshot of both."""
    cur = await conn.execute(
        "SELECT event_id FROM processed_events WHERE consumer = %(c)s AND event_id = ANY(%(ids)s::uuid[])"
        " UNION SELECT e.event_id FROM events e WHERE e.event_id = ANY(%(ids)s::uuid[])"
        f" AND {covered_sql('%(c)s', 'e.seq')}",
        {"c": consumer, "ids": list(ids)},
    )
    return {row[0] for row in await cur.fetchall()}


async def covered(conn: AsyncConnection[Any], consumer: str, ids: Sequence[Any]) -> set[Any]:
    """Which of ``ids`` are below this consumer's watermark: asked after inserting their claims, it finds
    events that another instance claimed and a fold then folded (their rows gone, so the insert passed)."""
    cur = await conn.execute(
        "SELECT e.event_id FROM events e WHERE e.event_id = ANY(%(ids)s::uuid[])"
        f" AND {covered_sql('%(c)s', 'e.seq')}",
        {"c": consumer, "ids": list(ids)},
    )
    return {row[0] for row in await cur.fetchall()}


_CANDIDATE = """
UPDATE claim_watermarks SET candidate_seq = (SELECT coalesce(max(seq), 0) FROM events),
       candidate_xmax = pg_snapshot_xmax(pg_current_snapshot()), candidate_at = now()
 WHERE consumer = %(c)s
"""

# The first event above the watermark, up to the settled candidate, that the consumer has not claimed or has
# dead-lettered.
_BLOCKER = """
SELECT min(e.seq) FROM events e
 WHERE e.seq > %(w)s AND e.seq <= %(upto)s AND e.type = ANY(%(types)s)
   AND (NOT EXISTS (SELECT 1 FROM processed_events p WHERE p.consumer = %(c)s AND p.event_id = e.event_id)
        OR EXISTS (SELECT 1 FROM dead_letters d WHERE d.consumer = %(c)s AND d.event_id = e.event_id))
"""

_DELETE = """
DELETE FROM processed_events p USING events e
 WHERE p.consumer = %(c)s AND e.event_id = p.event_id AND e.seq > %(w)s AND e.seq <= %(to)s
"""


async def fold(
    conn: AsyncConnection[Any], consumer: str, types: Collection[str], *, keep_seconds: float = KEEP_SECONDS
) -> int:
    """One round for ``consumer`` (whose claimable event types are ``types``), in the caller's transaction:
    move its watermark over settled, claimed events and delete their claims. Rounds of several instances
    of one consumer take turns (the watermark's row is locked). Returns the claims deleted."""
    await conn.execute("INSERT INTO claim_watermarks (consumer) VALUES (%s) ON CONFLICT DO NOTHING",
                       (consumer,))
    cur = await conn.execute(
        "SELECT seq, candidate_seq,"
        " candidate_xmax IS NOT NULL AND candidate_xmax <= pg_snapshot_xmin(pg_current_snapshot())"
        " AND candidate_at <= now() - make_interval(secs => %s)"
        " FROM claim_watermarks WHERE consumer = %s FOR UPDATE",
        (keep_seconds, consumer),
    )
    row = await cur.fetchone()
    assert row is not None
    watermark, candidate, settled = int(row[0]), row[1], bool(row[2])
    if candidate is not None and not settled:
        return 0
    deleted = 0
    if candidate is not None and candidate > watermark:
        upto = min(int(candidate), watermark + FOLD_SPAN)
        cur = await conn.execute(_BLOCKER,
                                 {"w": watermark, "upto": upto, "types": sorted(types), "c": consumer})
        blocker = (await cur.fetchone() or (None,))[0]
        to = upto if blocker is None else int(blocker) - 1
        if to > watermark:
            cur = await conn.execute(_DELETE, {"c": consumer, "w": watermark, "to": to})
            deleted = cur.rowcount
            await conn.execute(
                "UPDATE claim_watermarks SET seq = %s, updated_at = now() WHERE consumer = %s", (to, consumer)
            )
        if to < int(candidate):  # not there yet: the same candidate stays settled for the next round
            return deleted
    await conn.execute(_CANDIDATE, {"c": consumer})
    return deleted
