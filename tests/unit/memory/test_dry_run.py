"""A dry run reads for several NPCs side by side, and still collects what the handlers would rate and embed in
the events' order (so a step's rating calls are the same as one run's); an NPC's own events stay in order."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from npcworld.contracts import Envelope, ObservationMade
from npcworld.eventstore import UnitOfWork
from services.memory.deps import MemoryDeps
from services.memory.domain import NpcRef, RatingContext
from services.memory.gathering import DraftCollector, dry_run
from tests.unit.memory.fakes import FakeImportanceRater, HashingEmbedder

T0 = datetime(2023, 2, 13, 7, tzinfo=UTC)


class _Conn:
    @contextlib.asynccontextmanager
    async def transaction(self, force_rollback: bool = False) -> AsyncIterator[None]:
        yield


class _Pool:
    def __init__(self) -> None:
        self.open = 0
        self.most = 0

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[_Conn]:
        self.open += 1
        self.most = max(self.most, self.open)
        try:
            yield _Conn()
        finally:
            self.open -= 1


def _seen(npc: str, text: str) -> Envelope:
    return Envelope.new(ObservationMade(description=text), tenant_id="t", world_id="w", world_time=T0,
                        npc_id=npc)


async def test_npcs_are_read_side_by_side_and_collected_in_the_events_order() -> None:
    events = [_seen("ann", "ann 1"), _seen("bob", "bob 1"), _seen("ann", "ann 2"), _seen("cy", "cy 1")]
    slow = {"ann 1": 0.06, "ann 2": 0.0, "bob 1": 0.03, "cy 1": 0.0}  # later events would finish first
    finished: list[str] = []

    async def handler(event: Envelope, uow: UnitOfWork, deps: MemoryDeps) -> None:
        text = event.payload.description
        await asyncio.sleep(slow[text])
        finished.append(text)
        assert isinstance(deps.rater, DraftCollector)
        npc = NpcRef("t", "w", event.npc_id or "")
        deps.rater.collect([text], RatingContext(npc, npc.npc_id, "", T0), unrated=[text])

    pool = _Pool()
    deps = MemoryDeps(embedder=HashingEmbedder(4), rater=FakeImportanceRater())
    pool_any: Any = pool
    collected = await dry_run(events, deps, pool_any, {"ObservationMade": handler}, connections=3)

    assert collected.texts == ["ann 1", "bob 1", "ann 2", "cy 1"]
    assert [r.texts for r in collected.requests] == [("ann 1",), ("bob 1",), ("ann 2",), ("cy 1",)]
    assert pool.most == 3  # three NPCs at once
    assert finished.index("ann 1") < finished.index("ann 2")  # one NPC's events one after another
    assert finished[0] == "cy 1"
