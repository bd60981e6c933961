"""SQL fragments and row mapping shared by the memory repository's queries.

Queries on ``memory_npcs`` filter on tenant, world and NPC; ``memories`` and ``memory_access`` rows carry only
``npc_key``, the stream's key for that triple (unique both ways), which callers get from ``get_npc``/
``ensure_npc`` (both filter on all three).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from psycopg import AsyncConnection

from npcworld.contracts import Envelope, envelope_from_dict
from services.memory.domain import (
    Memory,
    NpcRef,
    NpcStream,
    Provenance,
    RetrievalWeights,
    StreamStats,
    recency,
)

__all__ = ["Conn", "ScoreFloor", "drop_unused_vectors", "in_release_order", "stream_key"]

Conn = AsyncConnection[Any]


def stream_key(npc: NpcRef) -> int:
    """``npc_key`` of the NPC's stream: 63 bits of a hash of (tenant, world, npc), the same in every rebuild
    (a sequence would number streams in whatever order a rebuild met them). A collision, about 1 in 10^7 at
    a million streams, fails the insert loudly rather than mixing two streams."""
    digest = hashlib.blake2b("\x1f".join((npc.tenant_id, npc.world_id, npc.npc_id)).encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "big") >> 1


_NPC = "tenant_id = %(t)s AND world_id = %(w)s AND npc_id = %(n)s"
_STREAM = f"npc_key = %(key)s AND {_NPC}"  # a row of memory_npcs
_MEMORIES = "npc_key = %(key)s"  # a stream's rows of memories (migration 0126)
_NPC_COLUMNS = (
    "npc_key, tenant_id, world_id, npc_id, name, persona, embedding_model, embedding_dims, memory_count, "
    "own_index, in_row_vectors"
)
_MEMORY_COLUMNS = (
    "m.memory_id, m.kind, m.description, m.importance, m.created_at, a.last_accessed_at, m.location, "
    "m.subject, m.evidence, m.depth, m.source, m.told_by, m.trust"
)
_JOINED = "memories AS m JOIN memory_access AS a USING (npc_key, memory_id)"
# A memory's vector (migration 0128): its row's in a stream that keeps them there, else its world's for its
# text, found by one probe of memory_vectors' key per row (a join would let the planner hash the whole
# world's vectors for one NPC's scan). For ``memories AS m``; ``world`` is the world's key.
def _vector_of(world: str) -> str:
    return f"""coalesce(m.embedding, (
        SELECT v.embedding FROM memory_vectors AS v
        WHERE v.world_key = {world} AND v.model_key = memory_model_key(m.embedding_model)
          AND v.text_key = memory_text_key(m.description)))"""


_VECTOR = _vector_of("world_key(%(t)s, %(w)s)")  # %(t)s, %(w)s: the stream's tenant and world
# The vectors of ``given`` (description, embedding) in %(model)s's space that the world lacks.
_ADD_VECTORS = """
    INSERT INTO memory_vectors (world_key, model_key, text_key, embedding)
    SELECT DISTINCT ON (memory_text_key(g.description)) world_key(%(t)s, %(w)s), memory_model_key(%(model)s),
           memory_text_key(g.description), g.embedding::halfvec
    FROM given AS g
    ORDER BY memory_text_key(g.description)
    ON CONFLICT DO NOTHING
"""
# New memories: each text's vector joins the world's unless it has it; the rows keep theirs only when the
# stream keeps vectors in its rows (%(in_rows)s, read under the stream's lock).
_INSERT = f"""
WITH given AS MATERIALIZED (
    SELECT * FROM unnest(
        %(ids)s::uuid[], %(kinds)s::text[], %(descriptions)s::text[], %(importances)s::smallint[],
        %(created)s::timestamptz[], %(locations)s::text[], %(subjects)s::text[], %(evidence)s::text[],
        %(depths)s::int[], %(origins)s::text[], %(told_by)s::text[], %(trusts)s::text[],
        %(state_keys)s::text[], %(vectors)s::text[])
    AS m(memory_id, kind, description, importance, created_at, location, subject, evidence, depth,
         origin, told_by, trust, state_key, embedding)
), shared AS ({_ADD_VECTORS}), added AS (
    INSERT INTO memories (npc_key, embedding_model, embedding_dims,
                          source_event_id, memory_id, kind, description, importance, created_at, location,
                          subject, evidence, depth, source, told_by, trust,
                          state_hash, embedding)
    SELECT %(key)s, %(model)s, %(dims)s, %(source)s, m.memory_id, m.kind, m.description,
           m.importance, m.created_at, m.location, m.subject, m.evidence::uuid[], m.depth, m.origin,
           m.told_by, m.trust, memory_state_hash(m.state_key),
           CASE WHEN %(in_rows)s THEN m.embedding::halfvec END
    FROM given AS m
    ON CONFLICT (npc_key, memory_id) DO NOTHING
    RETURNING memory_id, importance, created_at
)
INSERT INTO memory_access (memory_id, npc_key, importance, last_accessed_at)
SELECT memory_id, %(key)s, importance, created_at FROM added
"""
# A stream that is to keep its vectors in its rows (for an index of its own) takes them from its world's.
_MATERIALISE = f"""
UPDATE memories AS m SET embedding = {_vector_of("world_key(n.tenant_id, n.world_id)")}
FROM memory_npcs AS n
WHERE n.npc_key = m.npc_key AND m.npc_key = ANY(%(keys)s::bigint[]) AND m.embedding IS NULL
"""
# Vectors of these texts that no memory of the world uses any more.
_UNUSED_VECTORS = """
DELETE FROM memory_vectors AS v
WHERE v.world_key = world_key(%(t)s, %(w)s)
  AND v.text_key IN (SELECT memory_text_key(x) FROM unnest(%(texts)s::text[]) AS x)
  AND NOT EXISTS (SELECT 1 FROM memories AS m JOIN memory_npcs AS n USING (npc_key)
                  WHERE n.tenant_id = %(t)s AND n.world_id = %(w)s
                    AND memory_text_key(m.description) = v.text_key
                    AND memory_model_key(m.embedding_model) = v.model_key)
