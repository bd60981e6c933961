"""Hand-written fakes for dialogue unit tests: an in-memory repository and event store."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from npcworld.contracts import Commitment, Envelope
from services.dialogue.domain import Conversation, Relationship
from services.dialogue.repository import NpcProfile

__all__ = ["FakeDialogueRepository", "FakeEventStore"]

Key = tuple[str, str]


class FakeEventStore:
    """Appended events in order, per stream."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Envelope]] = []

    async def queue_for(self, conn: Any, tenant_id: str, stream_id: str) -> None:
        """Nothing else writes here at once: no queue."""

    async def append(
        self, conn: Any, stream_id: str, events: Sequence[Envelope], expected_version: int | None = None
    ) -> list[int]:
        start = len(self.events)
        self.events += [(stream_id, e) for e in events]
        return list(range(start + 1, len(self.events) + 1))


class FakeDialogueRepository:
    """The dialogue repository's methods over dicts (the connection argument is ignored)."""

    def __init__(self) -> None:
        self.npcs: dict[tuple[str, str, str], NpcProfile] = {}
        self.places: dict[tuple[str, str, str], set[str]] = {}
        self.conversations: dict[str, tuple[Key, Conversation]] = {}
        self.relationships: dict[tuple[str, str, str, str], Relationship] = {}
        self.stepped: dict[tuple[str, str], bool] = {}
        self.requests: dict[Any, tuple[str, str, datetime, str, str, str]] = {}
        self.retired: set[tuple[str, str, str]] = set()
        self.forgotten: set[tuple[str, str]] = set()  # (tenant, player)

    async def save_npc(self, conn: Any, tenant: str, world: str, profile: NpcProfile) -> None:
        self.npcs[(tenant, world, profile.npc_id)] = profile

    async def profile(self, conn: Any, tenant: str, world: str, npc_id: str) -> NpcProfile:
        return self.npcs.get((tenant, world, npc_id), NpcProfile(npc_id, npc_id))

    async def add_intention(self, conn: Any, tenant: str, world: str, npc_id: str, text: str) -> None:
        current = self.npcs.get((tenant, world, npc_id), NpcProfile(npc_id, npc_id))
        self.npcs[(tenant, world, npc_id)] = replace(current, intentions=(*current.intentions, text)[-3:])

    async def retire(self, conn: Any, tenant: str, world: str, npc_id: str) -> None:
        self.retired.add((tenant, world, npc_id))

    async def any_retired(self, conn: Any, tenant: str, world: str, npc_ids: Sequence[str]) -> bool:
        return any((tenant, world, n) in self.retired for n in npc_ids)

    async def add_places(self, conn: Any, tenant: str, world: str, npc_id: str, paths: Sequence[str]) -> None:
        self.places.setdefault((tenant, world, npc_id), set()).update(paths)

    async def known_places(self, conn: Any, tenant: str, world: str, npc_id: str) -> list[str]:
        return sorted(self.places.get((tenant, world, npc_id), set()))

    async def add_conversation(self, conn: Any, tenant: str, world: str, c: Conversation) -> None:
        self.conversations[c.conversation_id] = ((tenant, world), c)

    async def save_conversation(self, conn: Any, c: Conversation) -> None:
        key, _ = self.conversations[c.conversation_id]
        self.conversations[c.conversation_id] = (key, c)

    async def get_conversation(
        self, conn: Any, tenant: str, world: str, conversation_id: str
    ) -> Conversation | None:
        found = self.conversations.get(conversation_id)
        return found[1] if found and found[0] == (tenant, world) else None

    async def open_conversations(
        self, conn: Any, tenant: str, world: str, npc_ids: Sequence[str]
    ) -> tuple[Conversation, ...]:
        return tuple(
            c
            for key, c in self.conversations.values()
            if key == (tenant, world) and c.ended_at is None and set(c.participants) & set(npc_ids)
        )

    async def commitments_of(
        self, conn: Any, tenant: str, world: str, npc_id: str, now: datetime
    ) -> list[Commitment]:
        return [
            line.commitment
            for key, c in self.conversations.values()
            if key == (tenant, world) and npc_id in c.participants
            for line in c.lines
            if line.commitment is not None
            and line.commitment.npc_id == npc_id
            and line.commitment.start is not None
            and line.commitment.start >= now
        ]

    async def last_ended(self, conn: Any, tenant: str, world: str, pair: tuple[str, str]) -> datetime | None:
        ends = [
            c.ended_at
            for key, c in self.conversations.values()
            if key == (tenant, world) and set(c.participants) == set(pair) and c.ended_at is not None
        ]
        return max(ends) if ends else None

    async def relationship(
        self, conn: Any, tenant: str, world: str, npc_id: str, other_id: str
    ) -> Relationship:
        return self.relationships.get((tenant, world, npc_id, other_id), Relationship(npc_id, other_id))

    async def save_relationship(
        self, conn: Any, tenant: str, world: str, rel: Relationship, at: datetime
    ) -> None:
        self.relationships[(tenant, world, rel.npc_id, rel.other_id)] = replace(rel)

    async def player_forgotten(self, conn: Any, tenant: str, player_id: str) -> bool:
        return (tenant, player_id) in self.forgotten

    async def delete_relationships(self, conn: Any, tenant: str, world: str, other_id: str) -> None:
        for key in [k for k in self.relationships if k[:2] == (tenant, world) and k[3] == other_id]:
            del self.relationships[key]

    async def set_stepped(self, conn: Any, tenant: str, world: str, stepped: bool) -> None:
        self.stepped[(tenant, world)] = stepped

    async def is_stepped(self, conn: Any, tenant: str, world: str) -> bool:
        return self.stepped.get((tenant, world), False)

    async def queue_request(
        self,
        conn: Any,
        event_id: Any,
        tenant: str,
        world: str,
        when: datetime,
        initiator: str,
        target: str,
        envelope: str,
    ) -> None:
        self.requests.setdefault(event_id, (tenant, world, when, initiator, target, envelope))

    async def peek_requests(self, conn: Any, tenant: str, world: str, before: datetime | None) -> list[Any]:
        queued = [r for r in self.requests.values()
                  if r[:2] == (tenant, world) and (before is None or r[2] < before)]
        return [json.loads(r[5]) for r in sorted(queued, key=lambda r: (r[2], r[3], r[4]))]

    async def take_requests(self, conn: Any, tenant: str, world: str, before: datetime | None) -> list[Any]:
        taken = {
            k: r
            for k, r in self.requests.items()
            if r[:2] == (tenant, world) and (before is None or r[2] < before)
        }
        for k in taken:
            del self.requests[k]
        return [json.loads(r[5]) for r in sorted(taken.values(), key=lambda r: (r[2], r[3], r[4]))]

    async def delete_world(self, conn: Any, tenant: str, world: str) -> None:
        self.conversations = {k: v for k, v in self.conversations.items() if v[0] != (tenant, world)}
