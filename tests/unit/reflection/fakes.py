"""Hand-written fakes of the reflection consumer's ports: the accumulator table, the event store, a queue."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from npcworld.contracts import Envelope
from services.reflection.domain import Accumulator
from services.reflection.job import ReflectionJob
from services.reflection.repository import NpcKey

__all__ = ["FakeEventStore", "FakeQueue", "FakeReflectionRepository"]


class FakeReflectionRepository:
    """Accumulators in a dict, with the same methods as ReflectionRepository (the connection is ignored)."""

    def __init__(self) -> None:
        self.rows: dict[NpcKey, tuple[Accumulator, datetime | None]] = {}
        self.names: dict[NpcKey, str] = {}

    async def lock(self, conn: Any, npc: NpcKey) -> tuple[Accumulator, datetime | None]:
        return self.rows.setdefault(npc, (Accumulator(), None))

    async def save(self, conn: Any, npc: NpcKey, acc: Accumulator, *, pending_since: datetime | None) -> None:
        self.rows[npc] = (acc, pending_since)

    async def set_name(self, conn: Any, npc: NpcKey, name: str) -> None:
        self.names[npc] = name

    async def delete_world(self, conn: Any, tenant_id: str, world_id: str) -> None:
        for npc in [n for n in self.rows if (n.tenant_id, n.world_id) == (tenant_id, world_id)]:
            del self.rows[npc]


class FakeEventStore:
    """Streams in a dict; ``append`` checks the expected version like the real store."""

    def __init__(self) -> None:
        self.streams: dict[str, list[Envelope]] = {}

    async def append(
        self, conn: Any, stream_id: str, events: Sequence[Envelope], expected_version: int | None = None
    ) -> list[int]:
        stream = self.streams.setdefault(stream_id, [])
        assert expected_version is None or expected_version == len(stream), "concurrency conflict"
        stream.extend(events)
        return list(range(len(stream) - len(events) + 1, len(stream) + 1))


class FakeQueue:
    def __init__(self) -> None:
        self.jobs: list[ReflectionJob] = []

    async def enqueue(self, job: ReflectionJob) -> None:
        self.jobs.append(job)
