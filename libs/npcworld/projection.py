"""Projections: read models folded from events, and their rebuild from the event store (replay).

Every column of a read model is written by an applier from an event. A service's own events (those it
appends and does not react to) are folded in the transaction that appends them (``apply_appended``) and
claimed for the service's consumer there, so the state the service reads next is the fold of what it
stored, and its consumer skips them when they come back from Kafka. Events of other services are folded by
the consumer loop as they arrive. ``rebuild`` folds, in store order, exactly the events the consumer has
claimed, so the rebuilt read model is the live one, row for row.

Appliers are keyed by payload class (``Appliers(applier(WorldCreated, apply_world_created), ...)``): the
applier checks the class once, so an applier declared ``event: Envelope[WorldCreated]`` needs no cast.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from psycopg import AsyncConnection, sql
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import EVENT_TYPES, Envelope, EventPayload, WorldForked
from npcworld.errors import PermanentError
from npcworld.eventstore import EventFilter, EventStore

__all__ = ["Applier", "Appliers", "Projection", "applier", "claim", "differences", "rebuild"]

logger = logging.getLogger(__name__)

P = TypeVar("P", bound=EventPayload)
_Fold = Callable[[Envelope, AsyncConnection[Any]], Awaitable[None]]
Hook = Callable[[AsyncConnection[Any]], Awaitable[None]]
Progress = Callable[[int, int], None]
# Inherited events read at a time when a fork's history is folded.
_INHERITED_BATCH = 1000


@dataclass(frozen=True)
class Applier:
    """Folds one payload class's events into a read model (built by ``applier``)."""

    payload: type[EventPayload]
    fold: _Fold

    async def __call__(self, event: Envelope, conn: AsyncConnection[Any]) -> None:
        """Fold ``event`` (raises PermanentError when its payload is not of the applier's class)."""
        if not isinstance(event.payload, self.payload):
            raise PermanentError(
                f"{event.type} event carries a {type(event.payload).__name__}, not a {self.payload.__name__}"
            )
        await self.fold(event, conn)


def applier(
    payload: type[P], fold: Callable[[Envelope[P], AsyncConnection[Any]], Awaitable[None]]
) -> Applier:
    """The applier of ``payload``'s events."""
    return Applier(payload, cast(_Fold, fold))


class Appliers(Mapping[str, Applier]):
    """A projection's appliers by event type (one per payload class)."""

    def __init__(self, *appliers: Applier) -> None:
        by_type: dict[str, Applier] = {}
        for one in appliers:
            if one.payload.event_type in by_type:
                raise ValueError(f"two appliers for {one.payload.event_type}")
            by_type[one.payload.event_type] = one
        self._appliers = by_type

    def __getitem__(self, event_type: str) -> Applier:
        return self._appliers[event_type]

    def __iter__(self) -> Iterator[str]:
        return iter(self._appliers)

    def __len__(self) -> int:
        return len(self._appliers)


