"""Append-only event store in PostgreSQL with per-stream optimistic concurrency and an outbox."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from psycopg import AsyncConnection, errors
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row

from npcworld.contracts import Envelope, TraceContext, envelope_from_dict
from npcworld.errors import AlreadyStoredError, ConcurrencyError
from npcworld.eventstore.claims import covered_sql
from npcworld.eventstore.history import Part, read_in_parts
from npcworld.shredding.sealing import reveal, seal_payloads

__all__ = ["STREAM_IS", "WORLD_IS", "EventFilter", "EventStore", "StoredEvent"]

_COLUMNS = (
    "seq, event_id, stream_id, version, type, schema_version, tenant_id, world_id, npc_id, world_time, "
    "recorded_at, causation_id, correlation_id, forked_from, event_trace(trace, traceparent) AS trace,"
    " payload"
)
# One statement appends: it reads the stream's version (its own last event's, or, in a fork whose own events
# have not reached the stream yet, that of the last event it inherits in the stream: its own go on from
# there), inserts the events after it unless the caller expected another version, and their outbox rows. A
# writer's transaction holds the relay's horizon (every event stored after it waits for it to end), so each
# round trip saved shortens every hop under load. The rows come after a shared lock on each world they are
# of, held to the end of the transaction, which a fork of one of those worlds waits for (``npcworld.fork``):
# taken in the insert itself, before any row takes its sequence number.
_APPEND = """
WITH current AS MATERIALIZED (
  SELECT coalesce(
    (SELECT max(version) FROM events WHERE in_stream(tenant_id, stream_id, %(t)s, %(s)s)),
    (SELECT max(inherited_stream_version(%(t)s, w.id, %(s)s)) FROM unnest(%(w)s::text[]) AS w(id)), 0) AS v
), fits AS (
  SELECT v FROM current WHERE %(expected)s::int IS NULL OR v = %(expected)s::int
), appended AS (
  INSERT INTO events (event_id, stream_id, version, type, schema_version, tenant_id, world_id, npc_id,
                      world_time, recorded_at, causation_id, correlation_id, forked_from, trace, traceparent,
                      payload)
  SELECT e.event_id, e.stream_id, fits.v + e.ord, e.type, e.schema_version, e.tenant_id, e.world_id, e.npc_id,
         e.world_time, e.recorded_at, e.causation_id, e.correlation_id, e.forked_from, e.trace, e.traceparent,
         e.payload
  FROM fits,
       (SELECT count(pg_advisory_xact_lock_shared(world_key(%(t)s, l.w))) AS n
          FROM unnest(%(w)s::text[]) AS l(w)) AS locked,
       unnest(%(ids)s::uuid[], %(streams)s::text[], %(types)s::text[], %(schemas)s::int[],
              %(tenants)s::text[], %(worlds)s::text[], %(npcs)s::text[], %(times)s::timestamptz[],
              %(recorded)s::timestamptz[], %(causes)s::uuid[], %(correlations)s::uuid[], %(forks)s::uuid[],
              %(traces)s::jsonb[], %(parents)s::bytea[], %(payloads)s::jsonb[])
         WITH ORDINALITY AS e(event_id, stream_id, type, schema_version, tenant_id, world_id, npc_id,
                              world_time, recorded_at, causation_id, correlation_id, forked_from, trace,
                              traceparent, payload, ord)
  WHERE locked.n >= 0
  RETURNING seq, event_id
), published AS (
  INSERT INTO outbox (seq, topic, key)
  SELECT a.seq, o.topic, o.key
  FROM appended a JOIN unnest(%(ids)s::uuid[], %(topics)s::text[], %(keys)s::text[]) AS o(id, topic, key)
    ON o.id = a.event_id
  RETURNING seq
)
SELECT (SELECT v FROM current), array(SELECT event_id FROM appended ORDER BY seq),
       array(SELECT seq FROM published ORDER BY seq)
