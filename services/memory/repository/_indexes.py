"""Per-stream indexes: a large stream gets a partial HNSW index of its own, and two of its memory accesses
(by importance and recency, by recency) for the index path's prior lists, built without blocking writes.

Streams ranked by an exact scan read their accesses by key, so no index over every stream holds their
importance or access times, and an access time moving leaves no index entry behind (a HOT update)."""

from __future__ import annotations

from psycopg import sql
from psycopg.rows import dict_row

from services.memory.domain import NpcStream
from services.memory.repository._rows import _MATERIALISE, _NPC_COLUMNS, Conn, _stream

__all__ = ["IndexQueries", "own_index_name"]

_PREFIX = "memories_hnsw_npc_"
# The stream's accesses by importance then recency (the prior lists), and by recency (its access range).
_ACCESS_INDEXES = {
    "memory_access_prior_npc_": "(importance DESC, last_accessed_at DESC, memory_id)",
    "memory_access_recency_npc_": "(last_accessed_at)",
}
_PREFIXES = (_PREFIX, *_ACCESS_INDEXES)


def own_index_name(npc_key: int) -> str:
    return f"{_PREFIX}{npc_key}"


class IndexQueries:
    """Building and dropping per-stream indexes; mixed into MemoryRepository (needs autocommit)."""

    async def streams_needing_own_index(self, conn: Conn, min_count: int, limit: int = 10) -> list[NpcStream]:
        """Streams with at least ``min_count`` memories and no index of their own yet, largest first."""
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                f"""SELECT {_NPC_COLUMNS} FROM memory_npcs
                    WHERE NOT own_index AND memory_count >= %s AND embedding_dims IS NOT NULL
                    ORDER BY memory_count DESC LIMIT %s""",
                (min_count, limit),
            )
            return [_stream(r) for r in await cur.fetchall()]

    async def build_own_index(self, conn: Conn, stream: NpcStream) -> None:
        """Move the stream's vectors into its rows, then build its indexes (CREATE INDEX CONCURRENTLY, after
        dropping a failed earlier build); flag it.

        The HNSW index is partial on the stream's rows, so they must hold their vectors: the stream's flag is
        set under its lock, which every writer of the stream takes before it decides where a new vector goes
        (``add``), so after this transaction no row of the stream is left without one.
        """
        async with conn.transaction():
            await conn.execute(
                "UPDATE memory_npcs SET in_row_vectors = true WHERE npc_key = %s", (stream.key,)
            )
            await conn.execute(_MATERIALISE, {"keys": [stream.key]})
        dims, key = sql.Literal(stream.embedding_dims), sql.Literal(stream.key)
        for prefix, columns in _ACCESS_INDEXES.items():
            await _build(conn, f"{prefix}{stream.key}", sql.SQL(
                "ON memory_access {columns} WHERE npc_key = {key}").format(columns=sql.SQL(columns), key=key))
        await _build(conn, own_index_name(stream.key), sql.SQL(
            "ON memories USING hnsw ((embedding::halfvec({dims})) halfvec_cosine_ops) "
            "WHERE npc_key = {key} AND embedding_dims = {dims}").format(dims=dims, key=key))
        await conn.execute("UPDATE memory_npcs SET own_index = true WHERE npc_key = %s", (stream.key,))

    async def keep_own_indexes(self, conn: Conn) -> None:
        """Remember which streams have an index of their own, or keep vectors in their rows for one, until
        commit (a replay empties memory_npcs; stream keys are stable, so the indexes themselves stay
        valid)."""
        await conn.execute(
            "CREATE TEMP TABLE memory_own_indexes_kept ON COMMIT DROP AS "
            "SELECT npc_key, own_index FROM memory_npcs WHERE in_row_vectors"
        )

    async def restore_own_indexes(self, conn: Conn) -> None:
        """Flag the kept streams again, and move their rebuilt rows' vectors into the rows."""
        cur = await conn.execute(
            "UPDATE memory_npcs AS n SET own_index = k.own_index, in_row_vectors = true"
            " FROM memory_own_indexes_kept AS k WHERE n.npc_key = k.npc_key RETURNING n.npc_key"
        )
        keys = [int(r[0]) for r in await cur.fetchall()]
        if keys:
            await conn.execute(_MATERIALISE, {"keys": keys})

    async def drop_orphan_indexes(self, conn: Conn) -> int:
        """Drop per-stream indexes whose stream is gone (a deleted world, a replay); returns how many."""
        names = []
        for prefix in _PREFIXES:
            cur = await conn.execute(
                "SELECT c.relname FROM pg_class AS c WHERE c.relkind = 'i' AND c.relname LIKE %s "
                "AND NOT EXISTS (SELECT 1 FROM memory_npcs AS n "
                "                WHERE c.relname = %s || n.npc_key::text AND n.own_index)",
                (f"{prefix}%", prefix),
            )
            names += [r[0] for r in await cur.fetchall()]
        for name in names:
            await conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(name)))
        return len(names)


async def _build(conn: Conn, name: str, definition: sql.Composable) -> None:
    """CREATE INDEX CONCURRENTLY ``name`` ``definition``, dropping a failed earlier build of it first."""
    cur = await conn.execute(
        "SELECT i.indisvalid FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid"
        " WHERE c.relname = %s", (name,),
    )
    row = await cur.fetchone()
    if row is not None and not row[0]:
        await conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(name)))
    await conn.execute(sql.SQL("CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} {definition}").format(
        name=sql.Identifier(name), definition=definition))