"""
# Exact retrieval: one scan of the stream computes every raw component, the stream-wide min/max and the
# weighted score; the expressions mirror domain.scoring term for term so both round the same way.
_EXACT = f"""
WITH similarity AS MATERIALIZED (
    SELECT m.memory_id, 1 - ({_VECTOR} <=> %(q)s::halfvec) AS rel
    FROM memories AS m WHERE m.{_MEMORIES}
), base AS MATERIALIZED (
    SELECT s.memory_id, a.importance::float8 AS imp, s.rel,
           power(0.995::float8, greatest(
               extract(epoch FROM (%(now)s::timestamptz - a.last_accessed_at))::float8 / 3600.0, 0.0)) AS rec
    FROM similarity AS s JOIN memory_access AS a ON a.npc_key = %(key)s AND a.memory_id = s.memory_id
), stats AS MATERIALIZED (
    SELECT min(imp) AS imp_lo, max(imp) AS imp_hi, min(rec) AS rec_lo, max(rec) AS rec_hi,
           min(rel) AS rel_lo, max(rel) AS rel_hi FROM base
), normalised AS (
    SELECT memory_id,
           CASE WHEN rec_hi > rec_lo THEN least(greatest((rec - rec_lo) / (rec_hi - rec_lo), 0), 1)
                ELSE 0.5 END AS rec,
           CASE WHEN imp_hi > imp_lo THEN least(greatest((imp - imp_lo) / (imp_hi - imp_lo), 0), 1)
                ELSE 0.5 END AS imp,
           CASE WHEN rel_hi > rel_lo THEN least(greatest((rel - rel_lo) / (rel_hi - rel_lo), 0), 1)
                ELSE 0.5 END AS rel
    FROM base CROSS JOIN stats
)
SELECT memory_id::text, %(wrec)s * rec + %(wimp)s * imp + %(wrel)s * rel AS score, rec, imp, rel
FROM normalised ORDER BY score DESC, memory_id LIMIT %(k)s
"""


# Index-path candidates by importance + recency: one index range of memory_access per importance level (the
# accesses recent enough to matter), exact cosines for those rows only, and only rows that can still reach the
# k-th best score found so far. The normalisation mirrors domain.scoring; Python rescores what comes back.
_NORM = "CASE WHEN {hi} > {lo} THEN least(greatest(({x} - {lo}) / ({hi} - {lo}), 0), 1) ELSE 0.5 END"
_RECENCY = (
    "power(0.995::float8, greatest(extract(epoch FROM (%(now)s::timestamptz - {t}))::float8 / 3600.0, 0.0))"
)
_PRIOR = f"""
SELECT c.memory_id::text, c.importance, c.last_accessed_at, c.rel FROM (
    SELECT a.memory_id, a.importance, a.last_accessed_at, 1 - ({_VECTOR} <=> %(q)s::halfvec) AS rel,
           {_RECENCY.format(t="a.last_accessed_at")} AS rec
    FROM unnest(%(levels)s::int[], %(since)s::timestamptz[]) AS l(importance, since)
    CROSS JOIN LATERAL (
        SELECT memory_id, importance, last_accessed_at FROM memory_access
        WHERE npc_key = %(key)s AND importance = l.importance AND last_accessed_at >= l.since
        ORDER BY last_accessed_at DESC LIMIT %(cap)s) AS a
    JOIN memories AS m ON m.npc_key = %(key)s AND m.memory_id = a.memory_id
    WHERE a.memory_id <> ALL(%(exclude)s::uuid[])
) AS c
WHERE %(wimp)s * {_NORM.format(x="c.importance::float8", lo="%(ilo)s", hi="%(ihi)s")}
    + %(wrec)s * {_NORM.format(x="c.rec", lo="%(reclo)s", hi="%(rechi)s")}
    + %(wrel)s * {_NORM.format(x="c.rel", lo="%(rello)s", hi="%(relhi)s")} >= %(floor)s
