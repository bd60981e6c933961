"""A world's history in parts: what it inherits from each ancestor (a fork's) and its own events.

A fork does not copy its source's history; it inherits it (migration 0132). Reads that select events by
type, NPC or time read ``FROM world_events(tenant, world) AS events`` in SQL. A read in sequence order with a
limit reads one part after another instead (one index range each, where a union would be sorted whole): the
parts are disjoint in sequence numbers and follow each other, the oldest ancestor's first and the world's
own last, for a world's own events all come after what it inherits.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg import AsyncConnection

__all__ = ["OWN_WORLD", "Part", "newest_sql", "read_in_parts", "read_in_parts_sync"]

T = TypeVar("T")

# The own part's rows, as ``Part.source`` words them (the placeholders take tenant and world).
OWN_WORLD = "events WHERE in_world(tenant_id, world_id, %s, %s)"
_INHERITED = "inherited_part(%s, %s, %s, %s, %s) AS events WHERE true"
_LINEAGE = """
SELECT ancestor, until_seq, until_time FROM world_lineage WHERE tenant_id = %s AND world_id = %s
ORDER BY depth DESC
"""


def newest_sql(columns: str, where: str, limit: str) -> str:
    """A subquery (parenthesised) of the newest ``limit`` rows of ``columns`` (``seq`` among them) among the
    events of the world ``%(t)s`` / ``%(w)s`` (named placeholders) that satisfy ``where``: the world's own
    and each ancestor's part read newest first on its own index, then merged. (A limit over
    ``world_events`` would sort every matching row of the history.) The ancestors' parts are not read at
    all when the world's own events give ``limit`` rows (its own are its newest): walking an ancestor's
    index back from its bound costs the events it has after the fork point. ``where`` may name outer
    columns, as in a lateral subquery."""
    own = f"events WHERE in_world(tenant_id, world_id, %(t)s, %(w)s) AND {where}"
    return f"""(SELECT {columns} FROM (
  (SELECT {columns} FROM {own} ORDER BY seq DESC LIMIT {limit})
  UNION ALL
  SELECT i.* FROM world_lineage l CROSS JOIN LATERAL (
    SELECT {columns} FROM inherited_part(%(t)s, %(w)s, l.ancestor, l.until_seq, l.until_time) AS events
     WHERE {where} ORDER BY seq DESC LIMIT {limit}) AS i
   WHERE l.tenant_id = %(t)s AND l.world_id = %(w)s
     AND (SELECT count(*) FROM (SELECT 1 FROM {own} LIMIT {limit}) AS enough) < {limit}
) AS newest ORDER BY seq DESC LIMIT {limit})"""


@dataclass(frozen=True)
class Part:
    """One part of a world's history: what it inherits from ``ancestor`` up to ``until_seq`` and
    ``until_time``, or (``ancestor`` None) its own events."""

    tenant_id: str
    world_id: str
    ancestor: str | None = None
    until_seq: int = 0
    until_time: datetime | None = None

    @property
    def own(self) -> bool:
        return self.ancestor is None

    def source(self) -> tuple[str, list[Any]]:
        """``(sql, params)`` to follow ``FROM``: the part's rows, as the world sees them, then ``WHERE``
        and a first condition (add more with ``AND``)."""
        if self.ancestor is None:
            return OWN_WORLD, [self.tenant_id, self.world_id]
        return _INHERITED, [self.tenant_id, self.world_id, self.ancestor, self.until_seq, self.until_time]

    def named_source(self) -> tuple[str, dict[str, Any]]:
        """``source`` with named placeholders: ``%(t)s`` and ``%(w)s`` take tenant and world (the caller's),
        the returned parameters the rest."""
        if self.ancestor is None:
            return "events WHERE in_world(tenant_id, world_id, %(t)s, %(w)s)", {}
        return ("inherited_part(%(t)s, %(w)s, %(ancestor)s, %(until_seq)s, %(until_time)s) AS events"
                " WHERE true", {"ancestor": self.ancestor, "until_seq": self.until_seq,
                                "until_time": self.until_time})


def _parts(tenant_id: str, world_id: str, lineage: list[tuple[Any, ...]], newest_first: bool) -> list[Part]:
    """The world's parts in sequence order (each ancestor's, the oldest first, then its own), or reversed."""
    parts = [*(Part(tenant_id, world_id, a, int(s), t) for a, s, t in lineage), Part(tenant_id, world_id)]
    return parts[::-1] if newest_first else parts


def read_in_parts_sync(
    conn: psycopg.Connection[Any], tenant_id: str, world_id: str, read: Callable[[Part, int], list[T]],
    limit: int, *, newest_first: bool = False,
) -> list[T]:
    """``read_in_parts`` on a blocking connection."""
    lineage = conn.execute(_LINEAGE, (tenant_id, world_id)).fetchall()
    out: list[T] = []
    for part in _parts(tenant_id, world_id, lineage, newest_first):
        if len(out) >= limit:
            break
        out += read(part, limit - len(out))
    return out


async def read_in_parts(
    conn: AsyncConnection[Any],
    tenant_id: str,
    world_id: str,
    read: Callable[[Part, int], Awaitable[list[T]]],
    limit: int,
    *,
    newest_first: bool = False,
) -> list[T]:
    """Up to ``limit`` rows of the world's history in sequence order (or, ``newest_first``, in reverse):
    ``read(part, n)`` reads at most ``n`` rows of one part in that order, and parts are read until
    ``limit`` rows are found."""
    lineage = await (await conn.execute(_LINEAGE, (tenant_id, world_id))).fetchall()
    out: list[T] = []
    for part in _parts(tenant_id, world_id, lineage, newest_first):
        if len(out) >= limit:
            break
        out += await read(part, limit - len(out))
    return out
