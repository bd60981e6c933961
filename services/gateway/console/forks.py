"""A fork beside the world it was forked from: each side's events after the fork point, in world-time order,
side by side a page at a time, and the first position where the two logs say different things.

The source world's side is its events later than the fork point; the fork's side is its own events (not the
history it inherits, nor an older fork's copies, not ``WorldForked``). Both are read from one tenant's rows
only. Two events "say the same" when type, NPC, world time and payload agree once ids are set aside: a fork
draws fresh ids (events, memories, conversations) and its places are named after its own world id.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

__all__ = ["DIVERGENCE_WINDOW", "Comparison", "Row", "compare"]

DIVERGENCE_WINDOW = 1_000  # events of each side searched for the first difference
_LAST = 2**62
_TOLD = ("description", "text", "summary", "reason", "query")
# What an event says, ids and its world's id set aside (a digest: compared across the sides, never shown).
_UUID = "[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}"
_SAID = ("md5(type || '|' || coalesce(npc_id, '') || '|' || world_time::text || '|'"
         f" || regexp_replace(replace(payload::text, %(w)s, ''), '{_UUID}', '', 'g'))")
_PAGE = f"seq, event_id, type, npc_id, world_time, payload::text AS payload, {_SAID} AS said"
_SIDE = """
SELECT COLUMNS FROM events
 WHERE in_world(tenant_id, world_id, %(t)s, %(w)s) AND world_time >= %(at)s
   AND (world_time, seq) > (%(at)s, %(seq)s)
   AND (NOT %(own)s OR (forked_from IS NULL AND type <> 'WorldForked'))
   AND (%(npc)s::text IS NULL OR npc_id = %(npc)s)
   AND (cardinality(%(types)s::text[]) = 0 OR type = ANY(%(types)s::text[]))
 ORDER BY world_time, seq LIMIT %(n)s
"""


@dataclass(frozen=True)
class Row:
    seq: int
    event_id: uuid.UUID
    type: str
    npc_id: str | None
    world_time: datetime
    payload: str  # the payload's JSON text
    said: str  # a digest of what it says, ids set aside (compared across the sides)

    @property
    def gist(self) -> str:
        """Its description, text or summary when it has one, else its payload."""
        data = json.loads(self.payload)
        if not isinstance(data, dict):
            return self.payload
        return next((str(data[k]) for k in _TOLD if isinstance(data.get(k), str) and data[k]), self.payload)


@dataclass
class Comparison:
    source: str
    at: datetime
    source_rows: list[Row]
    fork_rows: list[Row]
    position: int  # of the page's first row, counted from the fork point (0-based)
    first_difference: int | None  # position, None: none within DIVERGENCE_WINDOW
    cursors_before_difference: tuple[int, int] | None  # (source seq, fork seq) opening a page there, 0: start
    searched: tuple[int, int]  # events of each side searched for it


def _side(
    conn: psycopg.Connection[Any], where: dict[str, Any], after: tuple[datetime, int], limit: int
) -> list[Row]:
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(_SIDE.replace("COLUMNS", _PAGE),
                           {**where, "at": after[0], "seq": after[1], "n": limit}).fetchall()
    return [Row(**r) for r in rows]


def _said(
    conn: psycopg.Connection[Any], where: dict[str, Any], after: tuple[datetime, int]
) -> list[tuple[int, str]]:
    """(seq, what it says) of the first ``DIVERGENCE_WINDOW`` events of a side."""
    rows = conn.execute(_SIDE.replace("COLUMNS", f"seq, {_SAID}"),
                        {**where, "at": after[0], "seq": after[1], "n": DIVERGENCE_WINDOW}).fetchall()
    return [(int(seq), str(said)) for seq, said in rows]


def _cursor(
    conn: psycopg.Connection[Any], where: dict[str, Any], seq: int, start: tuple[datetime, int]
) -> tuple[datetime, int]:
    """The (world time, seq) a page opens after: the start (``seq`` 0), or event ``seq`` of that side."""
    if seq <= 0:
        return start
    row = conn.execute("SELECT world_time, seq FROM events WHERE seq = %s"
                       " AND in_world(tenant_id, world_id, %s, %s)", (seq, where["t"], where["w"])).fetchone()
    return (row[0], int(row[1])) if row else start


def compare(
    conn: psycopg.Connection[Any], tenant_id: str, fork_id: str, forked: dict[str, Any], *,
    npc_id: str | None = None, types: tuple[str, ...] = (), after: tuple[int, int] = (0, 0),
    position: int = 0, limit: int = 50,
) -> Comparison:
    """One page of the fork ``fork_id`` (its ``WorldForked`` payload: ``forked``) beside its source world,
    narrowed by NPC and types, opening after the events ``after`` = (source seq, fork seq) (None: at the
    fork point: 0) at ``position``; with the first difference among the first ``DIVERGENCE_WINDOW`` events."""
    source, at = str(forked["source_world_id"]), datetime.fromisoformat(str(forked["at_world_time"]))
    narrow = {"t": tenant_id, "npc": npc_id, "types": list(types)}
    sides = ({**narrow, "w": source, "own": False}, {**narrow, "w": fork_id, "own": True})
    starts = ((at, _LAST), (at, -1))  # the source's events later than the fork point; all the fork's own
    window = [_said(conn, w, s) for w, s in zip(sides, starts, strict=True)]
    first = next((i for i, (a, b) in enumerate(zip(*window, strict=False)) if a[1] != b[1]), None)
    if first is None and len(window[0]) != len(window[1]) and min(map(len, window)) < DIVERGENCE_WINDOW:
        first = min(map(len, window))  # one side goes on where the other has ended
    cursors = None
    if first is not None:
        cursors = (_seq_at(window[0], first - 1), _seq_at(window[1], first - 1))
    pages = [_side(conn, w, _cursor(conn, w, a, s), limit)
             for w, s, a in zip(sides, starts, after, strict=True)]
    return Comparison(source, at, pages[0], pages[1], position, first, cursors,
                      (len(window[0]), len(window[1])))


def _seq_at(rows: list[tuple[int, str]], index: int) -> int:
    """The seq of the row at ``index`` (0: before the first; the last row when the side is shorter)."""
    return rows[min(index, len(rows) - 1)][0] if index >= 0 and rows else 0