@dataclass(frozen=True)
class Projection:
    """A service's read model: the tables it owns and one pure state-writing applier per event type.

    Appliers only write the service's own tables (no LLM calls, no new events, no clock, no sequence), so
    replaying the event store through them reproduces the read model exactly and costs nothing.
    """

    consumer: str
    tables: tuple[str, ...]
    appliers: Mapping[str, Applier]
    # Runs in the rebuild's transaction before the tables are emptied (e.g. to keep derived data).
    prepare: Hook | None = None
    # Runs in the rebuild's transaction after the fold (e.g. to restore what ``prepare`` kept).
    finish: Hook | None = None
    # Fold the service's own events when it appends them (``apply_appended``). A service whose reactions
    # write exactly the rows its appliers would (memory, which has the vectors at hand) turns this off:
    # its own events are then folded, as no-ops, when its consumer reads them back.
    fold_on_append: bool = True
    # Types only this service appends, which it folds and claims where it appends them (and a fork's copies
    # when the fork's WorldForked arrives): its consumer neither reads their topic for them nor owes them.
    # ``rebuild`` folds them like any other claimed event.
    appended_only: frozenset[str] = frozenset()
    # How a fork's inherited events are folded (default: by ``appliers``; empty: the read model keeps nothing
    # of them). They are folded, in store order, when the fork's WorldForked is (``fold_inherited``).
    inherited: Mapping[str, Applier] | None = None

    def __post_init__(self) -> None:
        unknown = set(self.appliers) - set(EVENT_TYPES)
        if unknown:
            raise ValueError(f"{self.consumer}: appliers for unknown event types {sorted(unknown)}")
        own = {t: a for t, a in self.appliers.items() if t != WorldForked.event_type}
        inherited = own if self.inherited is None else dict(self.inherited)
        object.__setattr__(self, "inherited", inherited)
        if inherited:
            then = self.appliers.get(WorldForked.event_type)

            async def forked(event: Envelope[WorldForked], conn: AsyncConnection[Any]) -> None:
                await self.fold_inherited(conn, event)
                if then is not None:
                    await then(event, conn)

            object.__setattr__(self, "appliers", Appliers(*own.values(), applier(WorldForked, forked)))

    async def fold_inherited(
        self, conn: AsyncConnection[Any], forked: Envelope, *, limit: int | None = None
    ) -> int:
        """Fold what the fork ``forked`` (its WorldForked) inherits, in store order, from where this consumer
        left off (``fork_folds``), at most ``limit`` events (all when None); returns how many were folded.
        Runs in the caller's transaction, which records how far it got, so a consumer can fold a long history
        in several short transactions (``npcworld.messaging.loop``) and a crash loses nothing."""
        inherited = cast(Mapping[str, Applier], self.inherited)
        if not isinstance(forked.payload, WorldForked) or forked.payload.inherited_until_seq is None:
            return 0  # not a fork, or one made by copying (its copies arrive as events)
        cur = await conn.execute(
            "SELECT after_seq FROM fork_folds WHERE consumer = %s AND event_id = %s FOR UPDATE",
            (self.consumer, forked.event_id),
        )
        row = await cur.fetchone()
        after, done, store = (int(row[0]) if row else 0), 0, EventStore()
        where = EventFilter(tenant_id=forked.tenant_id, world_id=forked.world_id, types=tuple(inherited),
                            history="inherited")
        while limit is None or done < limit:
            batch = await store.read_all(conn, after, _INHERITED_BATCH if limit is None
                                         else min(_INHERITED_BATCH, limit - done), where)
            if not batch:
                break
            for stored in batch:
                if stored.envelope.type != WorldForked.event_type:  # an ancestor's own fork point
                    await inherited[stored.envelope.type](stored.envelope, conn)
            done += len(batch)
            after = batch[-1].seq
        await conn.execute(
            "INSERT INTO fork_folds (consumer, event_id, after_seq) VALUES (%s, %s, %s)"
            " ON CONFLICT (consumer, event_id) DO UPDATE SET after_seq = EXCLUDED.after_seq",
            (self.consumer, forked.event_id, after),
        )
        return done

    async def apply_appended(
        self, conn: AsyncConnection[Any], events: Sequence[Envelope], *, reactions: Collection[str] = ()
    ) -> list[Envelope]:
        """Fold events the service has just appended into its read model and claim them for its consumer.

        Runs in the appending transaction, so state and events commit together. Types in ``reactions``
        are left alone: the consumer must still react to them when they arrive. Returns the folded events.
        """
        if not self.fold_on_append:
            return []
        mine = [e for e in events if e.type in self.appliers and e.type not in reactions]
        for event in mine:
            await self.appliers[event.type](event, conn)
        await claim(conn, self.consumer, mine)
        return mine


