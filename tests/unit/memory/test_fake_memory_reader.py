"""FakeMemoryReader, the MemoryReader other services' unit tests use, behaves like the memory service."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from npcworld.errors import NotFoundError, ValidationError
from npcworld.memory_client import RetrievalRequest, Weights
from npcworld.memory_client.testing import FakeMemoryReader

T0 = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)
IDS = ("t", "w", "isabella")


def _reader() -> FakeMemoryReader:
    reader = FakeMemoryReader()
    reader.add(*IDS, "Isabella is planning a Valentine's Day party", created_at=T0, importance=8)
    reader.add(*IDS, "the stove is idle", created_at=T0 + timedelta(hours=1), importance=1)
    reader.add(*IDS, "Klaus is reading a book", created_at=T0 + timedelta(hours=2), importance=3)
    return reader


def _request(query: str, **extra: object) -> RetrievalRequest:
    return RetrievalRequest.model_validate(
        {"tenant_id": "t", "world_id": "w", "npc_id": "isabella", "query": query, "k": 2,
         "now": T0 + timedelta(hours=5), **extra}
    )


async def test_fake_reader_scores_with_the_formula_and_marks_returned_memories_accessed() -> None:
    reader = _reader()
    found = await reader.retrieve(_request("Valentine's Day party"))
    assert found[0].description.startswith("Isabella is planning") and len(found) == 2
    assert found[0].relevance == 1.0 and found[0].importance_score == 1.0 and found[0].recency == 0.0
    assert all(r.score == pytest.approx(r.recency + r.importance_score + r.relevance) for r in found)
    recent = {m.memory_id: m.last_accessed_at for m in await reader.recent(*IDS)}
    assert all(recent[r.memory_id] == T0 + timedelta(hours=5) for r in found)
    assert reader.retrievals[0].query == "Valentine's Day party"


async def test_fake_reader_weights_change_the_ranking() -> None:
    only_recency = Weights(recency=1, importance=0, relevance=0)
    found = await _reader().retrieve(_request("party", weights=only_recency.model_dump()))
    assert found[0].description == "Klaus is reading a book"


async def test_fake_reader_rejects_unknown_npcs_and_blank_queries_like_the_service() -> None:
    reader = _reader()
    with pytest.raises(NotFoundError):
        await reader.retrieve(_request("party", npc_id="klaus"))
    with pytest.raises(ValidationError) as blank:
        await reader.retrieve(_request("   "))
    assert blank.value.field == "query"
    page = await reader.list_memories(*IDS, limit=2)
    rest = await reader.list_memories(*IDS, limit=2, cursor=page.next_cursor)
    assert next(m.description for m in page.items + rest.items) == "Klaus is reading a book"
    assert len(page.items + rest.items) == 3 and rest.next_cursor is None