"""
_TRACEPARENT = re.compile(r"[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}")
# One of a tenant's streams, by the digest its versions are indexed under and by name (migration 0124); the
# two placeholders take the tenant and the stream's name.
STREAM_IS = "in_stream(tenant_id, stream_id, %s, %s)"
# One of a tenant's worlds, likewise: reads of a world's events say this, not tenant_id = %s AND
# world_id = %s, for the world's indexes are keyed by the digest (migration 0124). The placeholders take
# tenant and world.
WORLD_IS = "in_world(tenant_id, world_id, %s, %s)"
# Queueing for a stream: the two-key advisory lock space never meets the one-key locks of the relay,
# migrations and indexing.
_STREAM_LOCK_CLASS = 0x4E5057  # "NPW"
_EVENT_ID_KEY = "events_event_id_key"  # the unique index on events.event_id


@dataclass(frozen=True)
class StoredEvent:
    """An envelope with its place in the store (``stream_id`` is the name its tenant gave the stream)."""

    seq: int
    stream_id: str
    version: int
    envelope: Envelope


@dataclass(frozen=True)
class EventFilter:
    """Which events ``read_all`` returns; every field narrows the selection."""

    tenant_id: str | None = None
    world_id: str | None = None
    npc_id: str | None = None
    types: tuple[str, ...] = ()
    until_world_time: datetime | None = None
    # Only events this consumer has processed (a rebuild folds exactly those).
    claimed_by: str | None = None
    # Of one world (tenant and world given): its whole history, only what it inherits (a fork) or only its
    # own events.
    history: Literal["whole", "inherited", "own"] = "whole"


async def _stored_all(conn: AsyncConnection[Any], rows: list[dict[str, Any]]) -> list[StoredEvent]:
    # A player's words are opened here while the player's key exists ("[forgotten]" once it is erased).
    await reveal(conn, [(row["type"], row["payload"]) for row in rows])
    return [_stored(row) for row in rows]


def _stored(row: dict[str, Any]) -> StoredEvent:
    data = {k: row[k] for k in row if k not in ("seq", "stream_id", "version")}
    return StoredEvent(row["seq"], row["stream_id"], row["version"], envelope_from_dict(data))


class EventStore:
    """Stateless access to the ``events`` table; every method runs on the caller's connection."""

    async def queue_for(self, conn: AsyncConnection[Any], tenant_id: str, stream_id: str) -> None:
        """Wait until no other transaction that queued for this stream is open, and hold the place until
        ``conn``'s transaction ends: writers that extend one stream at once then append one after another
        instead of racing for its next version (every loser of a race retries its whole transaction). A hash
        collision only queues two streams together."""
        await conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
                           (_STREAM_LOCK_CLASS, f"{tenant_id}/{stream_id}"))

    async def queue_for_all(self, conn: AsyncConnection[Any], streams: Iterable[tuple[str, str]]) -> None:
        """``queue_for`` each (tenant, stream) in one statement, in one order for every caller (by lock key):
        two transactions that will write overlapping sets of streams then queue one behind the other
        instead of each holding a stream the other waits for (a deadlock that Postgres breaks only after its
        ``deadlock_timeout``, failing one of them). Queuing for a stream again later in the transaction is
        free; a stream left out and queued for later may still meet such a cycle (a transient error)."""
        keys = sorted({f"{tenant}/{stream}" for tenant, stream in streams})
        if keys:
            # The aggregate takes the sorted subquery's rows one after another: the locks in key order.
            await conn.execute(
                "SELECT count(pg_advisory_xact_lock(%s, k)) FROM"
                " (SELECT hashtext(s) AS k FROM unnest(%s::text[]) AS s ORDER BY 1) AS ordered",
                (_STREAM_LOCK_CLASS, keys),
            )

    async def append(
        self,
        conn: AsyncConnection[Any],
        stream_id: str,
        events: Sequence[Envelope],
        expected_version: int | None = None,
    ) -> list[int]:
        """Append events to a stream and to the outbox, in the caller's transaction.

        Args:
            conn: a connection inside a transaction; nothing is visible until it commits.
            stream_id: the stream to extend, named within the events' tenant.
            events: envelopes in stream order, all of one tenant.
            expected_version: the stream version the caller last saw (0 for a new stream), or
                None to append at whatever the end is.

        Returns:
            The global sequence numbers given to the events.

        Raises:
            ConcurrencyError: the stream is not at ``expected_version``, or a concurrent append
                took the same version first.
            AlreadyStoredError: an event with one of these ids is stored already (nothing is appended).
            ValueError: the events belong to more than one tenant.
        """
        if not events:
            return []
        tenants = {e.tenant_id for e in events}
        if len(tenants) != 1:
            raise ValueError(f"one append is one tenant's stream; these events name {len(tenants)} tenants")
        tenant_id = events[0].tenant_id
        worlds = sorted({e.world_id for e in events})
        if not conn.autocommit and conn.info.transaction_status == TransactionStatus.IDLE:
            # Begin the caller's (implicit) transaction first, so the append below is a savepoint in it and
            # commits with the rest of the caller's work, not on its own.
            await conn.execute("SELECT 1")
        try:
            async with conn.transaction():
                payloads = await seal_payloads(conn, events)
                cur = await conn.execute(_APPEND, _parameters(tenant_id, stream_id, worlds, expected_version,
                                                              events, payloads))
                row = await cur.fetchone()
                assert row is not None
                current, ids, seqs = int(row[0]), row[1], row[2]
                if expected_version is not None and current != expected_version:
                    raise ConcurrencyError(stream_id, expected_version, current)  # rolls the sealing back
        except errors.UniqueViolation as exc:
            if exc.diag.constraint_name == _EVENT_ID_KEY:
                raise AlreadyStoredError(stream_id) from exc
            # a concurrent append took the version first
            actual = await self.stream_version(conn, tenant_id, stream_id)
            raise ConcurrencyError(
                stream_id, expected_version if expected_version is not None else actual, actual
            ) from exc
        by_id = dict(zip(ids, seqs, strict=True))
        return [by_id[e.event_id] for e in events]

    async def stream_version(self, conn: AsyncConnection[Any], tenant_id: str, stream_id: str) -> int:
        """The version of the tenant's stream's last event (0 when the stream is empty; a stream of a fork
        named by ``read_stream``'s ``world_id`` is not looked for in its ancestors here)."""
        cur = await conn.execute(
            f"SELECT coalesce(max(version), 0) FROM events WHERE {STREAM_IS}",
            (tenant_id, stream_id),
        )
        row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def read_stream(
        self, conn: AsyncConnection[Any], tenant_id: str, stream_id: str, after_version: int = 0,
        *, world_id: str | None = None,
    ) -> list[StoredEvent]:
        """Every event of one of the tenant's streams after ``after_version``, in version order; with
        ``world_id`` (the world the stream belongs to), a fork's stream begins with what it inherits."""
        own = f"SELECT {_COLUMNS} FROM events WHERE {STREAM_IS} AND version > %s"
        params: list[Any] = [tenant_id, stream_id, after_version]
        if world_id is not None:
            own += (f" UNION ALL SELECT {_COLUMNS} FROM inherited_stream(%s, %s, %s) AS events"
                    " WHERE version > %s")
            params += [tenant_id, world_id, stream_id, after_version]
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(f"{own} ORDER BY version", params)
            return await _stored_all(conn, await cur.fetchall())

    async def read_all(
        self,
        conn: AsyncConnection[Any],
        after_seq: int = 0,
        limit: int = 1000,
        where: EventFilter | None = None,
    ) -> list[StoredEvent]:
        """Committed events in global order after ``after_seq``, at most ``limit`` of them. Narrowed to one
        world, a fork's inherited history comes first (``history`` says which part; ``claimed_by`` reads its
        own events, for only those are claimed)."""
        f = where or EventFilter()
        if f.tenant_id is None or f.world_id is None:
            return await self._read(conn, "events WHERE true", [], after_seq, limit, f)
        if f.claimed_by is not None or f.history == "own":
            return await self._read(conn, *Part(f.tenant_id, f.world_id).source(), after_seq, limit, f)

        async def part(p: Part, n: int) -> list[StoredEvent]:
            if (p.own and f.history == "inherited") or (not p.own and p.until_seq <= after_seq):
                return []
            return await self._read(conn, *p.source(), after_seq, n, f)

        return await read_in_parts(conn, f.tenant_id, f.world_id, part, limit)

    async def _read(
        self, conn: AsyncConnection[Any], source: str, params: list[Any], after_seq: int, limit: int,
        f: EventFilter,
    ) -> list[StoredEvent]:
        """Events of ``source`` (``Part.source``'s form) after ``after_seq`` narrowed by ``f``."""
        clauses: list[str] = ["seq > %s"]
        params = [*params, after_seq]
        one_world = f.tenant_id is not None and f.world_id is not None
        for column, value in (("tenant_id", None if one_world else f.tenant_id),
                              ("world_id", None if one_world else f.world_id), ("npc_id", f.npc_id)):
            if value is not None:
                clauses.append(f"{column} = %s")
                params.append(value)
        if f.types:
            clauses.append("type = ANY(%s)")
            params.append(list(f.types))
        if f.until_world_time is not None:
            clauses.append("world_time <= %s")
            params.append(f.until_world_time)
        if f.claimed_by is not None:
            clauses.append("(EXISTS (SELECT 1 FROM processed_events p"
                           " WHERE p.consumer = %s AND p.event_id = events.event_id)"
                           f" OR {covered_sql('%s', 'events.seq')})")
            params += [f.claimed_by, f.claimed_by]
        params.append(limit)
        sql = f"SELECT {_COLUMNS} FROM {source} AND {' AND '.join(clauses)} ORDER BY seq LIMIT %s"
        async with conn.cursor(row_factory=dict_row) as cur:
            # Named types: planned for the actual names, never as a generic (prepared) plan, which cannot use
            # the (world, type) index: it covers only the types that are rare in a log (migration 0122).
            await cur.execute(sql, params, prepare=False if f.types else None)
            return await _stored_all(conn, await cur.fetchall())

    async def last_seq(self, conn: AsyncConnection[Any]) -> int:
        """The highest committed sequence number (0 for an empty store)."""
        cur = await conn.execute("SELECT coalesce(max(seq), 0) FROM events")
        row = await cur.fetchone()
        return int(row[0]) if row else 0


