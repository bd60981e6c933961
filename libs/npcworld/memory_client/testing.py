"""``FakeMemoryReader``: an in-memory MemoryReader for other services' unit tests.

Scores with the retrieval formula of DESIGN.md "The agent model" (recency 0.995 per world hour since
last access, importance, cosine relevance, each min-max normalised over the stream, a constant component
scores 0.5, weights default 1). Relevance uses a bag-of-words vector (texts sharing words are similar)
unless an ``embed`` function is given.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from npcworld.contracts import MemoryKind
from npcworld.errors import NotFoundError, ValidationError
from npcworld.memory_client.port import MemoryPage, MemoryView, RetrievalRequest, RetrievedView

__all__ = ["FakeMemoryReader", "bag_of_words"]

_DECAY = 0.995
Vector = Sequence[float]


def bag_of_words(text: str, dims: int = 64) -> list[float]:
    """Each lower-cased word hashed into one of ``dims`` buckets (deterministic across runs)."""
    out = [0.0] * dims
    for word in text.lower().replace(".", " ").replace(",", " ").split():
        out[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % dims] += 1.0
    return out


def _cosine(a: Vector, b: Vector) -> float:
    norm = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return math.fsum(x * y for x, y in zip(a, b, strict=True)) / norm if norm > 0 else 0.0


def _normalised(values: list[float]) -> list[float]:
    low, high = min(values), max(values)
    return [0.5 if not high > low else (v - low) / (high - low) for v in values]


@dataclass
class FakeMemoryReader:
    """Memory streams held in a dict; ``retrieve`` marks what it returns accessed, like the service.

    ``retrievals`` records every request, so a test can assert what a service asked for.
    """

    embed: Callable[[str], Vector] = bag_of_words
    streams: dict[tuple[str, str, str], list[MemoryView]] = field(default_factory=dict)
    retrievals: list[RetrievalRequest] = field(default_factory=list)
    _counter: int = 0

    def add_npc(self, tenant_id: str, world_id: str, npc_id: str) -> None:
        """Make the NPC known with an empty stream (unknown NPCs raise NotFoundError)."""
        self.streams.setdefault((tenant_id, world_id, npc_id), [])

    def add(
        self, tenant_id: str, world_id: str, npc_id: str, description: str, *, created_at: datetime,
        kind: MemoryKind = "observation", importance: int = 5, **extra: object,
    ) -> MemoryView:
        """Append a memory (last access = creation) and return it; ``extra`` sets other MemoryView fields."""
        self._counter += 1
        view = MemoryView.model_validate({
            "memory_id": f"00000000-0000-7000-8000-{self._counter:012d}", "kind": kind,
            "description": description, "importance": importance, "created_at": created_at,
            "last_accessed_at": created_at, **extra,
        })
        self.streams.setdefault((tenant_id, world_id, npc_id), []).append(view)
        return view

    def _stream(self, tenant_id: str, world_id: str, npc_id: str) -> list[MemoryView]:
        stream = self.streams.get((tenant_id, world_id, npc_id))
        if stream is None:
            raise NotFoundError(f"NPC {npc_id!r} not found in world {world_id!r}")
        return stream

    async def retrieve(self, request: RetrievalRequest) -> list[RetrievedView]:
        """Top-k by the reference formula; ties break on memory id; returned memories are marked accessed."""
        self.retrievals.append(request)
        if not request.query.strip():
            raise ValidationError("query must not be empty", field="query")
        stream = self._stream(request.tenant_id, request.world_id, request.npc_id)
        if not stream:
            return []
        w, query = request.weights, self.embed(request.query)
        hours = [max((request.now - m.last_accessed_at).total_seconds() / 3600.0, 0.0) for m in stream]
        rec = _normalised([_DECAY**h for h in hours])
        imp = _normalised([float(m.importance) for m in stream])
        rel = _normalised([_cosine(self.embed(m.description), query) for m in stream])
        a_rec, a_imp, a_rel = (w.recency, w.importance, w.relevance) if w else (1.0, 1.0, 1.0)
        scored = sorted(
            ((a_rec * r + a_imp * i + a_rel * v, m.memory_id, idx, r, i, v)
             for idx, (m, r, i, v) in enumerate(zip(stream, rec, imp, rel, strict=True))),
            key=lambda s: (-s[0], s[1]),
        )[: request.k]
        out = []
        for score, _, idx, r, i, v in scored:
            accessed = max(stream[idx].last_accessed_at, request.now)
            stream[idx] = stream[idx].model_copy(update={"last_accessed_at": accessed})
            out.append(RetrievedView(**stream[idx].model_dump(), recency=r, importance_score=i,
                                     relevance=v, score=score))
        return out

    async def recent(
        self, tenant_id: str, world_id: str, npc_id: str, *, limit: int = 100,
        kinds: tuple[MemoryKind, ...] = (),
    ) -> list[MemoryView]:
        """Newest first by creation, optionally only some kinds."""
        stream = self._stream(tenant_id, world_id, npc_id)
        chosen = [m for m in stream if not kinds or m.kind in kinds]
        return sorted(chosen, key=lambda m: (m.created_at, m.memory_id), reverse=True)[:limit]

    async def list_memories(
        self, tenant_id: str, world_id: str, npc_id: str, *, limit: int = 100,
        kinds: Sequence[MemoryKind] = (), since: datetime | None = None, until: datetime | None = None,
        cursor: str | None = None,
    ) -> MemoryPage:
        """Pages of ``recent`` filtered by creation time; the cursor is the offset as text."""
        items = [m for m in await self.recent(tenant_id, world_id, npc_id, limit=10**9, kinds=tuple(kinds))
                 if (since is None or m.created_at >= since) and (until is None or m.created_at <= until)]
        start = int(cursor) if cursor and cursor.isdigit() else 0
        more = len(items) > start + limit
        return MemoryPage(items=tuple(items[start : start + limit]),
                          next_cursor=str(start + limit) if more else None)
