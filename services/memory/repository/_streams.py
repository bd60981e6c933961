"""The memory repository: NPC streams and their memories (writes, lookups, re-embedding, deletion)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt
from psycopg.rows import dict_row

from services.memory.domain import (
    Memory,
    NpcRef,
    NpcStream,
    PreviousObservation,
    normalise_description,
    state_key,
)
from services.memory.repository._accesses import AccessQueries
from services.memory.repository._editing import EditingQueries
from services.memory.repository._holding import HoldingQueries
from services.memory.repository._indexes import IndexQueries
from services.memory.repository._listing import ListingQueries
from services.memory.repository._ranking import RankingQueries
from services.memory.repository._rows import (
    _ADD_VECTORS,
    _INSERT,
    _JOINED,
    _MEMORIES,
    _MEMORY_COLUMNS,
    _NPC,
    _NPC_COLUMNS,
    _STREAM,
    Conn,
    _memory,
    _params,
    _stream,
    _vector,
    stream_key,
)

__all__ = ["MemoryRepository"]

_EARLIER_STATES = 20  # an entity's latest stored states searched for the same one (it flips between a few)


class MemoryRepository(
    RankingQueries, ListingQueries, IndexQueries, HoldingQueries, EditingQueries, AccessQueries
):
    """Stateless; every method runs on the caller's connection (and transaction)."""

    async def get_npc(self, conn: Conn, npc: NpcRef) -> NpcStream | None:
        """The NPC's stream, or None when the memory service has never heard of the NPC."""
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                f"SELECT {_NPC_COLUMNS} FROM memory_npcs WHERE {_NPC}",
                {"t": npc.tenant_id, "w": npc.world_id, "n": npc.npc_id},
            )
            row = await cur.fetchone()
        return _stream(row) if row else None

    async def ensure_npc(
        self, conn: Conn, npc: NpcRef, *, name: str | None = None, persona: str | None = None
    ) -> NpcStream:
        """Create the NPC's stream if missing; set name and persona if given.

        An existing stream is only read: a write would give the transaction its id now, and the outbox relay
        holds back every event behind a transaction that has one, for as long as the handler then spends
        rating and embedding. Writers of one stream are serialised by its event-stream version instead.
        """
        async with conn.cursor(row_factory=dict_row) as cur:
            if name is None and persona is None:
                await cur.execute(
                    f"SELECT {_NPC_COLUMNS} FROM memory_npcs"
                    " WHERE tenant_id = %s AND world_id = %s AND npc_id = %s",
                    (npc.tenant_id, npc.world_id, npc.npc_id),
                )
                existing = await cur.fetchone()
                if existing is not None:
                    return _stream(existing)
            await cur.execute(
                f"""INSERT INTO memory_npcs (npc_key, tenant_id, world_id, npc_id, name, persona)
                    VALUES (%(key)s, %(t)s, %(w)s, %(n)s, %(name)s, coalesce(%(persona)s, ''))
                    ON CONFLICT (tenant_id, world_id, npc_id) DO UPDATE
                    SET name = coalesce(%(name)s, memory_npcs.name),
                        persona = coalesce(%(persona)s, memory_npcs.persona)
                    RETURNING {_NPC_COLUMNS}""",
                {"key": stream_key(npc), "t": npc.tenant_id, "w": npc.world_id, "n": npc.npc_id, "name": name,
                 "persona": persona},
            )
            row = await cur.fetchone()
        assert row is not None
        return _stream(row)

    async def latest_observation(self, conn: Conn, stream: NpcStream, key: str) -> PreviousObservation | None:
        """The most recent stored observation with this state key."""
        cur = await conn.execute(
            f"""SELECT description, created_at FROM memories
                WHERE {_MEMORIES} AND kind = 'observation' AND state_hash = memory_state_hash(%(sk)s)
                ORDER BY created_at DESC LIMIT 1""",
            _params(stream, sk=key),
        )
        row = await cur.fetchone()
        return PreviousObservation(row[0], row[1]) if row else None

    async def earlier_rating(self, conn: Conn, stream: NpcStream, key: str, description: str) -> int | None:
        """The importance the NPC gave the latest stored observation of this very state (same state key and
        the same description, up to case and spacing); None when it never stored it."""
        cur = await conn.execute(
            f"""SELECT description, importance FROM memories
                WHERE {_MEMORIES} AND kind = 'observation' AND state_hash = memory_state_hash(%(sk)s)
                ORDER BY created_at DESC, memory_id LIMIT {_EARLIER_STATES}""",
            _params(stream, sk=key),
        )
        wanted = normalise_description(description)
        return next((int(r[1]) for r in await cur.fetchall() if normalise_description(r[0]) == wanted), None)

    async def add(
        self,
        conn: Conn,
        stream: NpcStream,
        memories: Sequence[Memory],
        vectors: npt.NDArray[np.float32],
        *,
        model: str,
        source_event_id: uuid.UUID,
    ) -> int:
        """Insert memories with their vectors (a memory id already present is skipped).

        The first memory fixes the stream's embedding space; callers check it before embedding.

        Returns:
            How many memories were new.
        """
        if not memories:
            return 0
        dims = int(vectors.shape[1])
        # Under the stream's lock: an index upkeep that moves the stream's vectors into its rows waits for
        # this transaction, and a writer after it reads the new setting (``build_own_index``).
        cur = await conn.execute(
            "SELECT in_row_vectors FROM memory_npcs WHERE npc_key = %(key)s FOR NO KEY UPDATE",
            _params(stream),
        )
        row = await cur.fetchone()
        cur = await conn.execute(
            _INSERT,
            _params(
                stream,
                in_rows=bool(row and row[0]),
                model=model,
                dims=dims,
                source=source_event_id,
                ids=[m.memory_id for m in memories],
                kinds=[m.kind for m in memories],
                descriptions=[m.description for m in memories],
                importances=[m.importance for m in memories],
                created=[m.created_at for m in memories],
                locations=[m.location for m in memories],
                subjects=[m.subject for m in memories],
                evidence=["{" + ",".join(m.evidence) + "}" for m in memories],
                depths=[m.depth for m in memories],
                origins=[m.provenance.source for m in memories],
                told_by=[m.provenance.told_by for m in memories],
                trusts=[m.provenance.trust for m in memories],
                state_keys=[
                    state_key(m.description, m.subject, m.location) if m.kind == "observation" else None
                    for m in memories
                ],
                vectors=[_vector(v) for v in vectors],
            ),
        )
        added = cur.rowcount
        await conn.execute(
            f"""UPDATE memory_npcs SET memory_count = memory_count + %(added)s,
                    embedding_model = coalesce(embedding_model, %(model)s),
                    embedding_dims = coalesce(embedding_dims, %(dims)s)
                WHERE {_STREAM}""",
            _params(stream, added=added, model=model, dims=dims),
        )
        return added

    async def mark_accessed(
        self, conn: Conn, stream: NpcStream, memory_ids: Sequence[str], at: datetime
    ) -> None:
        """Move last access of these memories forward to ``at`` (never back, so replays are idempotent)."""
        await conn.execute(
            """UPDATE memory_access SET last_accessed_at = greatest(last_accessed_at, %(at)s)
               WHERE npc_key = %(key)s AND memory_id = ANY(%(ids)s::uuid[])""",
            _params(stream, at=at, ids=list(memory_ids)),
        )

    async def get_many(self, conn: Conn, stream: NpcStream, memory_ids: Sequence[str]) -> dict[str, Memory]:
        """These memories of the stream by id (ids of other streams are not found)."""
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM {_JOINED} "
                f"WHERE m.{_MEMORIES} AND m.memory_id = ANY(%(ids)s::uuid[])",
                _params(stream, ids=list(memory_ids)),
            )
            rows = await cur.fetchall()
        return {str(r["memory_id"]): _memory(stream.npc, r) for r in rows}

    async def all_memories(self, conn: Conn, stream: NpcStream) -> list[Memory]:
        """The whole stream in creation order (for inspection and replay checks, not for retrieval)."""
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM {_JOINED} WHERE m.{_MEMORIES} "
                "ORDER BY m.created_at, m.memory_id",
                _params(stream),
            )
            return [_memory(stream.npc, r) for r in await cur.fetchall()]

    async def replace_embeddings(
        self,
        conn: Conn,
        stream: NpcStream,
        memory_ids: Sequence[str],
        vectors: npt.NDArray[np.float32],
        model: str,
    ) -> None:
        """Move these memories into ``model``'s space with these vectors (the re-embed job): the world gets
        each text's vector in that space, and a stream that keeps vectors in its rows, the rows."""
        await conn.execute(
            f"""WITH given AS MATERIALIZED (
                    SELECT v.memory_id, m.description, v.embedding::halfvec AS embedding
                    FROM unnest(%(ids)s::uuid[], %(vectors)s::text[]) AS v(memory_id, embedding)
                    JOIN memories AS m ON m.memory_id = v.memory_id AND m.{_MEMORIES}
                ), shared AS ({_ADD_VECTORS})
                UPDATE memories AS m SET embedding_model = %(model)s, embedding_dims = %(dims)s,
                    embedding = CASE WHEN (SELECT in_row_vectors FROM memory_npcs WHERE npc_key = %(key)s)
                                     THEN g.embedding END
                FROM given AS g
                WHERE m.memory_id = g.memory_id AND m.{_MEMORIES}""",
            _params(
                stream,
                model=model,
                dims=int(vectors.shape[1]),
                ids=list(memory_ids),
                vectors=[_vector(v) for v in vectors],
            ),
        )

    async def set_space(self, conn: Conn, stream: NpcStream, model: str, dims: int) -> None:
        """Record the embedding space the stream's vectors now live in."""
        await conn.execute(
            f"UPDATE memory_npcs SET embedding_model = %(model)s, embedding_dims = %(dims)s WHERE {_STREAM}",
            _params(stream, model=model, dims=dims),
        )

    async def delete_stream(self, conn: Conn, stream: NpcStream) -> None:
        """Drop one NPC's memories and stream row (before rebuilding it from the event store)."""
        await conn.execute(f"DELETE FROM memory_npcs WHERE {_STREAM}", _params(stream))

    async def retire(self, conn: Conn, npc: NpcRef) -> None:
        """The NPC was retired: it records no new memory from now on."""
        await conn.execute(
            "INSERT INTO memory_retired (tenant_id, world_id, npc_id) VALUES (%s, %s, %s)"
            " ON CONFLICT DO NOTHING",
            (npc.tenant_id, npc.world_id, npc.npc_id),
        )

    async def recording_bars(self, conn: Conn, npc: NpcRef) -> tuple[bool, frozenset[str]]:
        """What keeps memories from being recorded, in one statement: whether the NPC is retired, and the
        memory kinds its world never records (``WorldCreated.ablations``; empty: every kind)."""
        cur = await conn.execute(
            "SELECT EXISTS (SELECT 1 FROM memory_retired WHERE tenant_id = %(t)s AND world_id = %(w)s"
            " AND npc_id = %(n)s),"
            " (SELECT kinds FROM memory_world_ablations WHERE tenant_id = %(t)s AND world_id = %(w)s)",
            {"t": npc.tenant_id, "w": npc.world_id, "n": npc.npc_id},
        )
        row = await cur.fetchone()
        assert row is not None
        return bool(row[0]), frozenset(row[1] or ())

    async def delete_world(self, conn: Conn, tenant_id: str, world_id: str) -> None:
        """Drop every memory stream of a world (the projection of a WorldDeleted event)."""
        await conn.execute(
            "DELETE FROM memory_npcs WHERE tenant_id = %s AND world_id = %s", (tenant_id, world_id)
        )
        await conn.execute(
            "DELETE FROM memory_vectors WHERE world_key = world_key(%s, %s)", (tenant_id, world_id)
        )
        for table in ("memory_held", "memory_clocks", "memory_retired", "memory_accesses_pending"):
            await conn.execute(
                f"DELETE FROM {table} WHERE tenant_id = %s AND world_id = %s", (tenant_id, world_id)
            )