"""


# The ``top`` memories by importance + recency alone (the prior), from the ``top`` most recent of each
# importance level (index-only), with exact cosines: they make the k-th best score a tight bar early.
_TOP_PRIOR = f"""
WITH r AS MATERIALIZED (
    SELECT min(importance)::float8 AS ilo, max(importance)::float8 AS ihi,
           {_RECENCY.format(t="min(last_accessed_at)")} AS reclo,
           {_RECENCY.format(t="max(last_accessed_at)")} AS rechi
    FROM memory_access WHERE npc_key = %(key)s
)
SELECT c.memory_id::text, c.importance, c.last_accessed_at, 1 - ({_VECTOR} <=> %(q)s::halfvec) FROM (
    SELECT a.memory_id, a.importance, a.last_accessed_at
    FROM r CROSS JOIN generate_series(r.ilo::int, r.ihi::int) AS l(importance) CROSS JOIN LATERAL (
        SELECT memory_id, importance, last_accessed_at FROM memory_access
        WHERE npc_key = %(key)s AND importance = l.importance
        ORDER BY last_accessed_at DESC LIMIT %(top)s) AS a
    ORDER BY %(wimp)s * {_NORM.format(x="a.importance::float8", lo="r.ilo", hi="r.ihi")}
        + %(wrec)s * {_NORM.format(x=_RECENCY.format(t="a.last_accessed_at"), lo="r.reclo", hi="r.rechi")}
        DESC, a.memory_id
    LIMIT %(top)s
) AS c JOIN memories AS m ON m.npc_key = %(key)s AND m.memory_id = c.memory_id
"""


@dataclass(frozen=True)
class ScoreFloor:
    """What the prior-list query needs to drop rows that cannot reach the k-th best score."""

    floor: float
    now: datetime
    stats: StreamStats
    weights: RetrievalWeights
    exclude: tuple[str, ...]
    cap: int

    def sql_params(self) -> dict[str, float]:
        s, w = self.stats, self.weights
        return {
            "wimp": w.importance, "wrec": w.recency, "wrel": w.relevance,
            "ilo": s.importance_min, "ihi": s.importance_max,
            "reclo": recency(self.now, s.accessed_min), "rechi": recency(self.now, s.accessed_max),
            "rello": s.relevance_min, "relhi": s.relevance_max,
        }


async def drop_unused_vectors(conn: Conn, tenant_id: str, world_id: str, texts: Sequence[str]) -> None:
    """Delete the world's vectors of these texts that no memory of the world uses any more (after memories
    were deleted or their text changed): a forgotten text leaves nothing derived from it behind."""
    if texts:
        await conn.execute(_UNUSED_VECTORS, {"t": tenant_id, "w": world_id, "texts": list(texts)})


def _vector(v: npt.NDArray[np.float32]) -> str:
    # 9 significant digits round-trip every float32 exactly.
    return "[" + ",".join(f"{x:.9g}" for x in v.tolist()) + "]"


def _params(stream: NpcStream, **extra: Any) -> dict[str, Any]:
    npc = stream.npc
    return {"key": stream.key, "t": npc.tenant_id, "w": npc.world_id, "n": npc.npc_id, **extra}


def _stream(row: dict[str, Any]) -> NpcStream:
    npc = NpcRef(row["tenant_id"], row["world_id"], row["npc_id"])
    return NpcStream(
        row["npc_key"],
        npc,
        row["name"],
        row["persona"],
        row["embedding_model"],
        row["embedding_dims"],
        row["memory_count"],
        row["own_index"],
        row["in_row_vectors"],
    )


def _memory(npc: NpcRef, row: dict[str, Any]) -> Memory:
    return Memory(
        memory_id=str(row["memory_id"]),
        npc=npc,
        kind=row["kind"],
        description=row["description"],
        importance=row["importance"],
        created_at=row["created_at"],
        last_accessed_at=row["last_accessed_at"],
        location=row["location"],
        subject=row["subject"],
        evidence=tuple(str(e) for e in row["evidence"]),
        depth=row["depth"],
        provenance=Provenance(row["source"], row["told_by"], row["trust"]),
    )


def in_release_order(rows: Sequence[Any]) -> list[Envelope]:
    """Held rows ``(world_time, npc_id, type, id, envelope)`` as events in the fixed release order: world
    time, NPC, type, arrival."""
    return [envelope_from_dict(r[4]) for r in sorted(rows, key=lambda r: (r[0], r[1], r[2], r[3]))]