async def claim(conn: AsyncConnection[Any], consumer: str, events: Sequence[Envelope]) -> None:
    """Claim ``events`` for ``consumer`` in the caller's transaction, as folded where they were appended: its
    consumer skips them when they come back, and a rebuild folds them (it folds what the consumer claimed)."""
    if events:
        await conn.execute(
            "INSERT INTO processed_events (consumer, event_id) SELECT %s, unnest(%s::uuid[])"
            " ON CONFLICT DO NOTHING",
            (consumer, [e.event_id for e in events]),
        )


async def rebuild(
    pool: AsyncConnectionPool,
    projection: Projection,
    *,
    batch_size: int = 2000,
    progress: Progress | None = None,
) -> int:
    """Empty the projection's tables and fold, in store order, every event its consumer has claimed.

    Safe while the service runs. The tables are locked first, which waits for every transaction that
    touched them to commit and holds back every later one, so the claims read afterwards are exactly the
    events the live read model holds. Claims are never deleted or added: events not processed yet are left
    to the live consumer (which folds and reacts to them as usual), reactions never run twice and nothing
    becomes owed. One transaction: readers see the old read model until the new one is complete.

    Returns:
        The number of events applied.
    """
    async with pool.connection() as conn, conn.transaction():
        await _lock(conn, projection)
        applied = await _fold(conn, projection, batch_size, progress)
    logger.info("rebuilt %s from %d claimed events", projection.consumer, applied)
    return applied


async def differences(pool: AsyncConnectionPool, projection: Projection, *, limit: int = 20) -> list[str]:
    """Rebuild the projection in a transaction that is rolled back and compare it with the live read model,
    every row of every table. Changes nothing; safe while the service runs (it waits like ``rebuild``).

    Returns:
        Up to ``limit`` lines naming rows only one side has (empty: the rebuild equals the live model).
    """
    async with pool.connection() as conn, conn.transaction(force_rollback=True):
        await _lock(conn, projection)
        live = await _rows(conn, projection.tables)
        await _fold(conn, projection, 2000, None)
        rebuilt = await _rows(conn, projection.tables)
    out: list[str] = []
    for table in projection.tables:
        out += [f"{table}: only live: {row}" for row in sorted((live[table] - rebuilt[table]).elements())]
        out += [f"{table}: only rebuilt: {row}" for row in sorted((rebuilt[table] - live[table]).elements())]
    return out[:limit]


async def _lock(conn: AsyncConnection[Any], projection: Projection) -> None:
    tables = sql.SQL(", ").join(sql.Identifier(t) for t in projection.tables)
    await conn.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(tables))


async def _fold(
    conn: AsyncConnection[Any], projection: Projection, batch_size: int, progress: Progress | None
) -> int:
    """Empty the (locked) tables and fold the claimed events into them; returns how many were applied."""
    store, applied, after = EventStore(), 0, 0
    claimed = EventFilter(types=tuple(projection.appliers), claimed_by=projection.consumer)
    if projection.prepare is not None:
        await projection.prepare(conn)
    tables = sql.SQL(", ").join(sql.Identifier(t) for t in projection.tables)
    await conn.execute(sql.SQL("TRUNCATE {}").format(tables))
    # Forks' inherited histories are folded again from the start, each with its WorldForked.
    await conn.execute("DELETE FROM fork_folds WHERE consumer = %s", (projection.consumer,))
    total = await store.last_seq(conn)
    while events := await store.read_all(conn, after, batch_size, claimed):
        for stored in events:
            await projection.appliers[stored.envelope.type](stored.envelope, conn)
        applied += len(events)
        after = events[-1].seq
        if progress:
            progress(after, total)
    if projection.finish is not None:
        await projection.finish(conn)
    return applied


async def _rows(conn: AsyncConnection[Any], tables: Sequence[str]) -> dict[str, Counter[str]]:
    """Every row of each table as its JSON text (vectors and timestamps included, in their text form)."""
    out: dict[str, Counter[str]] = {}
    for table in tables:
        query = sql.SQL("SELECT to_jsonb(t)::text FROM {} AS t").format(sql.Identifier(table))
        out[table] = Counter(r[0] for r in await (await conn.execute(query)).fetchall())
    return out