def _stored_trace(trace: TraceContext) -> tuple[str, bytes | None]:
    """(``trace``, ``traceparent``) as stored (migration 0125): a W3C traceparent as its 26 bytes, whatever
    else there is as JSON ("{}" when nothing is: not two nulls)."""
    parent = trace.traceparent
    packed = bytes.fromhex(parent.replace("-", "")) if parent and _TRACEPARENT.fullmatch(parent) else None
    rest = trace.model_copy(update={"traceparent": None}) if packed else trace
    return rest.model_dump_json(exclude_none=True), packed


def _parameters(
    tenant_id: str, stream_id: str, worlds: list[str], expected_version: int | None,
    events: Sequence[Envelope], payloads: list[str],
) -> dict[str, Any]:
    traces, parents = map(list, zip(*(_stored_trace(e.trace) for e in events), strict=True))
    return {
        "t": tenant_id, "s": stream_id, "w": worlds, "expected": expected_version,
        "ids": [e.event_id for e in events],
        "streams": [stream_id] * len(events),
        "types": [e.type for e in events],
        "schemas": [e.schema_version for e in events],
        "tenants": [e.tenant_id for e in events],
        "worlds": [e.world_id for e in events],
        "npcs": [e.npc_id for e in events],
        "times": [e.world_time for e in events],
        "recorded": [e.recorded_at for e in events],
        "causes": [e.causation_id for e in events],
        "correlations": [e.correlation_id for e in events],
        "forks": [e.forked_from for e in events],
        "traces": traces,
        "parents": parents,
        "payloads": payloads,
        "topics": [e.payload.topic.name for e in events],
        "keys": [e.key for e in events],
    }


